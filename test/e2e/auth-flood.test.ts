// A flood of made-up API keys from one address, on PostgreSQL + Redis: each is refused from the
// instance's key set without a key lookup in the database (401 on the per-IP bucket, 429 once it
// has run dry), while a valid key, even one the instance has never seen, draws on its own bucket
// only, from a drained address or a busy one.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call, freshLoopbackAddress, intHeader, type HttpAnswer } from './support-instances/http';
import { Admin, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';
import { queryTexts } from '../support/pg-query-texts';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

const madeUpKey = () => `lk_live_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

describe.skipIf(!databaseUrl || !redisUrl)('a flood of made-up keys from one address', () => {
  let servers: SharedServersHandle;
  let instance: RunningServer;
  let admin: Admin;
  let query: MockInstance;
  /** Key checks the instance has sent to PostgreSQL so far (observed, not replaced). */
  const keyLookups = () =>
    queryTexts(query.mock.calls).filter((text) => /FROM api_keys k JOIN workspaces/.test(text)).length;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    instance = await startInstance(servers);
    admin = new Admin(instance.url);
  });
  afterAll(async () => {
    await instance?.close();
    await servers?.close();
  });
  beforeEach(() => {
    query = vi.spyOn(pg.Client.prototype, 'query');
  });
  afterEach(() => query.mockRestore());

  /** Public calls from `from` until its per-IP bucket refuses one: no key is looked up on the way. */
  async function drain(from: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const answer = await call(instance.url, '/v1/health', { localAddress: from });
      if (answer.status === 429) return;
    }
    throw new Error('the per-IP bucket never ran dry within 200 calls');
  }

  it('a flood of made-up keys costs no key lookup, from a drained address or a fresh one: refused from the key set, the barriers it waits on shared', async () => {
    const barriers = () => queryTexts(query.mock.calls).filter((text) => /pg_notify/.test(text)).length;
    const drained = freshLoopbackAddress();
    await drain(drained);
    const before = { lookups: keyLookups(), barriers: barriers() };
    const began = performance.now();

    // All at once, as a flood would come; the bucket gives back 2 tokens a second meanwhile.
    const fromDrained: HttpAnswer[] = await Promise.all(
      Array.from({ length: 60 }, () => call(instance.url, '/v1/cache/stats', { localAddress: drained, headers: bearer(madeUpKey()) })),
    );
    // From an address with its whole budget: past it, the same keys turn from 401 to 429.
    const fresh = freshLoopbackAddress();
    const fromFresh: HttpAnswer[] = [];
    for (let wave = 0; wave < 5; wave++) {
      fromFresh.push(...(await Promise.all(Array.from({ length: 40 }, () => call(instance.url, '/v1/cache/stats', { localAddress: fresh, headers: bearer(madeUpKey()) })))));
    }
    const seconds = (performance.now() - began) / 1000;

    for (const answer of [...fromDrained, ...fromFresh]) {
      expect([401, 429]).toContain(answer.status);
      expect(intHeader(answer, 'RateLimit-Limit')).toBe(120);
      if (answer.status === 429) {
        expect(answer.body.error).toMatchObject({ code: 'rate_limited', retryable: true });
        expect(intHeader(answer, 'Retry-After')).toBeGreaterThanOrEqual(1);
      }
    }
    expect(fromDrained.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    expect(fromFresh.filter((a) => a.status === 401).length).toBeGreaterThanOrEqual(100);
    expect(fromFresh.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    const lookups = keyLookups() - before.lookups;
    const sent = barriers() - before.barriers;
    console.log(
      `flood of ${fromDrained.length + fromFresh.length} made-up keys in ${seconds.toFixed(2)} s: ${lookups} key lookups, ${sent} barrier NOTIFYs (shared), ` +
        `${[...fromDrained, ...fromFresh].filter((a) => a.status === 401).length} answered 401, ${[...fromDrained, ...fromFresh].filter((a) => a.status === 429).length} answered 429`,
    );
    expect(lookups).toBe(0);
    // Shared: fewer barriers than requests, and one per 20 ms at most.
    expect(sent).toBeLessThan(fromDrained.length + fromFresh.length);
    expect(sent).toBeLessThanOrEqual(1 + Math.ceil((seconds * 1000) / 20));
  });

  it('a valid key draws on its own bucket only: first seen from a drained address, then from a busy one', async () => {
    // 120+ keyless calls first, then a key this instance has never checked, from the same address.
    const { key } = await admin.keyedWorkspace({ credits: 10 });
    const drained = freshLoopbackAddress();
    await drain(drained);
    const beforeFirstUse = keyLookups();
    const fromDrained = await call(instance.url, '/v1/cache/stats', { localAddress: drained, headers: bearer(key) });
    expect(fromDrained.status, JSON.stringify(fromDrained.body)).toBe(200);
    expect(intHeader(fromDrained, 'RateLimit-Limit')).toBe(600);
    expect(intHeader(fromDrained, 'RateLimit-Remaining')).toBe(599);
    // Its first use is checked in the database, once.
    expect(keyLookups() - beforeFirstUse).toBe(1);

    // A server-side caller behind one address: more calls than the per-IP bucket holds, none refused.
    const busy = freshLoopbackAddress();
    const before = keyLookups();
    for (let i = 0; i < 150; i++) {
      const answer = await call(instance.url, '/v1/cache/stats', { localAddress: busy, headers: bearer(key) });
      expect(answer.status, `call ${i}`).toBe(200);
      expect(intHeader(answer, 'RateLimit-Limit')).toBe(600);
    }
    expect(keyLookups()).toBe(before);
    // The address's own bucket was never touched.
    expect(intHeader(await call(instance.url, '/v1/health', { localAddress: busy }), 'RateLimit-Remaining')).toBe(119);
  });
});
