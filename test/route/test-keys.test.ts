// Test keys (lk_test_…) through app.inject, by answer status: created by the admin API, answered
// from the sandbox network while live keys fetch from a source that is down, never charged,
// never through the cache, kept apart in the ledger and statements.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, errorOf, startRouteApp, type RouteApp } from './support';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
let t: RouteApp;
let liveSource: ReturnType<typeof createServer>;
let liveSourceHits = 0;

beforeAll(async () => {
  // The live keys' source: answers 500 to everything, and counts what reaches it.
  liveSource = createServer((_req, res) => {
    liveSourceHits++;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => liveSource.listen(0, '127.0.0.1', resolve));
  // Building the sandbox's world on the first call stalls this process's loop for a second or two on
  // a busy machine: shedding is not what is tested here.
  t = await startRouteApp({ liveSourceUrl: `http://127.0.0.1:${(liveSource.address() as AddressInfo).port}`, env: { MAX_EVENT_LOOP_DELAY_MS: '60000' } });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => liveSource?.close(resolve));
});

/** A workspace with `credits`, a live key and a test key made by the admin API. */
async function workspaceWithKeys(credits: number, testKey: { rate_limit_per_minute?: number } = {}) {
  const ws = await t.call('POST', '/admin/v1/workspaces', { headers: admin, body: { name: 'test keys', credits } });
  const id = ws.json().id as string;
  const live = await t.call('POST', `/admin/v1/workspaces/${id}/keys`, { headers: admin, body: {} });
  const test = await t.call('POST', `/admin/v1/workspaces/${id}/keys`, { headers: admin, body: { name: 'ci', mode: 'test', ...testKey } });
  return {
    id,
    live: { headers: { authorization: `Bearer ${live.json().key}` }, keyId: live.json().id as string },
    test: { headers: { authorization: `Bearer ${test.json().key}` }, keyId: test.json().id as string, created: test },
  };
}

describe('201 and 200: creating and listing', () => {
  it('a test key is created like a live one, says its mode, and is listed with it', async () => {
    const { id, test } = await workspaceWithKeys(0);
    expect(test.created.statusCode).toBe(201);
    expect(test.created.json()).toMatchObject({ key: expect.stringMatching(/^lk_test_[A-Za-z0-9]{32}$/), prefix: expect.stringMatching(/^lk_test_/), mode: 'test', name: 'ci' });
    const list = await t.call('GET', `/admin/v1/workspaces/${id}/keys`, { headers: admin });
    expect(list.json().data.map((k: { mode: string }) => k.mode)).toEqual(['live', 'test']);
  });

  it("a test key manages its workspace's webhook endpoints and lists, reads and deletes its watches, all free", async () => {
    const { id, live, test } = await workspaceWithKeys(5);
    const endpoint = await t.call('POST', '/v1/webhook-endpoints', { headers: test.headers, body: { url: 'https://hooks.example.com/h', event_types: ['profile.changed'] } });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const endpointId = endpoint.json().data.id as string;
    expect((await t.call('GET', '/v1/webhook-endpoints', { headers: test.headers })).json().data.map((e: { id: string }) => e.id)).toEqual([endpointId]);
    const created = await t.call('POST', '/v1/watches', { headers: live.headers, body: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpointId } });
    expect(created.statusCode, created.body).toBe(201);
    const watchId = created.json().data.id as string;
    expect((await t.call('GET', '/v1/watches', { headers: test.headers })).json().data.map((w: { id: string }) => w.id)).toEqual([watchId]);
    expect((await t.call('GET', `/v1/watches/${watchId}`, { headers: test.headers })).statusCode).toBe(200);
    expect((await t.call('DELETE', `/v1/watches/${watchId}`, { headers: test.headers })).json().data).toEqual({ id: watchId, deleted: true });
    expect(await t.balance(id)).toBe(5);
  });
});

describe('200: calls', () => {
  it('a workspace with 0 credits: its test key is answered from the sandbox at 0 credits, every time live (no cache); the live source is never asked', async () => {
    const { id, test } = await workspaceWithKeys(0);
    const before = liveSourceHits;
    for (let i = 0; i < 2; i++) {
      const answer = await t.call('POST', '/v1/company', { headers: test.headers, body: { url: 'acme-robotics' } });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json()).toMatchObject({ data: { name: expect.any(String) }, meta: { cache: { status: 'MISS', age_seconds: 0 }, credits_charged: 0, credits_remaining: 0 } });
      expect(answer.headers).toMatchObject({ 'x-credits-charged': '0', 'x-credits-remaining': '0', 'x-cache': 'MISS' });
    }
    expect(liveSourceHits).toBe(before);
    expect(await t.balance(id)).toBe(0);
  });

  it('each operation: 0 credits with a test key, whatever its price', async () => {
    const { id, test } = await workspaceWithKeys(0);
    const domain = await t.call('POST', '/v1/domain', { headers: test.headers, body: { domain: 'globex.com' } });
    const person = await t.call('POST', '/v1/person', { headers: test.headers, body: { url: 'Jane Doe' } });
    const search = await t.call('POST', '/v1/search', { headers: test.headers, body: { query: 'acme', limit: 2 } });
    for (const answer of [domain, person, search]) expect([answer.statusCode, answer.json().meta.credits_charged]).toEqual([200, 0]);
    expect(await t.balance(id)).toBe(0);
  });

  it('the cache checks of a test key see no cache, and its calls put nothing into the live one', async () => {
    const { live, test } = await workspaceWithKeys(0);
    await t.call('POST', '/v1/company', { headers: test.headers, body: { url: 'initech' } });
    for (const headers of [test.headers, live.headers]) {
      const check = await t.call('POST', '/v1/cache/company', { headers, body: { url: 'initech' } });
      expect(check.json().data).toMatchObject({ cached: false });
    }
    const stats = await t.call('GET', '/v1/cache/stats', { headers: test.headers });
    expect(stats.json().data).toMatchObject({ entries: 0 });
  });

  it('an Idempotency-Key replays a test key\'s answer; the same key sent by the live key of the workspace is a new call', async () => {
    const { live, test } = await workspaceWithKeys(5);
    const withKey = (h: Record<string, string>) => ({ ...h, 'idempotency-key': 'test-keys-replay' });
    const first = await t.call('POST', '/v1/company', { headers: withKey(test.headers), body: { url: 'globex' } });
    const again = await t.call('POST', '/v1/company', { headers: withKey(test.headers), body: { url: 'globex' } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    const liveCall = await t.call('POST', '/v1/company', { headers: withKey(live.headers), body: { url: 'globex' } });
    expect(liveCall.headers['idempotent-replayed']).toBeUndefined();
    expect(errorOf(liveCall)).toMatchObject({ status: 502, code: 'upstream_error', charged: 0, remaining: 5 });
  });

  it('the ledger and the statement leave test calls out by default; mode=test and mode=all show them, at 0 credits', async () => {
    const { id, test } = await workspaceWithKeys(3);
    const call = await t.call('POST', '/v1/company', { headers: test.headers, body: { url: 'acme-robotics' } });
    const requestId = call.json().meta.request_id as string;
    const byDefault = await t.call('GET', `/admin/v1/workspaces/${id}/ledger`, { headers: admin });
    expect(byDefault.json().data.map((l: { type: string; mode: string }) => [l.type, l.mode])).toEqual([['CreditsGranted', 'live']]);
    const tests = await t.call('GET', `/admin/v1/workspaces/${id}/ledger?mode=test`, { headers: admin });
    expect(tests.json().data).toEqual([expect.objectContaining({ type: 'LookupCharged', request_id: requestId, key_id: test.keyId, credits: 0, balance_after: 3, mode: 'test' })]);
    const all = await t.call('GET', `/admin/v1/workspaces/${id}/ledger?mode=all`, { headers: admin });
    expect(all.json().data).toHaveLength(2);

    const period = `from=2000-01-01T00:00:00Z&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`;
    const statement = await t.call('GET', `/admin/v1/workspaces/${id}/statement?${period}`, { headers: admin });
    expect(statement.json()).toMatchObject({ credits_granted: 3, charged: 0, calls: 0, closing_balance: 3, entries: 1 });
    const withTests = await t.call('GET', `/admin/v1/workspaces/${id}/statement?${period}&mode=all`, { headers: admin });
    expect(withTests.json()).toMatchObject({ credits_granted: 3, charged: 0, calls: 1, closing_balance: 3, entries: 2 });
  });
});

describe('4xx and 5xx: the errors a client tests its handling of, never charged', () => {
  it('a sandbox failure trigger answers the live error with its Retry-After, 0 credits', async () => {
    const { id, test } = await workspaceWithKeys(0);
    expect(errorOf(await t.call('POST', '/v1/company', { headers: test.headers, body: { url: 'sandbox-upstream-error' } }))).toMatchObject({ status: 502, code: 'upstream_error', charged: 0, remaining: 0 });
    const blocked = await t.call('POST', '/v1/company', { headers: test.headers, body: { url: 'sandbox-blocked' } });
    expect(errorOf(blocked)).toMatchObject({ code: 'blocked', charged: 0 });
    expect(blocked.headers['retry-after']).toBe('30');
    expect(errorOf(await t.call('POST', '/v1/company', { headers: test.headers, body: { url: 'no-such-company-anywhere' } }))).toMatchObject({ status: 404, code: 'not_found', charged: 0 });
    expect(await t.balance(id)).toBe(0);
  });

  it('429: a test key has its own rate limit', async () => {
    const { test } = await workspaceWithKeys(0, { rate_limit_per_minute: 1 });
    expect((await t.call('GET', '/v1/cache/stats', { headers: test.headers })).statusCode).toBe(200);
    expect(errorOf(await t.call('GET', '/v1/cache/stats', { headers: test.headers }))).toMatchObject({ status: 429, code: 'rate_limited' });
  });

  it('403: a test key may not create a watch nor run one now (its refreshes are live, charged lookups), 0 charged', async () => {
    const { id, live, test } = await workspaceWithKeys(5);
    const endpointId = (await t.call('POST', '/v1/webhook-endpoints', { headers: live.headers, body: { url: 'https://hooks.example.com/h', event_types: ['profile.changed'] } })).json().data.id as string;
    const watchBody = { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpointId };
    const refused = await t.call('POST', '/v1/watches', { headers: test.headers, body: watchBody });
    expect(errorOf(refused)).toMatchObject({ status: 403, code: 'forbidden', charged: 0, remaining: 5 });
    expect(refused.json().error.reason).toBe('test_key');
    const watchId = (await t.call('POST', '/v1/watches', { headers: live.headers, body: watchBody })).json().data.id as string;
    const run = await t.call('POST', `/v1/watches/${watchId}/run`, { headers: test.headers });
    expect(errorOf(run)).toMatchObject({ status: 403, code: 'forbidden', charged: 0, remaining: 5 });
    expect(run.json().error.reason).toBe('test_key');
    expect((await t.call('GET', `/v1/watches/${watchId}`, { headers: test.headers })).json().data).toMatchObject({ last_run_at: null });
    expect(await t.balance(id)).toBe(5);
  });

  it('401: a made-up test key is no key', async () => {
    const answer = await t.call('GET', '/v1/cache/stats', { headers: { authorization: `Bearer lk_test_${'Z'.repeat(32)}` } });
    expect(errorOf(answer)).toMatchObject({ status: 401 });
  });

  it('400: a key mode that is none', async () => {
    const ws = await t.call('POST', '/admin/v1/workspaces', { headers: admin, body: { name: 'bad mode' } });
    const answer = await t.call('POST', `/admin/v1/workspaces/${ws.json().id}/keys`, { headers: admin, body: { mode: 'sandbox' } });
    expect(errorOf(answer)).toMatchObject({ status: 400, code: 'invalid_request' });
  });
});
