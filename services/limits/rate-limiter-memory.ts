import type { RateDecision, RateLimiter, TokensTaken } from './rate-limiter';
import { isFull, takeTokens, type BucketState } from './token-bucket';

export interface MemoryRateLimiterOptions {
  /** Hard cap on buckets kept; past it the least recently used is dropped (default 100 000). */
  maxBuckets?: number;
  /** How often (by the clock) buckets that have refilled completely are forgotten (default 60 s). */
  sweepEveryMs?: number;
}

export interface MemoryRateLimiter extends RateLimiter {
  /** Buckets currently kept (a missing bucket is a full one). */
  bucketCount(): number;
}

interface Bucket {
  state: BucketState;
  perMinute: number;
}

/**
 * In-process token buckets with the same arithmetic as the Redis adapter, for a single instance
 * or tests. `clock` returns milliseconds.
 */
export function createMemoryRateLimiter(
  clock: () => number = Date.now,
  options: MemoryRateLimiterOptions = {},
): MemoryRateLimiter {
  const maxBuckets = options.maxBuckets ?? 100_000;
  const sweepEveryMs = options.sweepEveryMs ?? 60_000;
  // Map iteration order is insertion order; re-inserting on every take makes it LRU order.
  const buckets = new Map<string, Bucket>();
  let lastSweepMs = clock();

  function sweep(nowMs: number): void {
    lastSweepMs = nowMs;
    // A full bucket is indistinguishable from a missing one, so forgetting it changes nothing.
    for (const [key, bucket] of buckets) {
      if (isFull(bucket.state, nowMs, bucket.perMinute)) buckets.delete(key);
    }
  }

  function takeUpTo(bucketKey: string, perMinute: number, wanted: number): TokensTaken {
    const nowMs = clock();
    const previous = buckets.get(bucketKey);
    const decision = takeTokens(previous?.state, nowMs, perMinute, wanted);
    buckets.delete(bucketKey);
    buckets.set(bucketKey, { state: decision.state, perMinute });
    if (nowMs - lastSweepMs >= sweepEveryMs) sweep(nowMs);
    if (buckets.size > maxBuckets) {
      // Only under a flood of distinct keys: dropping the stalest bucket errs towards allowing.
      const oldest = buckets.keys().next().value;
      if (oldest !== undefined) buckets.delete(oldest);
    }
    const { allowed, granted, limit, remaining, resetSeconds, retryAfterSeconds } = decision;
    return { allowed, granted, limit, remaining, resetSeconds, retryAfterSeconds };
  }

  return {
    async take(bucketKey: string, perMinute: number): Promise<RateDecision> {
      const { granted: _granted, ...decision } = takeUpTo(bucketKey, perMinute, 1);
      return decision;
    },
    async takeUpTo(bucketKey: string, perMinute: number, wanted: number): Promise<TokensTaken> {
      return takeUpTo(bucketKey, perMinute, wanted);
    },
    bucketCount: () => buckets.size,
    async close() {
      buckets.clear();
    },
  };
}
