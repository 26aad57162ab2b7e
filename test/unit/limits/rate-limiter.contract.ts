import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../../services/limits/rate-limiter';

/**
 * One behavioural contract for every RateLimiter adapter. Time steps land on whole-second
 * boundaries so a real clock, which always runs a little past `advance(ms)`, rounds (floor for
 * remaining, ceil for seconds) to the same numbers as an exact fake clock.
 */
export interface RateLimiterHarness {
  limiter: RateLimiter;
  /** Lets at least `ms` pass on the limiter's clock. */
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

export function rateLimiterContract(open: () => Promise<RateLimiterHarness>): void {
  let h: RateLimiterHarness;
  // Fresh keys per test so runs (and adapters on one Redis) never share a bucket.
  const key = (name: string) => `${name}-${randomUUID()}`;
  const takeN = async (bucket: string, perMinute: number, n: number) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await h.limiter.take(bucket, perMinute));
    return out;
  };

  beforeEach(async () => {
    h = await open();
  });
  afterEach(async () => {
    await h.close();
  });

  it('a fresh bucket allows and reports limit, whole tokens left and seconds until full', async () => {
    const d = await h.limiter.take(key('fresh'), 10);
    // 10/min refills one token every 6 s: one token short of full is 6 s.
    expect(d).toEqual({ allowed: true, limit: 10, remaining: 9, resetSeconds: 6, retryAfterSeconds: 0 });
  });

  it('each request takes one token; reset grows by the refill time of one token', async () => {
    const ds = await takeN(key('drain'), 10, 4);
    expect(ds.map((d) => d.remaining)).toEqual([9, 8, 7, 6]);
    expect(ds.map((d) => d.resetSeconds)).toEqual([6, 12, 18, 24]);
    expect(ds.every((d) => d.allowed && d.limit === 10 && d.retryAfterSeconds === 0)).toBe(true);
  });

  it('refuses once the bucket is empty, with retry-after until one token is back', async () => {
    const bucket = key('empty');
    const ds = await takeN(bucket, 5, 6);
    expect(ds.slice(0, 5).every((d) => d.allowed)).toBe(true);
    expect(ds[4].remaining).toBe(0);
    // 5/min: one token per 12 s; an empty bucket is full again after 60 s.
    expect(ds[5]).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 60, retryAfterSeconds: 12 });
  });

  it('refills continuously: retry-after shrinks and tokens come back over time', async () => {
    const bucket = key('refill');
    await takeN(bucket, 6, 6);
    expect((await h.limiter.take(bucket, 6)).retryAfterSeconds).toBe(10);
    await h.advance(3000);
    const later = await h.limiter.take(bucket, 6);
    expect(later).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 7, resetSeconds: 57 });
  });

  it('a token that has come back is taken', async () => {
    const bucket = key('back');
    await takeN(bucket, 60, 60);
    expect((await h.limiter.take(bucket, 60)).allowed).toBe(false);
    await h.advance(2000);
    const d = await h.limiter.take(bucket, 60);
    expect(d).toMatchObject({ allowed: true, remaining: 1 });
    expect((await h.limiter.take(bucket, 60)).allowed).toBe(true);
    expect((await h.limiter.take(bucket, 60)).allowed).toBe(false);
  });

  it('refused requests take nothing', async () => {
    const bucket = key('refused');
    await takeN(bucket, 60, 60);
    const refused = await takeN(bucket, 60, 20);
    expect(refused.every((d) => !d.allowed)).toBe(true);
    await h.advance(1000);
    expect((await h.limiter.take(bucket, 60)).allowed).toBe(true);
  });

  it('a bucket is full again after its reset time, never fuller', async () => {
    const bucket = key('full');
    const first = await h.limiter.take(bucket, 60);
    expect(first.resetSeconds).toBe(1);
    await h.advance(first.resetSeconds * 1000);
    await h.advance(1000); // idle past full must not bank extra tokens
    expect(await h.limiter.take(bucket, 60)).toMatchObject({ allowed: true, remaining: 59, resetSeconds: 1 });
  });

  it('buckets are independent', async () => {
    const a = key('a');
    const b = key('b');
    await takeN(a, 3, 3);
    expect((await h.limiter.take(a, 3)).allowed).toBe(false);
    expect(await h.limiter.take(b, 3)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('parallel requests never take more tokens than the bucket holds', async () => {
    const bucket = key('parallel');
    const ds = await Promise.all(Array.from({ length: 100 }, () => h.limiter.take(bucket, 40)));
    expect(ds.filter((d) => d.allowed)).toHaveLength(40);
    // Every allowed answer saw a distinct remaining count: no two requests shared a token.
    expect(new Set(ds.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(40);
  });

  it('rejects a perMinute that is not a positive integer', async () => {
    await expect(h.limiter.take(key('bad'), 0)).rejects.toThrow(RangeError);
    await expect(h.limiter.take(key('bad'), 1.5)).rejects.toThrow(RangeError);
  });

  describe('takeUpTo (one token per item of a batch)', () => {
    it('given a full bucket, when 3 tokens are asked for, then all 3 are granted and counted like 3 takes', async () => {
      const d = await h.limiter.takeUpTo(key('many'), 10, 3);
      expect(d).toEqual({ allowed: true, granted: 3, limit: 10, remaining: 7, resetSeconds: 18, retryAfterSeconds: 0 });
    });

    it('given 2 tokens left, when 5 are asked for, then 2 are granted, the bucket is empty and retry-after is one token away', async () => {
      const bucket = key('partial');
      await takeN(bucket, 5, 3);
      const d = await h.limiter.takeUpTo(bucket, 5, 5);
      expect(d).toEqual({ allowed: false, granted: 2, limit: 5, remaining: 0, resetSeconds: 60, retryAfterSeconds: 12 });
      expect((await h.limiter.take(bucket, 5)).allowed).toBe(false);
    });

    it('given an empty bucket, when tokens are asked for, then none is granted and none is taken', async () => {
      const bucket = key('none');
      await takeN(bucket, 60, 60);
      expect(await h.limiter.takeUpTo(bucket, 60, 4)).toMatchObject({ allowed: false, granted: 0, remaining: 0 });
      await h.advance(1000);
      expect((await h.limiter.take(bucket, 60)).allowed).toBe(true);
    });

    it('given parallel batches and single takes, then no more tokens are granted than the bucket holds', async () => {
      const bucket = key('parallel-many');
      const asked = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? h.limiter.takeUpTo(bucket, 50, 7) : h.limiter.take(bucket, 50).then((d) => ({ granted: d.allowed ? 1 : 0 })))));
      expect(asked.reduce((sum, d) => sum + d.granted, 0)).toBe(50);
    });

    it('rejects a count that is not 1 to 1000', async () => {
      await expect(h.limiter.takeUpTo(key('bad'), 10, 0)).rejects.toThrow(RangeError);
      await expect(h.limiter.takeUpTo(key('bad'), 10, 1001)).rejects.toThrow(RangeError);
    });
  });
}
