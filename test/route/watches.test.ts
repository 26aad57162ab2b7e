// Watches through app.inject, by answer status: creating and reading them is free, a refresh is
// charged like a live lookup and reports a change of content_hash; out of credits pauses them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

async function withEndpoint(credits = 10) {
  const keyed = await t.keyed({ credits });
  const endpoint = await t.call('POST', '/v1/webhook-endpoints', { headers: keyed.headers, body: { url: 'https://hooks.example.com/h', event_types: ['profile.changed'] } });
  return { ...keyed, endpointId: endpoint.json().data.id as string };
}

describe('201', () => {
  it('a watch on a company, free, scheduled one interval ahead, measured against what the cache holds', async () => {
    const { headers, workspaceId, endpointId } = await withEndpoint();
    expect((await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } })).statusCode).toBe(200);
    const created = await t.call('POST', '/v1/watches', { headers, body: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpointId } });
    expect(created.statusCode, created.body).toBe(201);
    const watch = created.json().data;
    expect(watch).toMatchObject({ operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpointId, state: 'active', paused_reason: null, last_run_at: null });
    expect(watch.content_hash).toMatch(/^sha256:/);
    expect(Date.parse(watch.next_run_at) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(await t.balance(workspaceId)).toBe(9);
  });
});

describe('200', () => {
  it('a refresh now is charged like a live lookup, under its own request id; a changed profile says so', async () => {
    const { headers, workspaceId, endpointId } = await withEndpoint();
    const { data: watch } = (await t.call('POST', '/v1/watches', { headers, body: { operation: 'company', body: { url: 'sandbox-changing' }, every: '1d', webhook_endpoint_id: endpointId } })).json();
    expect(watch.content_hash).toBeNull();
    const first = await t.call('POST', `/v1/watches/${watch.id}/run`, { headers });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().meta).toMatchObject({ changed: false, credits_charged: 1, credits_remaining: 9 });
    expect(first.json().meta.refresh_request_id).toBe(first.headers['x-request-id']);
    expect(first.headers).toMatchObject({ 'x-credits-charged': '1', 'x-credits-remaining': '9' });
    const second = await t.call('POST', `/v1/watches/${watch.id}/run`, { headers });
    expect(second.json().meta).toMatchObject({ changed: true, credits_charged: 1, credits_remaining: 8 });
    expect(second.json().data.content_hash).not.toBe(first.json().data.content_hash);
    expect(second.json().data.last_request_id).toBe(second.headers['x-request-id']);
    expect(await t.balance(workspaceId)).toBe(8);

    expect((await t.call('GET', '/v1/watches', { headers })).json().data.map((w: { id: string }) => w.id)).toEqual([watch.id]);
    expect((await t.call('GET', `/v1/watches/${watch.id}`, { headers })).json().data.id).toBe(watch.id);
    expect((await t.call('DELETE', `/v1/watches/${watch.id}`, { headers })).json().data).toEqual({ id: watch.id, deleted: true });
    expect((await t.call('GET', '/v1/watches', { headers })).json().data).toEqual([]);
  });
});

describe('deleting the webhook endpoint', () => {
  it("deletes the watches that deliver to it, says which, and appends WatchDeleted with the reason; other endpoints' watches stay", async () => {
    const { headers, workspaceId, endpointId } = await withEndpoint();
    const other = (await t.call('POST', '/v1/webhook-endpoints', { headers, body: { url: 'https://hooks.example.com/other', event_types: ['profile.changed'] } })).json().data.id as string;
    const watch = async (webhook_endpoint_id: string) =>
      (await t.call('POST', '/v1/watches', { headers, body: { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id } })).json().data.id as string;
    const gone = await watch(endpointId);
    expect((await t.call('DELETE', `/v1/watches/${gone}`, { headers })).statusCode).toBe(200);
    const first = await watch(endpointId);
    const kept = await watch(other);
    const second = await watch(endpointId);
    const balance = await t.balance(workspaceId);

    const deleted = await t.call('DELETE', `/v1/webhook-endpoints/${endpointId}`, { headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json().data).toEqual({ id: endpointId, deleted: true, deleted_watches: [first, second] });

    expect((await t.call('GET', '/v1/watches', { headers })).json().data.map((w: { id: string }) => w.id)).toEqual([kept]);
    for (const id of [first, second]) {
      expect(errorOf(await t.call('GET', `/v1/watches/${id}`, { headers }))).toMatchObject({ status: 404, code: 'not_found' });
      expect(errorOf(await t.call('POST', `/v1/watches/${id}/run`, { headers }))).toMatchObject({ status: 404, code: 'not_found' });
      const events = await t.store.readStream(`watch-${id}`);
      expect(events.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
        ['WatchCreated', undefined],
        ['WatchDeleted', 'webhook_endpoint_deleted'],
      ]);
    }
    // A watch deleted by its own DELETE says so.
    expect((await t.store.readStream(`watch-${gone}`)).at(-1)!.data).toEqual({ watch_id: gone, workspace_id: workspaceId, reason: 'watch_deleted' });
    // Off the schedule: nothing is due, nothing charged.
    const { rows } = await t.store.sql.query<{ id: string }>('SELECT id FROM watches WHERE workspace_id = $1 AND deleted_at IS NULL', [workspaceId]);
    expect(rows.map((r) => r.id)).toEqual([kept]);
    expect(await t.balance(workspaceId)).toBe(balance);

    // The endpoint is gone: a new watch on it is refused, and a second DELETE is a 404.
    const refused = await t.call('POST', '/v1/watches', { headers, body: { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpointId } });
    expect(refused.json().error).toMatchObject({ code: 'not_found', reason: 'no_webhook_endpoint' });
    expect(errorOf(await t.call('DELETE', `/v1/webhook-endpoints/${endpointId}`, { headers }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('with no watch on it, deletes none', async () => {
    const { headers, endpointId } = await withEndpoint();
    expect((await t.call('DELETE', `/v1/webhook-endpoints/${endpointId}`, { headers })).json().data).toEqual({ id: endpointId, deleted: true, deleted_watches: [] });
  });
});

describe('400', () => {
  it('a reference of the wrong kind, an interval not offered, an operation not watchable', async () => {
    const { headers, endpointId } = await withEndpoint();
    const create = (body: object) => t.call('POST', '/v1/watches', { headers, body: { every: '1d', webhook_endpoint_id: endpointId, ...body } });
    expect(errorOf(await create({ operation: 'company', body: { url: 'https://linkedin.com/in/jane' } })).code).toBe('invalid_company_reference');
    expect(errorOf(await create({ operation: 'person', body: { url: 'ACoAAB1234' } })).code).toBe('invalid_person_reference');
    expect(errorOf(await create({ operation: 'domain', body: { domain: '127.0.0.1' } })).code).toBe('invalid_domain');
    expect(errorOf(await create({ operation: 'company', body: { url: 'acme' }, every: '2d' })).code).toBe('invalid_request');
    expect(errorOf(await create({ operation: 'search', body: { query: 'acme' } })).code).toBe('invalid_request');
  });
});

describe('401', () => {
  it('without a key', async () => {
    expect(errorOf(await t.call('GET', '/v1/watches'))).toMatchObject({ status: 401, code: 'unauthorized' });
  });
});

describe('402', () => {
  it('a refresh the balance cannot pay pauses the watch, which says so; credits and a refresh resume it', async () => {
    const { headers, workspaceId, endpointId } = await withEndpoint(1);
    const { data: watch } = (await t.call('POST', '/v1/watches', { headers, body: { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpointId } })).json();
    expect((await t.call('POST', `/v1/watches/${watch.id}/run`, { headers })).statusCode).toBe(200);
    const refused = await t.call('POST', `/v1/watches/${watch.id}/run`, { headers });
    expect(errorOf(refused)).toMatchObject({ status: 402, code: 'insufficient_credits', charged: 0, remaining: 0 });
    expect((await t.call('GET', `/v1/watches/${watch.id}`, { headers })).json().data).toMatchObject({ state: 'paused', paused_reason: 'insufficient_credits' });
    await t.ledger.grantCredits(workspaceId, 5, 'top-up');
    const resumed = await t.call('POST', `/v1/watches/${watch.id}/run`, { headers });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json().data).toMatchObject({ state: 'active', paused_reason: null });
  });
});

describe('404', () => {
  it("an endpoint of another workspace, another workspace's watch", async () => {
    const mine = await withEndpoint();
    const theirs = await withEndpoint();
    const refused = await t.call('POST', '/v1/watches', { headers: mine.headers, body: { operation: 'company', body: { url: 'acme' }, every: '1d', webhook_endpoint_id: theirs.endpointId } });
    expect(refused.json().error).toMatchObject({ code: 'not_found', reason: 'no_webhook_endpoint' });
    const { data: watch } = (await t.call('POST', '/v1/watches', { headers: theirs.headers, body: { operation: 'company', body: { url: 'acme' }, every: '1d', webhook_endpoint_id: theirs.endpointId } })).json();
    for (const [method, path] of [['GET', `/v1/watches/${watch.id}`], ['DELETE', `/v1/watches/${watch.id}`], ['POST', `/v1/watches/${watch.id}/run`]] as const) {
      const answer = await t.call(method, path, { headers: mine.headers });
      expect(errorOf(answer), path).toMatchObject({ status: 404, code: 'not_found' });
      expect(answer.json().error.reason).toBe('no_watch');
    }
  });
});
