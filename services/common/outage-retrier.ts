import type { Logger } from './log';

/** What an OutageRetrier retries and how it speaks of it: its lines are in the caller's words. */
export interface OutageRetrierSetup<T> {
  /** One pending item per id: adding the same id again while it waits is a no-op. */
  idOf: (item: T) => string;
  /** Writes the item; safe to repeat. */
  attempt: (item: T) => Promise<unknown>;
  /** True for a failure that means "not now" (the item stays pending); any other drops the item. */
  isOutage: (err: unknown) => boolean;
  logger: Logger;
  /** The fields that name an item in the lines about it. */
  fieldsOf: (item: T) => object;
  messages: {
    /** Error: an item not taken (too many pending, or stopping), so not retried here. */
    notTaken: string;
    /** Warn: attempts fail with the outage (the first failure of a run, then every 50th). */
    waiting: string;
    /** Info: everything pending went through once the outage ended. */
    caughtUp: string;
    /** Error: an attempt failed otherwise than with the outage; the item is dropped. */
    failed: string;
    /** Warn: stop's last round left items pending. */
    stoppedWithPending: string;
  };
}

export interface OutageRetrierOptions {
  /** First wait after a failed attempt, then doubling up to `maxDelayMs` (defaults 100 ms, 1 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Past this many waiting, new ones are not taken (default 100,000). */
  maxPending?: number;
}

/**
 * Writes owed at once but not possible now because a dependency is out of reach. Each is retried
 * with backoff until it goes through, so it is written within about a second of the dependency
 * answering again, by this instance; if the process dies first, the caller's backstop (a sweeper,
 * a lapsing lock) must cover it.
 */
export class OutageRetrier<T> {
  private readonly pending = new Map<string, T>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly setup: OutageRetrierSetup<T>,
    private readonly options: OutageRetrierOptions = {},
  ) {}

  /** How many items are still waiting. */
  get size(): number {
    return this.pending.size;
  }

  add(item: T): void {
    const id = this.setup.idOf(item);
    if (this.pending.has(id)) return;
    if (this.stopped || this.pending.size >= (this.options.maxPending ?? 100_000)) {
      this.setup.logger.error(this.setup.fieldsOf(item), this.setup.messages.notTaken);
      return;
    }
    this.pending.set(id, item);
    this.schedule();
  }

  /** Shutdown: a last round of attempts (bounded), then whatever is left is the backstop's. */
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
    if (this.pending.size > 0) this.setup.logger.warn({ pending: this.pending.size }, this.setup.messages.stoppedWithPending);
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
    // Pending items alone do not keep the process up: the caller's backstop covers them.
    this.timer.unref();
  }

  /** One probe; once it goes through, the outage is over and the rest go together. */
  private async runOnce(): Promise<void> {
    const [first, ...rest] = this.pending.values();
    if (!first) return;
    if (!(await this.tryOne(first))) return;
    const results = await Promise.all(rest.map((item) => this.tryOne(item)));
    if (results.every(Boolean) && this.pending.size === 0) this.setup.logger.info({ written: rest.length + 1 }, this.setup.messages.caughtUp);
  }

  /** False when the outage goes on (the item stays pending). */
  private async tryOne(item: T): Promise<boolean> {
    try {
      await this.setup.attempt(item);
      this.pending.delete(this.setup.idOf(item));
      this.failures = 0;
      return true;
    } catch (err) {
      if (this.setup.isOutage(err)) {
        this.failures += 1;
        if (this.failures === 1 || this.failures % 50 === 0) {
          this.setup.logger.warn({ err, pending: this.pending.size, attempts: this.failures }, this.setup.messages.waiting);
        }
        return false;
      }
      // Not an outage: retrying would fail alike.
      this.pending.delete(this.setup.idOf(item));
      this.setup.logger.error({ err, ...this.setup.fieldsOf(item) }, this.setup.messages.failed);
      return true;
    }
  }
}
