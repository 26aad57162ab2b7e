import type { FastifyReply } from 'fastify';
import { ERROR_CATALOGUE } from '../../contracts/errors';
import type { RateDecision } from '../limits/rate-limiter';

/** The RateLimit headers of a bucket read (docs/api.md, Limits). */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision): void {
  reply.header('RateLimit-Limit', decision.limit).header('RateLimit-Remaining', decision.remaining).header('RateLimit-Reset', decision.resetSeconds);
}

/**
 * A bucket that cannot be read (Redis out) refuses the call with 503; its answer still tells the
 * caller its limit and that no call goes now, like any refusal of a bucket.
 */
export function setUnreadableBucketHeaders(reply: FastifyReply, limit: number): void {
  reply.header('RateLimit-Limit', limit).header('RateLimit-Remaining', 0);
  reply.header('RateLimit-Reset', ERROR_CATALOGUE.service_unavailable.defaultRetryAfterSeconds);
}
