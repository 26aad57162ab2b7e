/** Rate-limiter port: one token bucket per key (an API key, or a client IP for keyless calls). */
export interface RateDecision {
  allowed: boolean;
  /** Bucket size: `RateLimit-Limit`. */
  limit: number;
  /** Whole tokens left after this request: `RateLimit-Remaining`. */
  remaining: number;
  /** Whole seconds until the bucket is full: `RateLimit-Reset`. */
  resetSeconds: number;
  /** Whole seconds until one token is back (at least 1) when refused; 0 when allowed. */
  retryAfterSeconds: number;
}

/** The bucket of an API key (a client IP's is `ip:<address>`); its revocation mark shares the name. */
export function apiKeyBucket(keyId: string): string {
  return `key:${keyId}`;
}

/** Several tokens asked for at once: how many were granted, and the bucket as they left it. */
export interface TokensTaken extends RateDecision {
  /** Tokens taken: every one asked for when `allowed`, else as many whole ones as were left. */
  granted: number;
}

export interface RateLimiter {
  /** Takes one token from `bucketKey`, whose capacity is `perMinute`, refilled evenly over 60 s. */
  take(bucketKey: string, perMinute: number): Promise<RateDecision>;
  /**
   * Takes up to `wanted` (1–1000) tokens at once, as many whole ones as the bucket holds: one per
   * item of a batch call, the items past the bucket refused alone. Atomic, like `take`.
   */
  takeUpTo(bucketKey: string, perMinute: number, wanted: number): Promise<TokensTaken>;
  /**
   * `take`, unless the Redis key `markKey` (a revocation mark) exists: then nothing is taken.
   * One round trip for both; only where the marks live with the buckets (Redis).
   */
  takeUnlessMarked?(bucketKey: string, markKey: string, perMinute: number): Promise<RateDecision | 'marked'>;
  close(): Promise<void>;
}
