import type pg from 'pg';
import { DeadlineTicker } from '../common/deadline-ticker';
import type { Logger } from '../common/log';
import { recordStatementTimeout } from '../metrics/metrics';

/** What a statement left unanswered fails with: pg's own wording for its `query_timeout` (unavailable.ts knows it). */
export const STATEMENT_TIMEOUT_MESSAGE = 'Query read timeout';

/** A connection pg can be made to drop: its socket, destroyed, fails the statement in flight. */
type Watched = pg.ClientBase & { connection?: { stream?: { destroy(error?: Error): void } } };

/**
 * The bound on a statement the server leaves unanswered: past `timeoutMs` its connection is
 * destroyed, so the statement fails as an outage (503) and the connection is not used again.
 * Instead of pg's `query_timeout`, a timer per statement (DeadlineTicker says why).
 */
export class StatementWatchdog {
  private readonly deadlines: DeadlineTicker<Watched>;

  constructor(timeoutMs: number, log: Logger) {
    this.deadlines = new DeadlineTicker<Watched>(timeoutMs, (client) => {
      recordStatementTimeout();
      log.warn({ timeout_ms: timeoutMs }, 'a statement went unanswered past DATABASE_QUERY_TIMEOUT_MS; its connection is closed');
      client.connection?.stream?.destroy(new Error(STATEMENT_TIMEOUT_MESSAGE));
    });
  }

  /** Runs `statement` on `client`, its connection destroyed if it goes unanswered past the bound. */
  async run<T>(client: pg.ClientBase, statement: () => Promise<T>): Promise<T> {
    this.deadlines.begin(client);
    try {
      return await statement();
    } finally {
      this.deadlines.end(client);
    }
  }

  stop(): void {
    this.deadlines.stop();
  }
}
