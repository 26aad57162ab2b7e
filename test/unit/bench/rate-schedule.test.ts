import { describe, expect, it } from 'vitest';
import { arrivalMs, dueArrivals, percentile, scheduledTotal, summarize } from '../../bench/rate-schedule';

describe('a fixed-rate arrival schedule (open-loop load)', () => {
  it('given 1,000 req/s for 2.5 s, when counted, then 2,500 requests are scheduled, 1 ms apart from 0', () => {
    expect(scheduledTotal(1000, 2.5)).toBe(2500);
    expect(arrivalMs(0, 1000)).toBe(0);
    expect(arrivalMs(1, 1000)).toBe(1);
    expect(arrivalMs(2499, 1000)).toBe(2499);
  });

  it('given 250 req/s, when asked what is due, then the first arrival is due at once and one more every 4 ms', () => {
    expect(dueArrivals(250, 0, 1000)).toBe(1);
    expect(dueArrivals(250, 3.99, 1000)).toBe(1);
    expect(dueArrivals(250, 4, 1000)).toBe(2);
    expect(dueArrivals(250, 100, 1000)).toBe(26);
  });

  it('given a rate whose spacing is not exact in binary (3 req/s), when asked at an arrival\'s own instant, then that arrival is due', () => {
    expect(dueArrivals(3, arrivalMs(3, 3), 100)).toBe(4);
  });

  it('given a tick late by seconds, when asked, then everything due is sent together and never more than scheduled', () => {
    expect(dueArrivals(4000, 10_000, 8000)).toBe(8000);
    expect(dueArrivals(4000, -1, 8000)).toBe(0);
  });

  it('given no rate or no duration, when scheduled, then it refuses', () => {
    expect(() => scheduledTotal(0, 5)).toThrow(RangeError);
    expect(() => scheduledTotal(1000, 0)).toThrow(RangeError);
  });
});

describe('latency percentiles', () => {
  it('given 1..100, when the nearest-rank percentiles are taken, then p50 is 50, p99 is 99 and p100 is 100', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile(sorted, 0)).toBe(1);
  });

  it('given no value, when a percentile is taken, then it is NaN', () => {
    expect(percentile([], 99)).toBeNaN();
    expect(summarize([]).max).toBeNaN();
  });

  it('given latencies out of order with values of different digit counts, when summarized, then they are sorted as numbers and the input is left alone', () => {
    const latencies = [10, 9, 100, 2, 1.5];
    const s = summarize(latencies);
    expect(s).toEqual({ count: 5, p50: 9, p90: 100, p99: 100, max: 100 });
    expect(latencies).toEqual([10, 9, 100, 2, 1.5]);
  });
});
