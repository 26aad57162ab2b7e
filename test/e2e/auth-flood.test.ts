// A flood of made-up API keys from one address, on PostgreSQL + Redis: once the address's per-IP
// bucket has run dry, an attempt it refuses costs no database query, while a valid key from the
// same address keeps drawing on its own bucket only.
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

  it('past the per-IP budget, every 429 costs no key lookup: the database sees only the attempts the bucket let through', async () => {
    const from = freshLoopbackAddress();
    await drain(from);
    const before = keyLookups();

    // All at once, as a flood would come; the bucket gives back 2 tokens a second meanwhile.
    const answers: HttpAnswer[] = await Promise.all(
      Array.from({ length: 60 }, () => call(instance.url, '/v1/cache/stats', { localAddress: from, headers: bearer(madeUpKey()) })),
    );

    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 401 || s === 429), statuses.join(',')).toBe(true);
    const refused = answers.filter((a) => a.status === 429);
    const letThrough = answers.filter((a) => a.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.body.error).toMatchObject({ code: 'rate_limited', retryable: true });
      expect(intHeader(answer, 'RateLimit-Limit')).toBe(120);
      expect(intHeader(answer, 'Retry-After')).toBeGreaterThanOrEqual(1);
    }
    // Each made-up key the bucket let through was looked up once (401); the refused ones never.
    expect(keyLookups() - before).toBe(letThrough.length);
  });

  it('a valid key keeps drawing on its own bucket only, from a drained address or a busy one', async () => {
    const { key } = await admin.keyedWorkspace({ credits: 10 });
    // Its first use checks it against the database (from an address with budget to spare).
    expect((await call(instance.url, '/v1/cache/stats', { headers: bearer(key), localAddress: freshLoopbackAddress() })).status).toBe(200);

    const drained = freshLoopbackAddress();
    await drain(drained);
    const fromDrained = await call(instance.url, '/v1/cache/stats', { localAddress: drained, headers: bearer(key) });
    expect(fromDrained.status).toBe(200);
    expect(intHeader(fromDrained, 'RateLimit-Limit')).toBe(600);

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
