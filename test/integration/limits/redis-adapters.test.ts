// Every Redis adapter (rate limiter, concurrency slots, revocation marks) against each form of
// REDIS_URL: the shared server (standalone), a primary found through three sentinels, and a
// three-primary Redis Cluster, through the connection the service itself opens. The sentinel and
// cluster servers are this file's own (test/support/redis-topologies.ts).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRevocationMarks } from '../../../services/keys/revocation-marks-redis';
import { createRedisKeyAdmission } from '../../../services/limits/admission-redis';
import { createRedisConcurrencySlots } from '../../../services/limits/concurrency-redis';
import { hashTagged } from '../../../services/limits/redis-keys';
import type { ConcurrencySlots } from '../../../services/limits/concurrency';
import { apiKeyBucket } from '../../../services/limits/rate-limiter';
import { createRedisRateLimiter } from '../../../services/limits/rate-limiter-redis';
import { closeRedisConnection, createRedisConnection, type RedisClient } from '../../../services/limits/redis-connection';
import { parseRedisUrl } from '../../../services/limits/redis-url';
import { admissionContract } from '../../unit/limits/admission.contract';
import { concurrencyContract } from '../../unit/limits/concurrency.contract';
import { redisTopologiesAvailable, startClusterSetup, startSentinelSetup, type ClusterSetup, type SentinelSetup } from '../../support/redis-topologies';
import { serverUrl } from '../../support/servers';
import { rateLimiterContract } from '../../unit/limits/rate-limiter.contract';

/** A connection as the service opens it (services/limits/redis-connection.ts), connected. */
async function openConnection(url: string): Promise<RedisClient> {
  const parsed = parseRedisUrl(url);
  if (!parsed.ok) throw new Error(parsed.reason);
  const redis = createRedisConnection(parsed.target);
  redis.on('error', () => {}); // an outage shows in the calls that fail
  await redis.connect();
  return redis;
}

/** Each primary of the connection: the cluster's three, else the one. */
const primariesOf = (redis: RedisClient) => ('nodes' in redis ? redis.nodes('master') : [redis]);

/**
 * The adapters' suite on the Redis of `url()` (read once the suite's beforeAll has started it).
 * Every key this suite writes starts with a prefix of its own, so runs never meet.
 */
function redisAdapterSuite(url: () => string): void {
  const RUN = `test:${randomUUID()}:`;
  const connections: RedisClient[] = [];
  async function connect(): Promise<RedisClient> {
    const redis = await openConnection(url());
    connections.push(redis);
    return redis;
  }

  afterAll(async () => {
    const cleaner = await connect();
    for (const node of primariesOf(cleaner)) {
      const keys = await node.keys(`${RUN}*`);
      for (const key of keys) await node.del(key);
    }
    await Promise.all(connections.map((c) => closeRedisConnection(c)));
  });

  describe('rate limiter contract', () => {
    rateLimiterContract(async () => {
      const limiter = createRedisRateLimiter(await connect(), { keyPrefix: `${RUN}rl:` });
      return { limiter, advance: (ms) => sleep(ms), close: () => limiter.close() };
    });
  });

  describe('admission contract (mark, token and slot in one script; two steps on a cluster)', () => {
    admissionContract(async () => {
      const redis = await connect();
      const rateLimiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}adm-rl:` });
      const slots = createRedisConcurrencySlots(redis, { keyPrefix: `${RUN}adm-slots:` });
      return {
        admission: createRedisKeyAdmission(redis, rateLimiter, slots),
        rateLimiter,
        slots,
        // Tagged as the bucket is, as the revocation marks are (revocation-marks-redis.ts).
        markKey: (name) => hashTagged(`${RUN}adm-mark:`, name),
        mark: async (markKey) => {
          await redis.set(markKey, '1', 'PX', 60_000);
        },
        close: async () => {
          await Promise.all([rateLimiter.close(), slots.close()]);
        },
      };
    });
  });

  describe('concurrency slots contract', () => {
    concurrencyContract(async () => {
      const redis = await connect();
      const opened: ConcurrencySlots[] = [];
      return {
        open: async (options) => {
          const slots = createRedisConcurrencySlots(redis, { ...options, keyPrefix: `${RUN}slots:` });
          opened.push(slots);
          return slots;
        },
        close: async () => {
          await Promise.all(opened.map((s) => s.close()));
        },
      };
    });
  });

  describe('two instances on two connections', () => {
    let a: RedisClient;
    let b: RedisClient;
    beforeAll(async () => {
      a = await connect();
      b = await connect();
    });
    it('share one bucket per key', async () => {
      const limiterA = createRedisRateLimiter(a, { keyPrefix: `${RUN}shared:` });
      const limiterB = createRedisRateLimiter(b, { keyPrefix: `${RUN}shared:` });
      const key = randomUUID();
      expect((await limiterA.take(key, 5)).remaining).toBe(4);
      expect((await limiterB.take(key, 5)).remaining).toBe(3);
      expect((await limiterA.take(key, 5)).remaining).toBe(2);
      const parallel = await Promise.all([
        limiterA.take(key, 5),
        limiterB.take(key, 5),
        limiterA.take(key, 5),
        limiterB.take(key, 5),
      ]);
      expect(parallel.filter((d) => d.allowed)).toHaveLength(2);
      expect(await limiterB.take(key, 5)).toMatchObject({ allowed: false, retryAfterSeconds: 12 });
    });

    it('share one slot count per scope, exactly max granted across both', async () => {
      const slotsA = createRedisConcurrencySlots(a, { keyPrefix: `${RUN}shared-slots:` });
      const slotsB = createRedisConcurrencySlots(b, { keyPrefix: `${RUN}shared-slots:` });
      const ws = randomUUID();
      const handles = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? slotsA : slotsB).acquire(ws, 8)),
      );
      expect(handles.filter(Boolean)).toHaveLength(8);
      await handles.find(Boolean)!.release();
      expect(await slotsB.acquire(ws, 8)).not.toBeNull();
      await Promise.all([slotsA.close(), slotsB.close()]);
    });

    it("a dead instance's slots lapse after the lease; a live one's do not", async () => {
      const options = { keyPrefix: `${RUN}death:`, leaseMs: 600 };
      const dying = createRedisConcurrencySlots(a, options);
      const living = createRedisConcurrencySlots(b, options);
      const ws = randomUUID();
      expect(await dying.acquire(ws, 2)).not.toBeNull();
      const kept = await living.acquire(ws, 2);
      expect(kept).not.toBeNull();
      expect(await living.acquire(ws, 2)).toBeNull();
      await dying.close(); // stops renewing without releasing: what a crash leaves behind
      await sleep(1200);
      const taken = await living.acquire(ws, 2); // the dead slot lapsed, the renewed one stayed
      expect(taken).not.toBeNull();
      expect(await living.acquire(ws, 2)).toBeNull();
      await living.close();
    });
  });

  describe('Redis specifics', () => {
    it('a bucket key expires when the bucket would be full again', async () => {
      const redis = await connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}ttl:` });
      const key = randomUUID();
      await limiter.take(key, 60); // one token short: full in 1 s
      const ttl = await redis.pttl(`${RUN}ttl:{${key}}`);
      expect(ttl).toBeGreaterThan(900);
      expect(ttl).toBeLessThanOrEqual(1001);
      await limiter.take(key, 60);
      expect(await redis.pttl(`${RUN}ttl:{${key}}`)).toBeGreaterThan(1900);
    });

    it('a slot set expires with its last lease', async () => {
      const redis = await connect();
      const slots = createRedisConcurrencySlots(redis, { keyPrefix: `${RUN}ttl-slots:`, leaseMs: 5_000 });
      const ws = randomUUID();
      const handle = await slots.acquire(ws, 1);
      const ttl = await redis.pttl(`${RUN}ttl-slots:{${ws}}`);
      expect(ttl).toBeGreaterThan(4_000);
      expect(ttl).toBeLessThanOrEqual(5_001);
      await handle!.release();
      expect(await redis.zcard(`${RUN}ttl-slots:{${ws}}`)).toBe(0);
      await slots.close();
    });

    it('takeUnlessMarked: the token of an unmarked key, the same bucket as take; nothing of a marked one', async () => {
      const redis = await connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}marked:` });
      const key = randomUUID();
      // The bucket's hash tag, as a revocation mark carries it (a cluster refuses keys of two slots).
      const mark = `${RUN}mark:{${key}}`;
      const otherMark = `${RUN}other-mark:{${key}}`;
      expect(await limiter.takeUnlessMarked(key, mark, 10)).toMatchObject({ allowed: true, limit: 10, remaining: 9, retryAfterSeconds: 0 });
      expect(await limiter.take(key, 10)).toMatchObject({ allowed: true, remaining: 8 });
      await redis.set(mark, '1', 'PX', 60_000);
      expect(await limiter.takeUnlessMarked(key, mark, 10)).toBe('marked');
      // Nothing was taken by the marked call.
      expect(await limiter.take(key, 10)).toMatchObject({ allowed: true, remaining: 7 });
      for (let i = 0; i < 7; i++) await limiter.takeUnlessMarked(key, otherMark, 10);
      expect(await limiter.takeUnlessMarked(key, otherMark, 10)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 6 });
    });

    it('an API key revoked: its mark, written by the marks adapter, stops the admission script in one call', async () => {
      const redis = await connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}admission:` });
      const marks = createRedisRevocationMarks(redis, `${RUN}revoked:`);
      const keyId = `key_${randomUUID()}`;
      const admit = () => limiter.takeUnlessMarked(apiKeyBucket(keyId), marks.storageKey!(keyId), 10);
      expect(await admit()).toMatchObject({ allowed: true, remaining: 9 });
      await marks.mark(keyId, 60_000);
      expect(await marks.isMarked(keyId)).toBe(true);
      expect(await admit()).toBe('marked');
    });

    it('concurrent calls on the auto-pipelining connection keep their own answers', async () => {
      const redis = await connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}autopipe:` });
      const key = randomUUID();
      const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.take(key, 10)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
      expect(decisions.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('keeps working after the script cache is flushed (EVALSHA falls back to EVAL)', async () => {
      const redis = await connect();
      const flush = () => Promise.all(primariesOf(redis).map((node) => node.script('FLUSH')));
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}flush:` });
      const slots = createRedisConcurrencySlots(redis, { keyPrefix: `${RUN}flush-slots:` });
      const key = randomUUID();
      await limiter.take(key, 10);
      await flush();
      expect((await limiter.take(key, 10)).remaining).toBe(8);
      await flush();
      expect(await limiter.takeUnlessMarked(key, `${RUN}flush-mark:{${key}}`, 10)).toMatchObject({ remaining: 7 });
      expect(await slots.acquire(key, 1)).not.toBeNull();
      await slots.close();
    });
  });
}

const REDIS_URL = serverUrl('redis');
describe.skipIf(!REDIS_URL)('Redis adapters on one server (redis://)', () => {
  redisAdapterSuite(() => REDIS_URL!);
});

const topologies = redisTopologiesAvailable('Redis adapters on sentinels and on a cluster');

describe.skipIf(!topologies)(`Redis adapters on a primary found through sentinels (redis+sentinel://, ${topologies})`, () => {
  let setup: SentinelSetup | undefined;
  beforeAll(async () => {
    setup = await startSentinelSetup();
  });
  afterAll(async () => {
    await setup?.destroy();
  });
  redisAdapterSuite(() => setup!.url);
});

describe.skipIf(!topologies)(`Redis adapters on a three-primary cluster (redis+cluster://, ${topologies})`, () => {
  let setup: ClusterSetup | undefined;
  beforeAll(async () => {
    setup = await startClusterSetup();
  });
  afterAll(async () => {
    await setup?.destroy();
  });
  redisAdapterSuite(() => setup!.url);

  it('spreads the keys of different API keys over the three primaries (the hash tag is the key, not a constant)', async () => {
    const redis = await openConnection(setup!.url);
    try {
      const prefix = `spread:${randomUUID()}:`;
      const limiter = createRedisRateLimiter(redis, { keyPrefix: prefix });
      await Promise.all(Array.from({ length: 30 }, () => limiter.take(apiKeyBucket(randomUUID()), 10)));
      const perNode = await Promise.all(primariesOf(redis).map(async (node) => (await node.keys(`${prefix}*`)).length));
      expect(perNode.reduce((a, b) => a + b)).toBe(30);
      expect(perNode).toHaveLength(3);
      expect(perNode.every((n) => n > 0)).toBe(true);
    } finally {
      await closeRedisConnection(redis);
    }
  });
});
