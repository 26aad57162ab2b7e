import { randomUUID } from 'node:crypto';
import {
  assertMax,
  HeldSlots,
  resolveOptions,
  type ConcurrencySlots,
  type ConcurrencySlotsOptions,
  type SlotHandle,
} from './concurrency';
import { orLimiterUnavailable } from './limiter-unavailable';
import type { RedisClient } from './redis-connection';
import { hashTagged } from './redis-keys';

// Shared by both scripts: the key lives until its last lease ends, so idle scopes disappear.
const NOW_AND_EXPIRE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function expireWithLastLease(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, tonumber(last[2]) + 1) end
end
`;

/** Drops lapsed leases, then adds one if fewer than max remain. Returns 1 when granted. */
const ACQUIRE_SCRIPT = `${NOW_AND_EXPIRE}
local key = KEYS[1]
local max = tonumber(ARGV[1])
local leaseMs = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZCARD', key) >= max then return 0 end
redis.call('ZADD', key, now + leaseMs, ARGV[3])
expireWithLastLease(key)
return 1
`;

/** Extends the leases of the given slots that still exist (a lapsed one is not revived). */
const RENEW_SCRIPT = `${NOW_AND_EXPIRE}
local key = KEYS[1]
local leaseMs = tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', key, 'XX', now + leaseMs, ARGV[i])
end
expireWithLastLease(key)
return 1
`;

const ACQUIRE = 'lookupSlotAcquire';
const RENEW = 'lookupSlotRenew';

/** What `defineCommand` adds to the connection at run time. */
interface SlotCommands {
  [ACQUIRE](key: string, max: number, leaseMs: number, slotId: string): Promise<number>;
  [RENEW](key: string, leaseMs: number, ...slotIds: string[]): Promise<number>;
}

export interface RedisConcurrencySlotsOptions extends ConcurrencySlotsOptions {
  /** Prefix of every scope's sorted set (default `slots:`), followed by the scope as its hash tag. */
  keyPrefix?: string;
}

/**
 * Slots as a sorted set per scope of slot ids scored by lease expiry (Redis `TIME`, ms). The
 * connection stays the caller's: `close()` stops renewals but does not quit it. When Redis does
 * not answer, `acquire` and `release` throw LimiterUnavailableError (a slot whose release failed
 * is no longer renewed, so it frees when its lease lapses).
 */
export function createRedisConcurrencySlots(
  redis: RedisClient,
  options: RedisConcurrencySlotsOptions = {},
): ConcurrencySlots {
  const { leaseMs, renewEveryMs, renew, onRenewError } = resolveOptions(options);
  const keyPrefix = options.keyPrefix ?? 'slots:';
  const defined = redis as unknown as Partial<SlotCommands>;
  if (typeof defined[ACQUIRE] !== 'function') redis.defineCommand(ACQUIRE, { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
  if (typeof defined[RENEW] !== 'function') redis.defineCommand(RENEW, { numberOfKeys: 1, lua: RENEW_SCRIPT });
  const client = redis as unknown as SlotCommands & RedisClient;
  const keyOf = (scope: string) => hashTagged(keyPrefix, scope);

  const held = new HeldSlots(
    renewEveryMs,
    renew,
    async (scope, slotIds) => {
      await orLimiterUnavailable('concurrency slot renew', () => client[RENEW](keyOf(scope), leaseMs, ...slotIds));
    },
    onRenewError,
  );

  return {
    async acquire(scope: string, max: number): Promise<SlotHandle | null> {
      assertMax(max);
      const slotId = randomUUID();
      const granted = await orLimiterUnavailable('concurrency slot acquire', () => client[ACQUIRE](keyOf(scope), max, leaseMs, slotId));
      if (granted !== 1) return null;
      held.add(scope, slotId);
      return {
        async release() {
          // Stop renewing first; ZREM of a slot already gone is harmless.
          if (held.delete(scope, slotId)) await orLimiterUnavailable('concurrency slot release', () => client.zrem(keyOf(scope), slotId));
        },
      };
    },
    async close() {
      held.close();
    },
  };
}
