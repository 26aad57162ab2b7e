// The cross-instance guarantees with the fast paths on: admission in one Redis script
// for a cached key, the cache index kept in each instance's memory. Two instances on one
// PostgreSQL database and one Redis: a key revoked on A is refused on B's very next request; one
// rate-limit bucket and one slot count per key/workspace across both; an entry refreshed through A
// is what B answers before it next answers for it with a max_age the old copy no longer meets,
// and B never answers a copy older than the max_age asked.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call } from './support-instances/http';
import { Admin, eventually, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';
import { queryTexts } from '../support/pg-query-texts';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

const lookup = (instance: RunningServer, key: string, body: Record<string, unknown>) => call(instance.url, '/v1/company', { headers: bearer(key), body });

describe.skipIf(!databaseUrl || !redisUrl)('fast paths across two instances', () => {
  let servers: SharedServersHandle;
  let a: RunningServer;
  let b: RunningServer;
  let admin: Admin;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    a = await startInstance(servers);
    b = await startInstance(servers);
    admin = new Admin(a.url);
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await a?.close();
    await b?.close();
    await servers?.close();
  });

  it('in steady state a charged cache hit reads neither the key nor the cache index from the database', async () => {
    const { key } = await admin.keyedWorkspace({ credits: 100 });
    for (const instance of [a, b, a, b]) expect((await lookup(instance, key, { url: 'acme-robotics' })).status).toBe(200);
    // Observes (does not replace) every query the instances in this process send.
    const query = vi.spyOn(pg.Client.prototype, 'query');
    try {
      for (const instance of [a, b, a, b]) {
        const answer = await lookup(instance, key, { url: 'acme-robotics' });
        expect(answer.status).toBe(200);
        expect(answer.headers['x-cache']).toBe('HIT');
      }
      const texts = queryTexts(query.mock.calls);
      expect(texts.filter((t) => /FROM api_keys|FROM cache_aliases/.test(t))).toEqual([]);
    } finally {
      query.mockRestore();
    }
  });

  it('a key revoked on one instance is refused on the other from its very next request, and not charged', async () => {
    for (let round = 0; round < 6; round++) {
      const [revoker, other] = round % 2 === 0 ? [a, b] : [b, a];
      const { key, keyId, workspaceId } = await new Admin(revoker.url).keyedWorkspace({ credits: 100 });
      for (let i = 0; i < 2; i++) {
        expect((await lookup(a, key, { url: 'acme-robotics' })).status).toBe(200);
        expect((await lookup(b, key, { url: 'acme-robotics' })).status).toBe(200);
      }
      const balance = (await admin.workspace(workspaceId)).balance;
      await new Admin(revoker.url).revokeKey(keyId);
      const next = await lookup(other, key, { url: 'acme-robotics' });
      expect(next.status, `round ${round}`).toBe(401);
      expect(next.body.error.code).toBe('unauthorized');
      expect((await lookup(revoker, key, { url: 'acme-robotics' })).status).toBe(401);
      expect((await admin.workspace(workspaceId)).balance).toBe(balance);
    }
  });

  it('one rate-limit bucket per key across both instances', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 100, rate_limit_per_minute: 6 });
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await lookup(i % 2 === 0 ? a : b, key, { url: 'acme-robotics' });
      expect(answer.status).toBe(200);
      remaining.push(Number(answer.headers['ratelimit-remaining']));
    }
    // Alternating instances, the count goes down by one a call (a token comes back every 10 s).
    expect(remaining[0]).toBe(5);
    expect(remaining[1]).toBe(4);
    for (let i = 1; i < remaining.length; i++) expect(remaining[i]).toBeLessThanOrEqual(remaining[i - 1]!);
    const refused = await lookup(b, key, { url: 'acme-robotics' });
    const refusedToo = await lookup(a, key, { url: 'acme-robotics' });
    expect([refused.status, refusedToo.status]).toContain(429);
    expect((await admin.workspace(workspaceId)).balance).toBe(100 - 6 - [refused, refusedToo].filter((r) => r.status === 200).length);
  });

  it('one slot count per workspace across both instances', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 100 });
    for (const instance of [a, b]) expect((await lookup(instance, key, { url: 'acme-robotics' })).status).toBe(200);
    await admin.setMaxConcurrency(workspaceId, 1);
    // Both instances hear of the change (NOTIFY); then A holds the one slot with a slow live fetch.
    expect(await eventually(async () => (await lookup(b, key, { url: 'acme-robotics' })).status === 200, 10_000)).toBe(true);
    let slowDone = false;
    const hitsBefore = servers.sourceHits();
    const slow = lookup(a, key, { url: 'sandbox-slow', max_age: 0 }).finally(() => {
      slowDone = true;
    });
    // Once its fetch reached the source it holds the slot; while it runs, B's cache hits are refused.
    expect(await eventually(async () => servers.sourceHits() > hitsBefore, 10_000)).toBe(true);
    let refused: Awaited<ReturnType<typeof lookup>> | undefined;
    while (!refused && !slowDone) {
      const answer = await lookup(b, key, { url: 'acme-robotics' });
      if (answer.status !== 200) refused = answer;
    }
    const slowAnswer = await slow;
    expect(slowAnswer.status, JSON.stringify(slowAnswer.body)).toBe(200);
    expect(refused?.status).toBe(429);
    expect(refused?.body.error.code).toBe('concurrency_limited');
    expect((await lookup(b, key, { url: 'acme-robotics' })).status).toBe(200);
  });

  it('an entry refreshed through A is what B answers once the old copy is too old for the max_age asked; B never answers an older copy', async () => {
    const { key } = await admin.keyedWorkspace({ credits: 100 });
    const url = 'globex';
    const first = await lookup(a, key, { url });
    expect(first.status).toBe(200);
    const oldFetchedAt = first.body.meta.cache.fetched_at as string;
    // B keeps the old copy in memory (read once from the database, then answered from memory).
    for (let i = 0; i < 2; i++) {
      const hit = await lookup(b, key, { url });
      expect(hit.headers['x-cache']).toBe('HIT');
      expect(hit.body.meta.cache.fetched_at).toBe(oldFetchedAt);
    }
    // Let the old copy age past 1 s, then refresh it through A.
    await new Promise((r) => setTimeout(r, 2_100));
    const refreshed = await lookup(a, key, { url, max_age: 0 });
    expect(refreshed.headers['x-cache']).toBe('REFRESH');
    const newFetchedAt = refreshed.body.meta.cache.fetched_at as string;
    expect(Date.parse(newFetchedAt)).toBeGreaterThan(Date.parse(oldFetchedAt));
    const hitsBefore = servers.sourceHits();

    // At once, notification or not: a max_age the old copy fails gets the new one, from the cache.
    const onB = await lookup(b, key, { url, max_age: 1 });
    expect(onB.status).toBe(200);
    expect(onB.headers['x-cache']).toBe('HIT');
    expect(onB.body.meta.cache.fetched_at).toBe(newFetchedAt);
    expect(onB.body.meta.cache.age_seconds).toBeLessThanOrEqual(1);
    expect(servers.sourceHits()).toBe(hitsBefore);

    // And with any max_age, B answers the new copy once the notification has dropped its old one.
    expect(await eventually(async () => (await lookup(b, key, { url })).body.meta.cache.fetched_at === newFetchedAt, 10_000)).toBe(true);
    // Never older than asked: each answer's age is within its max_age, computed from the real fetched_at.
    for (const maxAge of [1, 5, 3600]) {
      const answer = await lookup(b, key, { url, max_age: maxAge });
      expect(answer.body.meta.cache.age_seconds).toBeLessThanOrEqual(maxAge);
      expect(Number(answer.headers.age)).toBe(answer.body.meta.cache.age_seconds);
    }
  });
});
