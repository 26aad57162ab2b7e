import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../../services/limits/rate-limiter-memory';
import { takeToken, takeTokens, UNITS_PER_TOKEN, type BucketState } from '../../../services/limits/token-bucket';

const perMinuteArb = fc.integer({ min: 1, max: 100_000 });
/** Gaps in ms between successive requests. */
const gapsArb = fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 300 });

function run(perMinute: number, gaps: number[]) {
  let state: BucketState | undefined;
  let now = 0;
  return gaps.map((gap) => {
    now += gap;
    const d = takeToken(state, now, perMinute);
    state = d.state;
    return { ...d, now };
  });
}

describe('token bucket arithmetic', () => {
  it('never allows more than the capacity plus what refilled since the first request', () => {
    fc.assert(
      fc.property(perMinuteArb, gapsArb, (perMinute, gaps) => {
        const ds = run(perMinute, gaps);
        const span = ds[ds.length - 1].now - ds[0].now;
        const allowed = ds.filter((d) => d.allowed).length;
        expect(allowed).toBeLessThanOrEqual(perMinute + Math.floor((span * perMinute) / 60_000));
      }),
    );
  });

  it('never refuses a caller who stays at or under the refill rate', () => {
    fc.assert(
      fc.property(perMinuteArb, fc.integer({ min: 1, max: 300 }), (perMinute, n) => {
        const gap = Math.ceil(60_000 / perMinute);
        expect(run(perMinute, Array(n).fill(gap)).every((d) => d.allowed)).toBe(true);
      }),
    );
  });

  it('headers stay within their bounds and agree with each other', () => {
    fc.assert(
      fc.property(perMinuteArb, gapsArb, (perMinute, gaps) => {
        for (const d of run(perMinute, gaps)) {
          expect(d.limit).toBe(perMinute);
          expect(d.remaining).toBeGreaterThanOrEqual(0);
          expect(d.remaining).toBeLessThanOrEqual(perMinute - 1);
          expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
          expect(d.resetSeconds).toBeLessThanOrEqual(60);
          if (d.allowed) expect(d.retryAfterSeconds).toBe(0);
          else {
            expect(d.remaining).toBe(0);
            expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
            expect(d.retryAfterSeconds).toBeLessThanOrEqual(Math.ceil(60 / perMinute));
            expect(d.retryAfterSeconds).toBeLessThanOrEqual(d.resetSeconds);
          }
          expect(Number.isInteger(d.state.level)).toBe(true);
        }
      }),
    );
  });

  it('a refused caller who waits retry-after seconds is allowed', () => {
    fc.assert(
      fc.property(perMinuteArb, gapsArb, (perMinute, gaps) => {
        const ds = run(perMinute, gaps);
        const last = ds[ds.length - 1];
        if (last.allowed) return;
        expect(takeToken(last.state, last.now + last.retryAfterSeconds * 1000, perMinute).allowed).toBe(true);
      }),
    );
  });

  it('works in integer token units: 600/min refills half a token in 50 ms', () => {
    const start = takeToken(undefined, 0, 600);
    expect(start.state.level).toBe(599 * UNITS_PER_TOKEN);
    const drained = takeToken({ level: 0, atMs: 0 }, 50, 600);
    expect(drained).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1, resetSeconds: 60 });
    expect(drained.state.level).toBe(UNITS_PER_TOKEN / 2);
    expect(drained.fullInMs).toBe(59_950);
  });

  it('a clock stepping backwards refills nothing', () => {
    const d = takeToken({ level: UNITS_PER_TOKEN, atMs: 10_000 }, 5_000, 60);
    expect(d).toMatchObject({ allowed: true, remaining: 0 });
    expect(d.state.level).toBe(0);
  });
});

describe('takeTokens: several tokens at once', () => {
  it('given any bucket, when n tokens are asked for at one instant, then it grants and leaves what n single takes would', () => {
    fc.assert(
      fc.property(perMinuteArb, fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 100 }), (perMinute, used, wanted) => {
        const start: BucketState = { level: Math.max(0, perMinute - used) * UNITS_PER_TOKEN, atMs: 0 };
        const many = takeTokens(start, 0, perMinute, wanted);
        let state = start;
        let granted = 0;
        for (let i = 0; i < wanted; i++) {
          const one = takeToken(state, 0, perMinute);
          if (one.allowed) granted++;
          state = one.state;
        }
        expect(many.granted).toBe(granted);
        expect(many.state).toEqual(state);
        expect(many.allowed).toBe(granted === wanted);
      }),
    );
  });

  it('given 2 tokens left, when 5 are asked for, then 2 are granted and retry-after is the wait for one more', () => {
    const d = takeTokens({ level: 2 * UNITS_PER_TOKEN, atMs: 0 }, 0, 6, 5);
    expect(d).toMatchObject({ allowed: false, granted: 2, remaining: 0, retryAfterSeconds: 10, resetSeconds: 60 });
  });
});

describe('in-process rate limiter memory', () => {
  it('forgets buckets that have refilled completely', async () => {
    let now = 0;
    const limiter = createMemoryRateLimiter(() => now, { sweepEveryMs: 10_000 });
    for (let i = 0; i < 500; i++) await limiter.take(`k${i}`, 60);
    expect(limiter.bucketCount()).toBe(500);
    now += 10_000; // long past full (each bucket lacked one token: 1 s)
    await limiter.take('drained', 1);
    expect(limiter.bucketCount()).toBe(1);
    now += 10_000; // the 1/min bucket still lacks its token, so it is kept
    await limiter.take('other', 60);
    expect(limiter.bucketCount()).toBe(2);
  });

  it('keeps at most maxBuckets, dropping the least recently used', async () => {
    const now = 0;
    const limiter = createMemoryRateLimiter(() => now, { maxBuckets: 2 });
    await limiter.take('a', 1);
    expect((await limiter.take('a', 1)).allowed).toBe(false);
    await limiter.take('b', 1);
    await limiter.take('c', 1);
    expect(limiter.bucketCount()).toBe(2);
    expect((await limiter.take('a', 1)).allowed).toBe(true); // 'a' was dropped, so it is full again
  });
});
