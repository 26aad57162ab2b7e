import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConcurrencySlots } from '../../../services/limits/concurrency-redis';
import type { ConcurrencySlots } from '../../../services/limits/concurrency';
import { createRedisRateLimiter } from '../../../services/limits/rate-limiter-redis';
import { concurrencyContract } from '../../unit/limits/concurrency.contract';
import { serverUrl } from '../../support/servers';
import { rateLimiterContract } from '../../unit/limits/rate-limiter.contract';

const REDIS_URL = serverUrl('redis');

// Every key this file writes starts with a prefix of its own, so runs never meet.
const RUN = `test:${randomUUID()}:`;
const connections: Redis[] = [];
function connect(): Redis {
  const redis = new Redis(REDIS_URL!, { lazyConnect: false, maxRetriesPerRequest: 2 });
  connections.push(redis);
  return redis;
}

describe.skipIf(!REDIS_URL)('Redis adapters', () => {
  afterAll(async () => {
    const cleaner = connect();
    const keys = await cleaner.keys(`${RUN}*`);
    if (keys.length) await cleaner.del(...keys);
    await Promise.all(connections.map((c) => c.quit()));
  });

  describe('rate limiter contract', () => {
    rateLimiterContract(async () => {
      const limiter = createRedisRateLimiter(connect(), { keyPrefix: `${RUN}rl:` });
      return { limiter, advance: (ms) => sleep(ms), close: () => limiter.close() };
    });
  });

  describe('concurrency slots contract', () => {
    concurrencyContract(async () => {
      const redis = connect();
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
    let a: Redis;
    let b: Redis;
    beforeAll(() => {
      a = connect();
      b = connect();
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
      const redis = connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}ttl:` });
      const key = randomUUID();
      await limiter.take(key, 60); // one token short: full in 1 s
      const ttl = await redis.pttl(`${RUN}ttl:${key}`);
      expect(ttl).toBeGreaterThan(900);
      expect(ttl).toBeLessThanOrEqual(1001);
      await limiter.take(key, 60);
      expect(await redis.pttl(`${RUN}ttl:${key}`)).toBeGreaterThan(1900);
    });

    it('a slot set expires with its last lease', async () => {
      const redis = connect();
      const slots = createRedisConcurrencySlots(redis, { keyPrefix: `${RUN}ttl-slots:`, leaseMs: 5_000 });
      const ws = randomUUID();
      const handle = await slots.acquire(ws, 1);
      const ttl = await redis.pttl(`${RUN}ttl-slots:${ws}`);
      expect(ttl).toBeGreaterThan(4_000);
      expect(ttl).toBeLessThanOrEqual(5_001);
      await handle!.release();
      expect(await redis.zcard(`${RUN}ttl-slots:${ws}`)).toBe(0);
      await slots.close();
    });

    it('takeUnlessMarked: the token of an unmarked key, the same bucket as take; nothing of a marked one', async () => {
      const redis = connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}marked:` });
      const key = randomUUID();
      const mark = `${RUN}mark:${key}`;
      expect(await limiter.takeUnlessMarked(key, mark, 10)).toMatchObject({ allowed: true, limit: 10, remaining: 9, retryAfterSeconds: 0 });
      expect(await limiter.take(key, 10)).toMatchObject({ allowed: true, remaining: 8 });
      await redis.set(mark, '1', 'PX', 60_000);
      expect(await limiter.takeUnlessMarked(key, mark, 10)).toBe('marked');
      // Nothing was taken by the marked call.
      expect(await limiter.take(key, 10)).toMatchObject({ allowed: true, remaining: 7 });
      for (let i = 0; i < 7; i++) await limiter.takeUnlessMarked(key, `${mark}:other`, 10);
      expect(await limiter.takeUnlessMarked(key, `${mark}:other`, 10)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 6 });
    });

    it('on an auto-pipelining connection, concurrent calls keep their own answers', async () => {
      const redis = new Redis(REDIS_URL!, { enableAutoPipelining: true });
      connections.push(redis);
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}autopipe:` });
      const key = randomUUID();
      const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.take(key, 10)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
      expect(decisions.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('keeps working after the script cache is flushed (EVALSHA falls back to EVAL)', async () => {
      const redis = connect();
      const limiter = createRedisRateLimiter(redis, { keyPrefix: `${RUN}flush:` });
      const slots = createRedisConcurrencySlots(redis, { keyPrefix: `${RUN}flush-slots:` });
      const key = randomUUID();
      await limiter.take(key, 10);
      await redis.script('FLUSH');
      expect((await limiter.take(key, 10)).remaining).toBe(8);
      await redis.script('FLUSH');
      expect(await limiter.takeUnlessMarked(key, `${RUN}flush-mark:${key}`, 10)).toMatchObject({ remaining: 7 });
      expect(await slots.acquire(key, 1)).not.toBeNull();
      await slots.close();
    });
  });
});
