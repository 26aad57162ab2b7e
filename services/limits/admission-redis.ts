import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { KeyAdmission } from './admission';
import { assertMax } from './concurrency';
import { createRedisConcurrencySlots, SLOT_FUNCTIONS, type RedisConcurrencySlots, type RedisConcurrencySlotsOptions } from './concurrency-redis';
import { orLimiterUnavailable } from './limiter-unavailable';
import { createRedisRateLimiter, TAKE_BODY, type RedisRateLimiter } from './rate-limiter-redis';
import type { RedisClient } from './redis-connection';
import { assertPerMinute } from './token-bucket';

/**
 * A key's admission with its slot in one script: the revocation mark (KEYS[2]) checked, then,
 * unmarked, the bucket's token (KEYS[1], ARGV[1..2]), then, the token taken, a slot of the scope
 * (KEYS[3], ARGV[3..5]) with the same `now`. {-1}: marked, nothing taken. Else the bucket's
 * figures and 1 or 0 for the slot.
 */
const ADMIT_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1} end
${SLOT_FUNCTIONS}
${TAKE_BODY}
local slot = 0
if allowed == 1 then slot = acquireSlot(KEYS[3], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], now) end
return {allowed, remaining, reset, retry, slot}
`;

const ADMIT = 'lookupAdmitWithSlot';

interface AdmitCommand {
  [ADMIT](bucket: string, mark: string, slots: string, perMinute: number, wanted: 1, max: number, leaseMs: number, slotId: string): Promise<[number, number?, number?, number?, number?]>;
}

/**
 * The Redis admission (docs/adr/0031-one-redis-round-trip-per-admission.md): one script for the
 * mark, the token and the slot. A Redis Cluster runs a script only on keys of one hash slot, and
 * a key's bucket and mark are tagged by the key, its workspace's slots by the workspace: there the
 * slot is asked for by its own script once the token is taken (two round trips, as before).
 */
export function createRedisKeyAdmission(redis: RedisClient, rateLimiter: RedisRateLimiter, slots: RedisConcurrencySlots): KeyAdmission {
  const oneHashSlot = !(redis instanceof Cluster);
  const client = redis as unknown as Partial<AdmitCommand>;
  if (oneHashSlot && typeof client[ADMIT] !== 'function') redis.defineCommand(ADMIT, { numberOfKeys: 3, lua: ADMIT_SCRIPT });
  return {
    async admit(bucketKey, markKey, perMinute, slot) {
      if (!slot || !oneHashSlot) {
        const decision = await rateLimiter.takeUnlessMarked(bucketKey, markKey, perMinute);
        if (decision === 'marked') return decision;
        if (!slot) return { decision };
        return { decision, slot: decision.allowed ? await slots.acquire(slot.scope, slot.max) : null };
      }
      assertPerMinute(perMinute);
      assertMax(slot.max);
      const slotId = randomUUID();
      const [allowed, remaining, resetSeconds, retryAfterSeconds, granted] = await orLimiterUnavailable('admission', () =>
        (client as AdmitCommand)[ADMIT](rateLimiter.redisKey(bucketKey), markKey, slots.redisKey(slot.scope), perMinute, 1, slot.max, slots.leaseMs, slotId),
      );
      if (allowed === -1) return 'marked';
      const decision = { allowed: allowed === 1, limit: perMinute, remaining: remaining!, resetSeconds: resetSeconds!, retryAfterSeconds: retryAfterSeconds! };
      return { decision, slot: granted === 1 ? slots.adopt(slot.scope, slotId) : null };
    },
  };
}

/** The limits on one Redis as the service composes them: buckets, slots, and the admission over both. */
export function createRedisLimits(redis: RedisClient, options: RedisConcurrencySlotsOptions = {}) {
  const rateLimiter = createRedisRateLimiter(redis);
  const slots = createRedisConcurrencySlots(redis, options);
  return { rateLimiter, slots, keyAdmission: createRedisKeyAdmission(redis, rateLimiter, slots) };
}
