// Key authentication across two instances on one PostgreSQL database: a revocation made through
// one instance's admin API holds on the other from its very next request, a key created through
// one is accepted by the other at once (never on the per-IP bucket), and keys in steady state are
// checked without a database round trip.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call, freshLoopbackAddress, intHeader } from './support-instances/http';
import { Admin, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';
import { queryTexts } from '../support/pg-query-texts';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

/** A free, authenticated call (Cache area): what a key is allowed to do shows in its status. */
const cacheStats = (instance: RunningServer, key: string) => call(instance.url, '/v1/cache/stats', { headers: bearer(key) });

describe.skipIf(!databaseUrl || !redisUrl)('API keys across two instances', () => {
  let servers: SharedServersHandle;
  let a: RunningServer;
  let b: RunningServer;
  let adminA: Admin;
  let adminB: Admin;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    a = await startInstance(servers);
    b = await startInstance(servers);
    adminA = new Admin(a.url);
    adminB = new Admin(b.url);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await servers?.close();
  });

  it('a key revoked through one instance gets 401 on the other from the very next request', async () => {
    const rounds = 20;
    for (let round = 0; round < rounds; round++) {
      // Alternate which instance revokes and which one is asked next.
      const [revoker, other, revokerAdmin] = round % 2 === 0 ? [a, b, adminA] : [b, a, adminB];
      const { key, keyId } = await revokerAdmin.keyedWorkspace();
      for (let i = 0; i < 3; i++) {
        expect((await cacheStats(a, key)).status).toBe(200);
        expect((await cacheStats(b, key)).status).toBe(200);
      }

      const revoked = await revokerAdmin.revokeKey(keyId);
      expect(revoked.body).toMatchObject({ id: keyId, revoked_at: expect.any(String) });
      const next = await cacheStats(other, key);

      expect(next.status, `round ${round}: first request on the other instance after the revoke`).toBe(401);
      expect(next.body.error).toMatchObject({ code: 'unauthorized', type: 'authentication_error' });
      expect(next.body.meta).toMatchObject({ credits_charged: 0, credits_remaining: null });
      expect((await cacheStats(revoker, key)).status).toBe(401);
    }
  });

  it('a revoked key is refused on lookups as well, and never charged', async () => {
    const { key, keyId, workspaceId } = await adminA.keyedWorkspace({ credits: 10 });
    const lookup = (instance: RunningServer) =>
      call(instance.url, '/v1/company', { headers: bearer(key), body: { url: 'acme-robotics' } });
    expect((await lookup(a)).status).toBe(200);
    expect((await lookup(b)).status).toBe(200);
    const balance = (await adminA.workspace(workspaceId)).balance;

    await adminA.revokeKey(keyId);
    const refused = await lookup(b);

    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect(refused.headers['x-request-id']).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect((await adminB.workspace(workspaceId)).balance).toBe(balance);
  });

  it('a key created through one instance is accepted on the other at once, on its own bucket, from an address that ran its per-IP bucket dry', async () => {
    const drained = freshLoopbackAddress();
    for (let round = 0; round < 10; round++) {
      // Keyless calls until the address's bucket (shared through Redis) refuses one.
      let refused = false;
      for (let i = 0; i < 200 && !refused; i++) refused = (await call(b.url, '/v1/health', { localAddress: drained })).status === 429;
      expect(refused).toBe(true);
      const [creator, other] = round % 2 === 0 ? [adminA, b] : [adminB, a];
      const { key } = await creator.keyedWorkspace();
      const first = await call(other.url, '/v1/cache/stats', { localAddress: drained, headers: bearer(key) });
      expect(first.status, `round ${round}: ${JSON.stringify(first.body)}`).toBe(200);
      expect(intHeader(first, 'RateLimit-Limit')).toBe(600);
    }
  });

  it('keys in steady state are checked without a database query', async () => {
    // Observes (does not replace) every query the instances in this process send to PostgreSQL.
    const query = vi.spyOn(pg.Client.prototype, 'query');
    const keyLookups = () =>
      queryTexts(query.mock.calls).filter((text) => /FROM api_keys k JOIN workspaces/.test(text)).length;
    try {
      const { key } = await adminA.keyedWorkspace();
      const before = keyLookups();
      expect((await cacheStats(a, key)).status).toBe(200);
      expect((await cacheStats(b, key)).status).toBe(200);
      const afterFirstUse = keyLookups();
      // The observer sees key checks: one per instance for a key it has not seen yet.
      expect(afterFirstUse - before).toBe(2);

      for (let i = 0; i < 20; i++) {
        expect((await cacheStats(i % 2 === 0 ? a : b, key)).status).toBe(200);
      }

      expect(keyLookups()).toBe(afterFirstUse);
    } finally {
      query.mockRestore();
    }
  });
});
