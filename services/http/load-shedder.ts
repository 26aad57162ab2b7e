import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';

/**
 * Says when the process is too busy to take new lookups: event-loop delay past a bound, or too
 * many requests in flight. Refusing early (503 no_capacity, before any charge) keeps the
 * requests already admitted fast.
 */
export class LoadShedder {
  private inFlight = 0;
  private readonly histogram: ELDHistogram;
  private delayMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly bounds: { maxEventLoopDelayMs: number; maxInFlight: number }) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.timer = setInterval(() => {
      // p99 of the last second, in ms: one slow tick does not shed, a saturated loop does.
      this.delayMs = this.histogram.percentile(99) / 1e6;
      this.histogram.reset();
    }, 1000);
    this.timer.unref();
  }

  /**
   * Admits one more request unless that would pass either bound; the caller must leave() after an
   * admission. Checking and counting in one step: requests arriving together cannot all slip in.
   */
  tryEnter(): boolean {
    if (this.inFlight >= this.bounds.maxInFlight || this.delayMs > this.bounds.maxEventLoopDelayMs) return false;
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
