import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { ANONYMOUS_RATE_PER_MINUTE, CONSOLE_RATE_PER_MINUTE, type RateLimitPolicy } from '../../../contracts/endpoints';
import { ANONYMOUS_RATE_LIMITED, ApiError } from '../../../contracts/errors';
import { LimiterUnavailableError } from '../../limits/limiter-unavailable';
import { apiKeyBucket, type RateDecision, type RateLimiter } from '../../limits/rate-limiter';
import { type BucketName, setRateLimitHeaders, setUnreadableBucketHeaders } from '../rate-limit-headers';
import { DrainedAddresses } from './drained-addresses';

/** The per-IP bucket of callers without a valid key; remembers the addresses it saw run dry. */
export class AnonymousBucket {
  readonly drained = new DrainedAddresses();

  constructor(private readonly rateLimiter: RateLimiter) {}

  async take(address: string): Promise<RateDecision> {
    const decision = await this.rateLimiter.take(`ip:${address}`, ANONYMOUS_RATE_PER_MINUTE);
    this.drained.noteTake(address, decision);
    return decision;
  }
}

function refuseWhenEmpty(req: FastifyRequest, reply: FastifyReply, bucket: BucketName, decision: RateDecision): void {
  setRateLimitHeaders(reply, bucket, decision);
  if (!decision.allowed) {
    throw new ApiError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds, ...(req.apiKey ? {} : { message: ANONYMOUS_RATE_LIMITED }) });
  }
}

/**
 * `bucket` and `bucket_when_reachable`: a token of the key's bucket, or without a key the client
 * address's; the one a key check already took (the Redis fast path, a drained address) counts.
 */
function callerBucket(rateLimiter: RateLimiter, anonymous: AnonymousBucket, whenUnreadable: 'refuse' | 'answer'): onRequestAsyncHookHandler {
  return async (req, reply) => {
    let decision: RateDecision;
    try {
      decision =
        req.bucketDecision ?? (req.apiKey ? await rateLimiter.take(apiKeyBucket(req.apiKey.keyId), req.apiKey.rateLimitPerMinute) : await anonymous.take(req.ip));
    } catch (err) {
      if (err instanceof LimiterUnavailableError && whenUnreadable === 'answer') {
        // A liveness probe says whether this process lives, whatever Redis does (see the route table).
        req.log.warn({ err }, 'rate limiter out of reach; liveness answered without its bucket');
        return;
      }
      if (err instanceof LimiterUnavailableError) setUnreadableBucketHeaders(reply, req.apiKey ? 'key' : 'ip', req.apiKey ? req.apiKey.rateLimitPerMinute : ANONYMOUS_RATE_PER_MINUTE);
      throw err;
    }
    refuseWhenEmpty(req, reply, req.apiKey ? 'key' : 'ip', decision);
  };
}

/** `console`: the console's own bucket per client address, read before anything else. */
function consoleBucket(rateLimiter: RateLimiter): onRequestAsyncHookHandler {
  return async (req, reply) => {
    const decision = await rateLimiter.take(`console:${req.ip}`, CONSOLE_RATE_PER_MINUTE).catch((err: unknown) => {
      // Unreadable (Redis out): 503, with the headers every console answer carries (docs/api.md).
      if (err instanceof LimiterUnavailableError) setUnreadableBucketHeaders(reply, 'console', CONSOLE_RATE_PER_MINUTE);
      throw err;
    });
    refuseWhenEmpty(req, reply, 'console', decision);
  };
}

/** The hooks of each rate-limit policy of the route table. */
export function bucketHooks(rateLimiter: RateLimiter, anonymous: AnonymousBucket): Record<RateLimitPolicy, onRequestAsyncHookHandler[]> {
  return {
    bucket: [callerBucket(rateLimiter, anonymous, 'refuse')],
    bucket_when_reachable: [callerBucket(rateLimiter, anonymous, 'answer')],
    none: [],
    console: [consoleBucket(rateLimiter)],
  };
}
