// Single lookups with the limits on Redis, as server.ts composes them: a cached key's revocation
// mark, token and concurrency slot are taken in one script at admission
// (docs/adr/0031-one-redis-round-trip-per-admission.md). Every refusal keeps its place in the
// order docs/api.md gives: the body and the Idempotency-Key are judged before the slot's 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotScope } from '../../services/common/key-mode';
import type { ConcurrencySlots } from '../../services/limits/concurrency';
import { createRedisConcurrencySlots } from '../../services/limits/concurrency-redis';
import { closeRedisConnection, createRedisConnection, startRedisConnection, type RedisClient } from '../../services/limits/redis-connection';
import { admissionSlots } from '../../services/metrics/metrics';
import { serverUrl } from '../support/servers';
import { errorOf, startRouteApp, type RouteApp } from './support';

const REDIS_URL = serverUrl('redis');
let t: RouteApp;
beforeAll(async () => {
  if (REDIS_URL) t = await startRouteApp({ env: { REDIS_URL }, redisLimits: true });
}, 60_000);
afterAll(async () => t?.close());

async function admissionSlotCount(outcome: 'granted' | 'none_free'): Promise<number> {
  return (await admissionSlots.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

/** A key of a workspace at max_concurrency 1, cached by one lookup (the admission script needs a cached key). */
async function cachedKey() {
  const keyed = await t.keyed({ credits: 50, maxConcurrency: 1 });
  expect((await t.call('POST', '/v1/company', { headers: keyed.headers, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
  return keyed;
}

describe.skipIf(!REDIS_URL)('the slot taken with the token', () => {
  it('one lookup after another at max_concurrency 1: each gets the slot at admission, each answer has freed it', async () => {
    const { headers } = await cachedKey();
    const granted = await admissionSlotCount('granted');
    for (let i = 0; i < 5; i++) {
      const hit = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
      expect(hit.statusCode, hit.body).toBe(200);
    }
    expect((await admissionSlotCount('granted')) - granted).toBe(5);
  });

  it('a request answered without its lookup (400, 422) frees the slot it took at admission', async () => {
    const { headers } = await cachedKey();
    const granted = await admissionSlotCount('granted');
    expect(errorOf(await t.call('POST', '/v1/company', { headers, body: { url: '' } }))).toMatchObject({ status: 400, charged: 0 });
    const withKey = { ...headers, 'idempotency-key': 'adm-slot-reused' };
    expect((await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
    expect(errorOf(await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'globex' } }))).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    // A replay answers without the lookup too.
    expect((await t.call('POST', '/v1/company', { headers: withKey, body: { url: 'acme-robotics' } })).headers['idempotent-replayed']).toBe('true');
    expect((await admissionSlotCount('granted')) - granted).toBe(4);
    // Had any of them kept its slot, this one would find none at max_concurrency 1.
    expect((await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
  });
});

describe.skipIf(!REDIS_URL)('every slot held by another instance: the refusals in their order', () => {
  let redis: RedisClient;
  let elsewhere: ConcurrencySlots;
  beforeAll(async () => {
    redis = createRedisConnection({ kind: 'standalone', url: REDIS_URL! });
    await startRedisConnection(redis, { error: () => {}, info: () => {} });
    elsewhere = createRedisConcurrencySlots(redis);
  });
  afterAll(async () => {
    await elsewhere?.close();
    if (redis) await closeRedisConnection(redis);
  });

  it('a malformed body is 400, a replay replays, a lookup is 429 concurrency_limited; once the slot is freed, a lookup runs', async () => {
    const { workspaceId, headers } = await cachedKey();
    const stored = { ...headers, 'idempotency-key': 'adm-slot-stored' };
    expect((await t.call('POST', '/v1/company', { headers: stored, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
    const held = await elsewhere.acquire(slotScope({ workspaceId, mode: 'live' }), 1);
    expect(held).not.toBeNull();
    const noneFree = await admissionSlotCount('none_free');

    expect(errorOf(await t.call('POST', '/v1/company', { headers, body: { url: '' } }))).toMatchObject({ status: 400, charged: 0 });
    const replay = await t.call('POST', '/v1/company', { headers: stored, body: { url: 'acme-robotics' } });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const limited = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    expect(errorOf(limited)).toMatchObject({ status: 429, code: 'concurrency_limited', charged: 0 });
    expect(limited.headers['retry-after']).toBe('1');
    // None of the three found a slot at admission; each was answered where its refusal belongs.
    expect((await admissionSlotCount('none_free')) - noneFree).toBe(3);

    await held!.release();
    expect((await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
  });
});
