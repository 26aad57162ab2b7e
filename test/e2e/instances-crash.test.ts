// An instance killed mid-request (SIGKILL: no shutdown code runs) leaves a concurrency slot and an
// Idempotency-Key lock behind. Both heal on their own: the slot lapses after its lease, the lock
// after its TTL, and the same key then runs anew on another instance.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call } from './support-instances/http';
import {
  Admin,
  eventually,
  startChildInstance,
  startInstance,
  startSharedServers,
  type ChildInstance,
  type SharedServersHandle,
} from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

const LEASE_MS = 2000;
const LOCK_TTL_MS = 4000;

describe.skipIf(!databaseUrl || !redisUrl)('an instance killed mid-request', () => {
  let servers: SharedServersHandle;
  let survivor: RunningServer;
  let doomed: ChildInstance;
  let redis: Redis;
  let admin: Admin;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    survivor = await startInstance(servers);
    doomed = await startChildInstance(servers, {
      CONCURRENCY_LEASE_MS: String(LEASE_MS),
      IDEMPOTENCY_LOCK_TTL_MS: String(LOCK_TTL_MS),
      SOURCE_TIMEOUT_MS: '3000',
    });
    redis = new Redis(redisUrl!);
    admin = new Admin(survivor.url);
  });

  afterAll(async () => {
    await doomed?.stop();
    redis?.disconnect();
    await survivor?.close();
    await servers?.close();
  });

  it('frees its concurrency slot after the lease and its Idempotency-Key after the lock TTL', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 50, max_concurrency: 1 });
    const slowBody = { url: 'sandbox-slow', max_age: 0 };
    const withIdempotencyKey = (baseUrl: string) =>
      call(baseUrl, '/v1/company', { headers: { ...bearer(key), 'idempotency-key': 'crash-1' }, body: slowBody });
    const otherLookup = () => call(survivor.url, '/v1/company', { headers: bearer(key), body: { url: 'acme-robotics' } });

    const claimedAt = Date.now();
    const lost = withIdempotencyKey(doomed.url).catch((err: Error) => err);
    // The request holds the workspace's one slot (and, taken before it, the key) on the child.
    const holding = await eventually(async () => (await redis.zcard(`slots:{ws:${workspaceId}}`)) === 1, 5000, 20);
    expect(holding, `the child never took the slot:\n${doomed.output()}`).toBe(true);

    await doomed.kill();
    const killedAt = Date.now();
    expect(await lost).toBeInstanceOf(Error);

    // Fresh lock: the same key on the surviving instance is still "in use".
    const inUse = await withIdempotencyKey(survivor.url);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error).toMatchObject({ code: 'idempotency_key_in_use', type: 'idempotency_error', retryable: true });
    expect(inUse.body.meta.credits_charged).toBe(0);

    // Leased slot: the workspace is at its cap of 1 until the lease lapses.
    const capped = await otherLookup();
    expect(capped.status).toBe(429);
    expect(capped.body.error.code).toBe('concurrency_limited');

    let freed: Awaited<ReturnType<typeof otherLookup>> | undefined;
    const slotFreed = await eventually(async () => (freed = await otherLookup()).status !== 429, LEASE_MS + 2000, 100);
    const slotFreedAfter = Date.now() - killedAt;
    expect(slotFreed, `slot still held ${slotFreedAfter} ms after the kill`).toBe(true);
    expect(freed!.status).toBe(200);

    // The lock outlives the lease; once its TTL is over the same key runs anew (and is not a replay).
    let rerun: Awaited<ReturnType<typeof withIdempotencyKey>> | undefined;
    const lockFreed = await eventually(async () => (rerun = await withIdempotencyKey(survivor.url)).status !== 409, LOCK_TTL_MS + 2000, 100);
    expect(lockFreed, 'the Idempotency-Key stayed locked').toBe(true);
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(LOCK_TTL_MS);
    expect(rerun!.status).toBe(200);
    expect(rerun!.headers['idempotent-replayed']).toBeUndefined();
    expect(rerun!.headers['x-cache']).toMatch(/^(MISS|REFRESH)$/);
    expect(rerun!.headers['x-credits-charged']).toBe('1');

    // From now on the key replays the run that finished.
    const replayed = await withIdempotencyKey(survivor.url);
    expect(replayed.status).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.headers['x-request-id']).toBe(rerun!.headers['x-request-id']);
    expect(replayed.body).toEqual(rerun!.body);
  });
});
