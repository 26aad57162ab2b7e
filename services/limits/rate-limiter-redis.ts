import type { Redis } from 'ioredis';
import type { RateDecision, RateLimiter } from './rate-limiter';
import { assertPerMinute } from './token-bucket';

/**
 * The token bucket of token-bucket.ts in one atomic Lua script. Time comes from Redis `TIME`, so
 * every instance shares one clock. The hash holds `l` (level in token units: 60 000 per token,
 * `perMinute` per elapsed ms) and `t` (ms of the last request). The key expires exactly when the
 * bucket would be full again, since a missing bucket means a full one.
 */
const TAKE_SCRIPT = `
local key = KEYS[1]
local perMinute = tonumber(ARGV[1])
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
local allowed = 0
if level >= unitsPerToken then
  allowed = 1
  level = level - unitsPerToken
end
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
return {allowed, remaining, reset, retry}
`;

const COMMAND = 'lookupRateLimitTake';

/** What `defineCommand` adds to the connection at run time. */
interface TakeCommand {
  [COMMAND](key: string, perMinute: number): Promise<[number, number, number, number]>;
}

export interface RedisRateLimiterOptions {
  /** Prefix of every bucket key (default `ratelimit:`). */
  keyPrefix?: string;
}

/**
 * Shared token buckets in Redis. The connection stays the caller's: `close()` does not quit it.
 * ioredis `defineCommand` sends EVALSHA and falls back to EVAL when the script is not cached.
 */
export function createRedisRateLimiter(redis: Redis, options: RedisRateLimiterOptions = {}): RateLimiter {
  const keyPrefix = options.keyPrefix ?? 'ratelimit:';
  const client = redis as unknown as Partial<TakeCommand>;
  if (typeof client[COMMAND] !== 'function') {
    redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }
  const take = (key: string, perMinute: number) => (client as TakeCommand)[COMMAND](key, perMinute);

  return {
    async take(bucketKey: string, perMinute: number): Promise<RateDecision> {
      assertPerMinute(perMinute);
      const [allowed, remaining, resetSeconds, retryAfterSeconds] = await take(keyPrefix + bucketKey, perMinute);
      return { allowed: allowed === 1, limit: perMinute, remaining, resetSeconds, retryAfterSeconds };
    },
    async close() {},
  };
}
