/**
 * Deadlines for calls to a server that may stop answering (frozen, or cut off without a reset),
 * kept by one interval instead of a timer per call. The timers of pg's `query_timeout` and ioredis'
 * `commandTimeout` cost the service 4–10 % of its CPU per hit, and kept each call's objects alive
 * into V8's old generation (docs/performance.md, "GC pauses").
 *
 * Calls are timed in ticks of at most a twentieth of the bound: `onExpired` runs for a call still
 * pending between `timeoutMs` and `timeoutMs` + two ticks after it began, never before, once.
 */
export class DeadlineTicker<K> {
  /** Each pending call and the tick it began in (a small integer: nothing allocated per call). */
  private readonly pending = new Map<K, number>();
  private readonly tickMs: number;
  private readonly ticksAllowed: number;
  private tick = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly onExpired: (key: K) => void,
  ) {
    this.tickMs = Math.max(5, Math.min(250, Math.floor(timeoutMs / 20)));
    // A call that began just before a tick is counted from that tick: one tick more, so none expires early.
    this.ticksAllowed = Math.ceil(timeoutMs / this.tickMs) + 1;
  }

  begin(key: K): void {
    this.pending.set(key, this.tick);
    // Started once and kept: re-arming a timer whenever the calls come and go is what this avoids.
    this.timer ??= setInterval(() => this.check(), this.tickMs).unref();
  }

  /** The call answered (or failed) by itself; calling it again, or after it expired, does nothing. */
  end(key: K): void {
    this.pending.delete(key);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    this.tick++;
    for (const [key, began] of this.pending) {
      if (this.tick - began < this.ticksAllowed) continue;
      this.pending.delete(key);
      this.onExpired(key);
    }
  }
}
