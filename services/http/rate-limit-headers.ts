import type { FastifyReply } from 'fastify';
import { ERROR_CATALOGUE } from '../../contracts/errors';
import type { RateDecision } from '../limits/rate-limiter';

/**
 * The bucket an answer drew on, as named in the structured fields: a key's, a client address's
 * (calls without a valid key) or the console's per-address bucket.
 */
export type BucketName = 'key' | 'ip' | 'console';

/** Every bucket refills evenly over a minute (services/limits/token-bucket.ts): the policy's window. */
const WINDOW_SECONDS = 60;

/** What the five headers say: the bucket's size, what is left, and when. */
export interface BucketReading {
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again: `RateLimit-Reset`. */
  resetSeconds: number;
  /** With nothing left: seconds until one request goes through again (at most); null while some are left. */
  nextRequestSeconds: number | null;
}

/**
 * The rate-limit headers of a bucket (docs/api.md, Limits): the contract's `RateLimit-Limit`,
 * `-Remaining` and `-Reset`, and the same bucket as the structured fields `RateLimit-Policy` and
 * `RateLimit` of draft-ietf-httpapi-ratelimit-headers-10. Their `t` is `RateLimit-Reset` while
 * requests are left; with none left, when the next one goes through (on a refusal, `Retry-After`,
 * which the draft says must not come before `t`), so a generic client waits no longer than needed.
 */
export function rateLimitHeaders(bucket: BucketName, reading: BucketReading): Record<string, string> {
  const t = reading.nextRequestSeconds ?? reading.resetSeconds;
  return {
    'RateLimit-Limit': String(reading.limit),
    'RateLimit-Remaining': String(reading.remaining),
    'RateLimit-Reset': String(reading.resetSeconds),
    'RateLimit-Policy': `"${bucket}";q=${reading.limit};w=${WINDOW_SECONDS}`,
    RateLimit: `"${bucket}";r=${reading.remaining};t=${t}`,
  };
}

/** The reading of a token taken (or refused) from a bucket. */
export function readingOf(decision: RateDecision): BucketReading {
  const { limit, remaining, resetSeconds } = decision;
  let nextRequestSeconds: number | null = null;
  if (!decision.allowed) nextRequestSeconds = decision.retryAfterSeconds;
  // The last token taken: less than one is left, and one token refills in 60/limit seconds.
  else if (remaining === 0) nextRequestSeconds = Math.min(resetSeconds, Math.ceil(WINDOW_SECONDS / limit));
  return { limit, remaining, resetSeconds, nextRequestSeconds };
}

/** The rate-limit headers of a bucket read. */
export function setRateLimitHeaders(reply: FastifyReply, bucket: BucketName, decision: RateDecision): void {
  reply.headers(rateLimitHeaders(bucket, readingOf(decision)));
}

/**
 * A bucket that cannot be read (Redis out) refuses the call with 503; its answer still tells the
 * caller its limit and that no call goes now (until its Retry-After), like any refusal of a bucket.
 */
export function setUnreadableBucketHeaders(reply: FastifyReply, bucket: BucketName, limit: number): void {
  const seconds = ERROR_CATALOGUE.service_unavailable.defaultRetryAfterSeconds;
  reply.headers(rateLimitHeaders(bucket, { limit, remaining: 0, resetSeconds: seconds, nextRequestSeconds: seconds }));
}
