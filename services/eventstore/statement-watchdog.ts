import type pg from 'pg';
import type { Logger } from '../common/log';
import { recordStatementTimeout } from '../metrics/metrics';

/** What a statement left unanswered fails with: pg's own wording for its `query_timeout` (unavailable.ts knows it). */
export const STATEMENT_TIMEOUT_MESSAGE = 'Query read timeout';

/** A connection pg can be made to drop: its socket, destroyed, fails the statement in flight. */
type Watched = pg.ClientBase & { connection?: { stream?: { destroy(error?: Error): void } } };

/**
 * The bound on a statement the server leaves unanswered (frozen, or cut off without a reset):
 * past `timeoutMs` its connection is destroyed, so the statement fails as an outage (503) and the
 * connection is not used again. One interval for every connection, instead of pg's
 * `query_timeout`, which arms a timer per statement: at 1,000 cache hits a second those timers
 * kept each statement's objects alive into V8's old generation, and doubled the young
 * generation's pauses (docs/performance.md, "GC pauses").
 *
 * Statements are timed in ticks of at most a twentieth of the bound: one fails between
 * `timeoutMs` and `timeoutMs` + two ticks after it was sent, never before.
 */
export class StatementWatchdog {
  /** Each connection with a statement in flight, and the tick it was sent in (a small integer: no allocation per statement). */
  private readonly inFlight = new Map<Watched, number>();
  private readonly tickMs: number;
  private readonly ticksAllowed: number;
  private tick = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {
    this.tickMs = Math.max(5, Math.min(250, Math.floor(timeoutMs / 20)));
    // A statement sent just before a tick is counted from that tick: one tick more, so none fails early.
    this.ticksAllowed = Math.ceil(timeoutMs / this.tickMs) + 1;
    this.timer = setInterval(() => this.check(), this.tickMs).unref();
  }

  /** Runs `statement` on `client`, its connection destroyed if it goes unanswered past the bound. */
  async run<T>(client: pg.ClientBase, statement: () => Promise<T>): Promise<T> {
    this.inFlight.set(client, this.tick);
    try {
      return await statement();
    } finally {
      this.inFlight.delete(client);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    this.tick++;
    for (const [client, sentAt] of this.inFlight) {
      if (this.tick - sentAt < this.ticksAllowed) continue;
      this.inFlight.delete(client);
      recordStatementTimeout();
      this.log.warn({ timeout_ms: this.timeoutMs }, 'a statement went unanswered past DATABASE_QUERY_TIMEOUT_MS; its connection is closed');
      client.connection?.stream?.destroy(new Error(STATEMENT_TIMEOUT_MESSAGE));
    }
  }
}
