import type { RateDecision, RateLimiter, TokensTaken } from './rate-limiter';
import type { RedisClient } from './redis-connection';
import { hashTagged } from './redis-keys';
import { orLimiterUnavailable } from './limiter-unavailable';
import { assertPerMinute, assertWanted } from './token-bucket';

/**
 * The token bucket of token-bucket.ts (`takeTokens`: ARGV[2] tokens wanted, default 1) as Lua, for
 * the scripts below and the admission script (admission-redis.ts): it reads KEYS[1] and ARGV[1..2]
 * and leaves `now`, `allowed`, `remaining`, `reset`, `retry` and `granted` set. Time comes from
 * Redis `TIME`, so every instance shares one clock. The hash holds `l` (level in token units:
 * 60 000 per token, `perMinute` per elapsed ms) and `t` (ms of the last request). The key expires
 * exactly when the bucket would be full again, since a missing bucket means a full one.
 */
export const TAKE_BODY = `
local key = KEYS[1]
local perMinute = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2] or '1')
local unitsPerToken = 60000
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local capacity = perMinute * unitsPerToken
local level = capacity
local stored = redis.call('HMGET', key, 'l', 't')
if stored[1] and stored[2] then
  local elapsed = now - tonumber(stored[2])
  if elapsed < 0 then elapsed = 0 end
  level = math.min(capacity, tonumber(stored[1]) + elapsed * perMinute)
end
local granted = math.min(wanted, math.floor(level / unitsPerToken))
level = level - granted * unitsPerToken
local allowed = 0
if granted == wanted then allowed = 1 end
local deficit = capacity - level
local perSecond = perMinute * 1000
local remaining = math.floor(level / unitsPerToken)
local reset = math.floor((deficit + perSecond - 1) / perSecond)
local retry = 0
if allowed == 0 then
  retry = math.max(1, math.floor((unitsPerToken - level + perSecond - 1) / perSecond))
end
local fullInMs = math.floor((deficit + perMinute - 1) / perMinute)
redis.call('HSET', key, 'l', string.format('%.0f', level), 't', string.format('%.0f', now))
redis.call('PEXPIRE', key, fullInMs + 1)
`;

const TAKE_SCRIPT = `${TAKE_BODY}
return {allowed, remaining, reset, retry, granted}
`;

/**
 * A key's admission in one round trip: its revocation mark (KEYS[2]) checked, then, unmarked, its
 * token taken. A marked key takes nothing and gets {-1}: the caller then asks the database. Both
 * keys carry the same hash tag (redis-keys.ts), so a Redis Cluster runs it on one node.
 */
const TAKE_UNLESS_MARKED_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1} end
${TAKE_SCRIPT}`;

const COMMAND = 'lookupRateLimitTake';
const TAKE_UNLESS_MARKED = 'lookupRateLimitTakeUnlessMarked';

/** What `defineCommand` adds to the connection at run time. */
interface TakeCommand {
  [COMMAND](key: string, perMinute: number, wanted: number): Promise<[number, number, number, number, number]>;
  [TAKE_UNLESS_MARKED](key: string, markKey: string, perMinute: number): Promise<[number, number?, number?, number?]>;
}

export interface RedisRateLimiterOptions {
  /** Prefix of every bucket key (default `ratelimit:`), followed by the bucket's name as its hash tag. */
  keyPrefix?: string;
}

/**
 * Shared token buckets in Redis. The connection stays the caller's: `close()` does not quit it.
 * ioredis `defineCommand` sends EVALSHA and falls back to EVAL when the script is not cached.
 * When Redis does not answer, `take` throws LimiterUnavailableError.
 */
/** The Redis rate limiter, and where it keeps a bucket (for the admission script, which takes from it too). */
export type RedisRateLimiter = RateLimiter & Required<Pick<RateLimiter, 'takeUnlessMarked'>> & { redisKey(bucketKey: string): string };

export function createRedisRateLimiter(redis: RedisClient, options: RedisRateLimiterOptions = {}): RedisRateLimiter {
  const keyPrefix = options.keyPrefix ?? 'ratelimit:';
  const client = redis as unknown as Partial<TakeCommand>;
  if (typeof client[COMMAND] !== 'function') {
    redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }
  if (typeof client[TAKE_UNLESS_MARKED] !== 'function') {
    redis.defineCommand(TAKE_UNLESS_MARKED, { numberOfKeys: 2, lua: TAKE_UNLESS_MARKED_SCRIPT });
  }
  const take = async (bucketKey: string, perMinute: number, wanted: number): Promise<TokensTaken> => {
    assertPerMinute(perMinute);
    assertWanted(wanted);
    const [allowed, remaining, resetSeconds, retryAfterSeconds, granted] = await orLimiterUnavailable('rate limit take', () =>
      (client as TakeCommand)[COMMAND](hashTagged(keyPrefix, bucketKey), perMinute, wanted),
    );
    return { allowed: allowed === 1, granted, limit: perMinute, remaining, resetSeconds, retryAfterSeconds };
  };

  return {
    redisKey: (bucketKey) => hashTagged(keyPrefix, bucketKey),
    async takeUnlessMarked(bucketKey: string, markKey: string, perMinute: number): Promise<RateDecision | 'marked'> {
      assertPerMinute(perMinute);
      const [allowed, remaining, resetSeconds, retryAfterSeconds] = await orLimiterUnavailable('rate limit take', () =>
        (client as TakeCommand)[TAKE_UNLESS_MARKED](hashTagged(keyPrefix, bucketKey), markKey, perMinute),
      );
      if (allowed === -1) return 'marked';
      return { allowed: allowed === 1, limit: perMinute, remaining: remaining!, resetSeconds: resetSeconds!, retryAfterSeconds: retryAfterSeconds! };
    },
    async take(bucketKey: string, perMinute: number): Promise<RateDecision> {
      const { granted: _granted, ...decision } = await take(bucketKey, perMinute, 1);
      return decision;
    },
    takeUpTo: take,
    async close() {},
  };
}
