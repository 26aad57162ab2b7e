import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/**
 * Says when the process is too busy to take new lookups: event-loop delay past a bound, or too
 * many requests in flight. Refusing early (503 no_capacity, before any charge) keeps the
 * requests already admitted fast.
 */
export class LoadShedder {
  private inFlight = 0;
  private readonly histogram: IntervalHistogram;
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

  enter(): void {
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
  }

  overloaded(): boolean {
    return this.inFlight > this.bounds.maxInFlight || this.delayMs > this.bounds.maxEventLoopDelayMs;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
