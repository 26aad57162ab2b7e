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
import { recordSlotReleaseBatch } from '../metrics/metrics';

const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

/**
 * The slot functions, for the scripts below and the admission script (admission-redis.ts). A
 * scope's key lives until its last lease ends, so idle scopes disappear. `acquireSlot` drops
 * lapsed leases, then adds one if fewer than max remain; 1 when granted.
 */
export const SLOT_FUNCTIONS = `
local function expireWithLastLease(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', key, tonumber(last[2]) + 1) end
end
local function acquireSlot(key, max, leaseMs, slotId, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= max then return 0 end
  redis.call('ZADD', key, now + leaseMs, slotId)
  expireWithLastLease(key)
  return 1
end
`;

const ACQUIRE_SCRIPT = `${NOW}${SLOT_FUNCTIONS}
return acquireSlot(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], now)
`;

/** Extends the leases of the given slots that still exist (a lapsed one is not revived). */
const RENEW_SCRIPT = `${NOW}${SLOT_FUNCTIONS}
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

/** The Redis slots, and what the admission script (admission-redis.ts) needs to take one of them. */
export interface RedisConcurrencySlots extends ConcurrencySlots {
  /** The sorted set of a scope. */
  redisKey(scope: string): string;
  readonly leaseMs: number;
  /** A slot a script other than this adapter's has just added to the scope: renewed and released here. */
  adopt(scope: string, slotId: string): SlotHandle;
}

/** A scope's releases of one event-loop turn, answered by one ZREM. */
interface PendingReleases {
  slotIds: string[];
  settle: { resolve(): void; reject(err: unknown): void }[];
}

/**
 * Slots as a sorted set per scope of slot ids scored by lease expiry (Redis `TIME`, ms). The
 * connection stays the caller's: `close()` stops renewals but does not quit it. When Redis does
 * not answer, `acquire` and `release` throw LimiterUnavailableError (a slot whose release failed
 * is no longer renewed, so it frees when its lease lapses).
 *
 * Releases are batched: those of one event-loop turn (the hits a group commit answers all finish
 * in one) go as one ZREM per scope, sent at the end of the turn; each `release()` still resolves
 * only once Redis has removed its slot, so an answered call no longer holds one.
 */
export function createRedisConcurrencySlots(
  redis: RedisClient,
  options: RedisConcurrencySlotsOptions = {},
): RedisConcurrencySlots {
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

  let pending = new Map<string, PendingReleases>();
  const flush = () => {
    const batches = pending;
    pending = new Map();
    for (const [scope, { slotIds, settle }] of batches) {
      recordSlotReleaseBatch(slotIds.length);
      orLimiterUnavailable('concurrency slot release', () => client.zrem(keyOf(scope), ...slotIds)).then(
        () => {
          for (const s of settle) s.resolve();
        },
        (err: unknown) => {
          for (const s of settle) s.reject(err);
        },
      );
    }
  };
  const release = (scope: string, slotId: string) =>
    new Promise<void>((resolve, reject) => {
      if (pending.size === 0) setImmediate(flush);
      let batch = pending.get(scope);
      if (!batch) pending.set(scope, (batch = { slotIds: [], settle: [] }));
      batch.slotIds.push(slotId);
      batch.settle.push({ resolve, reject });
    });

  const adopt = (scope: string, slotId: string): SlotHandle => {
    held.add(scope, slotId);
    return {
      async release() {
        // Stop renewing first; ZREM of a slot already gone is harmless.
        if (held.delete(scope, slotId)) await release(scope, slotId);
      },
    };
  };

  return {
    redisKey: keyOf,
    leaseMs,
    adopt,
    async acquire(scope: string, max: number): Promise<SlotHandle | null> {
      assertMax(max);
      const slotId = randomUUID();
      const granted = await orLimiterUnavailable('concurrency slot acquire', () => client[ACQUIRE](keyOf(scope), max, leaseMs, slotId));
      return granted === 1 ? adopt(scope, slotId) : null;
    },
    async close() {
      held.close();
    },
  };
}
