import type { Logger } from '../common/log';
import { DatabaseUnavailableError } from '../eventstore/unavailable';
import type { VoidCommand } from './commands/void-charge';

export interface RefundRetrierOptions {
  /** First wait after a failed attempt, then doubling up to `maxDelayMs` (defaults 100 ms, 1 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Past this many waiting, new ones are left to the abandoned-charge sweeper (default 100,000). */
  maxPending?: number;
}

/**
 * Refunds owed at once but not writable now because the database is out of reach. Each is retried
 * with backoff until it commits, so callers are refunded within about a second of the database
 * answering again, by this instance. If the process dies first, the abandoned-charge sweeper of
 * any instance refunds them later; every attempt is safe to repeat.
 */
export class RefundRetrier {
  private readonly pending = new Map<string, VoidCommand>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly attempt: (cmd: VoidCommand) => Promise<unknown>,
    private readonly log: Logger,
    private readonly options: RefundRetrierOptions = {},
  ) {}

  /** How many refunds are still waiting for the database. */
  get size(): number {
    return this.pending.size;
  }

  add(cmd: VoidCommand): void {
    if (this.pending.has(cmd.requestId)) return;
    if (this.stopped || this.pending.size >= (this.options.maxPending ?? 100_000)) {
      this.log.error({ request_id: cmd.requestId, workspace_id: cmd.workspaceId }, 'refund not retried here; the abandoned-charge sweeper will make it');
      return;
    }
    this.pending.set(cmd.requestId, cmd);
    this.schedule();
  }

  /** Shutdown: a last round of attempts (bounded), then whatever is left is the sweeper's. */
  async stop(timeoutMs = 5_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline) {
      await this.runOnce();
      if (this.pending.size > 0) await new Promise((r) => setTimeout(r, this.delayMs()));
    }
    if (this.pending.size > 0) {
      this.log.warn({ pending: this.pending.size }, 'stopping with refunds unwritten; the abandoned-charge sweeper will make them');
    }
  }

  private delayMs(): number {
    const initial = this.options.initialDelayMs ?? 100;
    return this.failures === 0 ? 0 : Math.min(this.options.maxDelayMs ?? 1_000, initial * 2 ** (this.failures - 1));
  }

  private schedule(): void {
    if (this.stopped || this.timer || this.running || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.runOnce().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.delayMs());
    // Pending refunds alone do not keep the process up: the sweeper is the backstop.
    this.timer.unref();
  }

  /** One probe; once it goes through, the database is back and the rest go together. */
  private async runOnce(): Promise<void> {
    const [first, ...rest] = this.pending.values();
    if (!first) return;
    if (!(await this.tryOne(first))) return;
    const results = await Promise.all(rest.map((cmd) => this.tryOne(cmd)));
    if (results.every(Boolean) && this.pending.size === 0) this.log.info({ refunded: rest.length + 1 }, 'refunds owed during the database outage are written');
  }

  /** False when the database is still unavailable (the refund stays pending). */
  private async tryOne(cmd: VoidCommand): Promise<boolean> {
    try {
      await this.attempt(cmd);
      this.pending.delete(cmd.requestId);
      this.failures = 0;
      return true;
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) {
        this.failures += 1;
        if (this.failures === 1 || this.failures % 50 === 0) {
          this.log.warn({ err, pending: this.pending.size, attempts: this.failures }, 'refunds wait for the database');
        }
        return false;
      }
      // Not an outage: retrying would fail alike. The sweeper looks at the charge again later.
      this.pending.delete(cmd.requestId);
      this.log.error({ err, request_id: cmd.requestId, workspace_id: cmd.workspaceId }, 'refund failed; left to the abandoned-charge sweeper');
      return true;
    }
  }
}
