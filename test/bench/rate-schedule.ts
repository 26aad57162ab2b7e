// Pure helpers of the benchmarks' latency figures: a fixed-rate arrival schedule (open-loop load)
// and percentiles. No I/O here, so test/unit/bench covers them without a server.

/** Requests of a schedule at `ratePerSecond` for `seconds` (the last arrival before the end). */
export function scheduledTotal(ratePerSecond: number, seconds: number): number {
  if (!(ratePerSecond > 0) || !(seconds > 0)) throw new RangeError(`a schedule needs a positive rate and duration, got ${ratePerSecond}/s for ${seconds} s`);
  return Math.round(ratePerSecond * seconds);
}

/** When arrival `index` (from 0) is due, in ms after the schedule's start: evenly spaced, the first at 0. */
export function arrivalMs(index: number, ratePerSecond: number): number {
  return (index * 1000) / ratePerSecond;
}

/**
 * How many arrivals are due `elapsedMs` after the start, at most `total`. The generator sends every
 * due arrival at each tick, whatever is still in flight: that is what makes the load open-loop.
 */
export function dueArrivals(ratePerSecond: number, elapsedMs: number, total: number): number {
  if (elapsedMs < 0) return 0;
  // The small epsilon keeps an arrival due exactly at its own instant despite floating-point error (3 × 1000/3).
  return Math.min(total, Math.floor((elapsedMs * ratePerSecond) / 1000 + 1e-9) + 1);
}

/** Nearest-rank percentile of ascending `sorted` values (NaN when empty): the value at rank ⌈p·n⌉. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** p50, p90, p99 and max of latencies in any order (the array is not changed). */
export function summarize(latencies: readonly number[]): LatencySummary {
  // A typed array sorts numerically (an Array's sort compares strings).
  const sorted = Float64Array.from(latencies).sort();
  return { count: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN };
}
