// Revocation marks are a cache of what PostgreSQL holds: an instance writes them back on every
// connection to Redis. So marks renamed by an upgrade (their hash tags) or lost with a Redis that
// came back empty are there again, and a revoked key stays refused on every instance.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { privateServersAvailable, startPrivateRedis, type PrivateRedis } from '../support/private-servers';
import { serverUrl } from '../support/servers';
import { bearer, call } from './support-instances/http';
import { Admin, eventually, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const privateRedis = privateServersAvailable(['redis'], 'revocation marks restored from the database');

describe.skipIf(!databaseUrl || !privateRedis)('revocation marks restored from the database', () => {
  let redisServer: PrivateRedis;
  let servers: SharedServersHandle;
  let raw: Redis;
  const instances: RunningServer[] = [];

  beforeAll(async () => {
    redisServer = await startPrivateRedis();
    servers = await startSharedServers(redisServer.url);
    instances.push(await startInstance(servers));
    raw = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    raw.on('error', () => {});
  });

  afterAll(async () => {
    for (const i of instances) await i.close();
    raw?.disconnect();
    await servers?.close();
    await redisServer?.destroy();
  });

  const stats = (instance: RunningServer, key: string) => call(instance.url, '/v1/cache/stats', { headers: bearer(key) });
  const markOf = (keyId: string) => `revoked-key:{key:${keyId}}`;

  it('given a key revoked under the marks of the previous version, when an upgraded instance starts, then its mark is back under the new name and every instance refuses the key', async () => {
    const [a] = instances;
    const admin = new Admin(a!.url);
    const { key, keyId } = await admin.keyedWorkspace();
    expect((await stats(a!, key)).status).toBe(200);
    await admin.revokeKey(keyId);
    // What the previous version left: its mark under the name without a hash tag, none under the new one.
    await raw.del(markOf(keyId));
    await raw.set(`revoked-key:${keyId}`, '1', 'PX', 120_000);

    const upgraded = await startInstance(servers);
    instances.push(upgraded);
    expect(await eventually(async () => (await raw.exists(markOf(keyId))) === 1, 10_000)).toBe(true);
    const ttl = await raw.pttl(markOf(keyId));
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
    for (const instance of instances) expect((await stats(instance, key)).status).toBe(401);
  });

  it('given Redis restarted empty, when the instances reconnect, then the marks of recent revocations are written back', async () => {
    const [a] = instances;
    const admin = new Admin(a!.url);
    const { key, keyId } = await admin.keyedWorkspace();
    await admin.revokeKey(keyId);
    expect(await raw.exists(markOf(keyId))).toBe(1);

    await redisServer.kill();
    await redisServer.start();
    expect(await eventually(async () => (await raw.exists(markOf(keyId)).catch(() => 0)) === 1, 20_000)).toBe(true);
    for (const instance of instances) {
      expect(await eventually(async () => (await stats(instance, key)).status === 401, 10_000)).toBe(true);
    }
  });
});
