// The Redis adapters (rate limiter, concurrency slots, revocation marks) when their server dies:
// every call fails with LimiterUnavailableError while it is down, with no call waiting for it to
// come back, and the same connection works again once it is restarted on the same port. The
// connection logs the outage once and the recovery once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRevocationMarks } from '../../../services/keys/revocation-marks-redis';
import { createRedisKeyAdmission } from '../../../services/limits/admission-redis';
import { createRedisConcurrencySlots } from '../../../services/limits/concurrency-redis';
import { LimiterUnavailableError } from '../../../services/limits/limiter-unavailable';
import { createRedisRateLimiter } from '../../../services/limits/rate-limiter-redis';
import {
  closeRedisConnection,
  createRedisConnection,
  startRedisConnection,
  type ConnectionLogger,
  type RedisClient,
} from '../../../services/limits/redis-connection';
import { eventually } from '../../e2e/support-instances/instances';
import { privateServersAvailable, startPrivateRedis, type PrivateRedis } from '../../support/private-servers';

const available = privateServersAvailable(['redis'], 'Redis adapters when Redis dies');

describe.skipIf(!available)('Redis adapters when Redis dies', () => {
  let server: PrivateRedis;
  let redis: RedisClient;
  const logged: Array<{ level: 'error' | 'info'; message: string }> = [];
  const logger: ConnectionLogger = {
    error: (_obj, message) => logged.push({ level: 'error', message }),
    info: (_obj, message) => logged.push({ level: 'info', message }),
  };

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = createRedisConnection({ kind: 'standalone', url: server.url });
    await startRedisConnection(redis, logger);
  }, 30_000);

  afterAll(async () => {
    if (redis) await closeRedisConnection(redis);
    await server?.destroy();
  });

  it('fails every call with LimiterUnavailableError while down, and works again after a restart', async () => {
    const limiter = createRedisRateLimiter(redis);
    const slots = createRedisConcurrencySlots(redis, { leaseMs: 60_000 });
    const marks = createRedisRevocationMarks(redis);
    const scope = randomUUID();
    const keyId = randomUUID();

    expect(await limiter.take('k', 10)).toMatchObject({ allowed: true, remaining: 9 });
    const heldAcrossTheOutage = await slots.acquire(scope, 2);
    expect(heldAcrossTheOutage).not.toBeNull();
    await marks.mark(keyId, 60_000);
    expect(await marks.isMarked(keyId)).toBe(true);
    expect(logged).toEqual([{ level: 'info', message: 'Redis connected' }]);

    // Attempts made ('connecting'), not attempts scheduled ('reconnecting'): with auto-pipelining a
    // call goes out on the next turn of the event loop, when the loss may already be noticed and
    // the first attempt scheduled; it must still fail without waiting for one.
    let reconnectAttempts = 0;
    redis.on('connecting', () => reconnectAttempts++);
    await server.kill();
    // Every call below fails while the server stays dead, and at once: before the client's next
    // reconnect attempt (a queued call would wait for one or more of them).
    const unavailable = async (call: () => Promise<unknown>) => {
      const attemptsBefore = reconnectAttempts;
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(LimiterUnavailableError);
      // The first reconnect comes 50 ms after the loss: on a loaded machine one may start while a
      // call's rejection is on its way, but a call never waits for a second one.
      expect(reconnectAttempts - attemptsBefore).toBeLessThanOrEqual(1);
    };
    // A burst, as under load: each call fails on its own, nothing piles up.
    await Promise.all(Array.from({ length: 50 }, () => unavailable(() => limiter.take('k', 10))));
    await unavailable(() => slots.acquire(scope, 2));
    const admission = createRedisKeyAdmission(redis, limiter, slots);
    await unavailable(() => admission.admit('k', marks.storageKey!(keyId), 10, { scope, max: 2 }));
    await unavailable(() => heldAcrossTheOutage!.release());
    await unavailable(() => marks.mark(keyId, 60_000));
    await unavailable(() => marks.isMarked(keyId));
    // Released once (it failed): a second release does nothing rather than fail again.
    await heldAcrossTheOutage!.release();
    // The reconnect attempts keep failing, yet the outage is logged once.
    await eventually(async () => redis.status === 'reconnecting', 10_000);
    expect(logged.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(logged.at(-1)).toMatchObject({ level: 'error', message: expect.stringMatching(/^Redis unavailable \(/) });

    await server.start();
    // The client reconnects by itself; the server came back empty.
    expect(await eventually(async () => (await limiter.take('k', 10).then(() => true, () => false)), 20_000)).toBe(true);
    expect(await limiter.take('k', 10)).toMatchObject({ allowed: true, remaining: 8 });
    const first = await slots.acquire(scope, 2);
    const second = await slots.acquire(scope, 2);
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(await slots.acquire(scope, 2)).toBeNull();
    await first!.release();
    expect(await slots.acquire(scope, 2)).not.toBeNull();
    expect(await marks.isMarked(keyId)).toBe(false);
    await marks.mark(keyId, 60_000);
    expect(await marks.isMarked(keyId)).toBe(true);
    expect(logged.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(logged.at(-1)).toMatchObject({ level: 'info', message: expect.stringMatching(/^Redis available again after \d+ ms/) });
    await slots.close();
  }, 60_000);

  it('a connection started while Redis is out does not wait for it, fails calls, and connects once it is up', async () => {
    await server.kill();
    const late = createRedisConnection({ kind: 'standalone', url: server.url });
    const lateLog: Array<{ level: 'error' | 'info'; message: string }> = [];
    try {
      await startRedisConnection(late, {
        error: (_obj, message) => lateLog.push({ level: 'error', message }),
        info: (_obj, message) => lateLog.push({ level: 'info', message }),
      });
      expect(lateLog).toEqual([{ level: 'error', message: expect.stringMatching(/^Redis unavailable \(.*ECONNREFUSED/) }]);
      const limiter = createRedisRateLimiter(late, { keyPrefix: 'late:' });
      await expect(limiter.take('k', 10)).rejects.toBeInstanceOf(LimiterUnavailableError);

      await server.start();
      expect(await eventually(async () => limiter.take('k', 10).then(() => true, () => false), 20_000)).toBe(true);
      expect(lateLog.at(-1)).toMatchObject({ level: 'info', message: expect.stringMatching(/^Redis available again/) });
    } finally {
      await closeRedisConnection(late);
    }
  }, 60_000);
});
