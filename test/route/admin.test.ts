// The admin API through app.inject, by answer status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('200 and 201', () => {
  it('a workspace is created, read, changed, credited, keyed; its keys, usage and ledger are listed; a key is revoked', async () => {
    const created = await t.call('POST', '/admin/v1/workspaces', { headers: admin, body: { name: 'acme', credits: 5 } });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json();
    expect(created.json()).toEqual({ id, name: 'acme', balance: 5, max_concurrency: 8 });
    expect(created.headers['cache-control']).toBe('no-store');
    expect((await t.call('GET', `/admin/v1/workspaces/${id}`, { headers: admin })).json()).toMatchObject({ id, balance: 5 });
    expect((await t.call('PATCH', `/admin/v1/workspaces/${id}`, { headers: admin, body: { max_concurrency: 2 } })).json()).toMatchObject({ max_concurrency: 2 });
    const granted = await t.call('POST', `/admin/v1/workspaces/${id}/credits`, { headers: admin, body: { amount: 10 } });
    expect([granted.statusCode, granted.json()]).toEqual([201, { balance: 15 }]);
    const key = await t.call('POST', `/admin/v1/workspaces/${id}/keys`, { headers: admin, body: { name: 'k' } });
    expect(key.statusCode).toBe(201);
    expect((await t.call('GET', `/admin/v1/workspaces/${id}/keys`, { headers: admin })).json().data).toHaveLength(1);
    expect((await t.call('GET', `/admin/v1/workspaces/${id}/usage?from=2020-01-01`, { headers: admin })).json()).toEqual({ data: [] });
    const ledger = (await t.call('GET', `/admin/v1/workspaces/${id}/ledger?limit=1`, { headers: admin })).json();
    expect(ledger.data).toHaveLength(1);
    expect(ledger.next).toBe(ledger.data[0].position);
    const revoked = await t.call('POST', `/admin/v1/keys/${key.json().id}/revoke`, { headers: admin });
    expect(revoked.json()).toMatchObject({ id: key.json().id });
    expect((await t.call('POST', '/admin/v1/audit', { headers: admin })).json()).toMatchObject({ ok: true, mismatches: [] });
    expect((await t.call('GET', '/admin/v1/relay', { headers: admin })).json()).toEqual({ enabled: false });
  });
});

describe('200: revoking a key ends its watches', () => {
  it('the watches the key created are deleted with it (WatchDeleted, reason key_revoked), not those of the other keys; revoking again deletes none', async () => {
    const owner = await t.keyed();
    const otherKey = (await t.call('POST', `/admin/v1/workspaces/${owner.workspaceId}/keys`, { headers: admin, body: { name: 'other' } })).json();
    const other = { headers: { authorization: `Bearer ${otherKey.key}` } };
    const endpoint = (await t.call('POST', '/v1/webhook-endpoints', { headers: owner.headers, body: { url: 'https://hooks.example.com/revoke', event_types: ['profile.changed'] } })).json().data;
    const watchOf = async (headers: Record<string, string>, url: string) =>
      (await t.call('POST', '/v1/watches', { headers, body: { operation: 'company', body: { url }, every: '1d', webhook_endpoint_id: endpoint.id } })).json().data.id as string;
    const ownerWatches = [await watchOf(owner.headers, 'acme-robotics'), await watchOf(owner.headers, 'globex')];
    const kept = await watchOf(other.headers, 'initech');

    const revoked = await t.call('POST', `/admin/v1/keys/${owner.keyId}/revoke`, { headers: admin });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toEqual({ id: owner.keyId, revoked_at: expect.any(String), deleted_watches: ownerWatches });
    expect((await t.call('GET', '/v1/watches', { headers: other.headers })).json().data.map((w: { id: string }) => w.id)).toEqual([kept]);
    for (const id of ownerWatches) {
      expect((await t.store.readStream(`watch-${id}`)).map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([['WatchCreated', undefined], ['WatchDeleted', 'key_revoked']]);
    }
    const again = await t.call('POST', `/admin/v1/keys/${owner.keyId}/revoke`, { headers: admin });
    expect(again.json()).toEqual({ id: owner.keyId, revoked_at: revoked.json().revoked_at, deleted_watches: [] });
  });
});

describe('400', () => {
  it('a bad id, query or body', async () => {
    const ws = await t.workspaces.create({ name: 'bad input' });
    const badId = await t.call('GET', `/admin/v1/workspaces/${'x'.repeat(101)}`, { headers: admin });
    expect(errorOf(badId)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(badId.json().error.details[0].field).toBe('id');
    const badQuery = await t.call('GET', `/admin/v1/workspaces/${ws.id}/ledger?limit=0`, { headers: admin });
    expect(badQuery.json().error.details).toEqual([expect.objectContaining({ field: 'limit', issue: 'too_small' })]);
    expect(errorOf(await t.call('POST', '/admin/v1/workspaces', { headers: admin, body: {} })).code).toBe('invalid_request');
  });
});

describe('401', () => {
  it('without the admin token, on known and unknown admin paths alike', async () => {
    const known = await t.call('GET', '/admin/v1/relay');
    expect(errorOf(known)).toMatchObject({ status: 401, code: 'unauthorized', remaining: null });
    expect(known.headers['www-authenticate']).toBe('Bearer');
    expect(errorOf(await t.call('GET', '/admin/v1/nothing', { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status).toBe(401);
  });
});

describe('404', () => {
  it('an unknown workspace or key is not_found with its reason; an unknown admin path is route_not_found', async () => {
    const ws = await t.call('GET', '/admin/v1/workspaces/ws_nope', { headers: admin });
    expect(errorOf(ws)).toMatchObject({ status: 404, code: 'not_found' });
    expect(ws.json().error.reason).toBe('no_workspace');
    const key = await t.call('POST', '/admin/v1/keys/key_nope/revoke', { headers: admin });
    expect(key.json().error.reason).toBe('no_key');
    expect(errorOf(await t.call('GET', '/admin/v1/nothing', { headers: admin })).code).toBe('route_not_found');
  });
});

describe('finance: statements, balances at an instant, exports', () => {
  it('a statement as JSON and as CSV lines that add up to it; the workspace and ledger as they stood at an instant; every ledger line for exports', async () => {
    const ws = await t.workspaces.create({ name: 'finance', credits: 20 });
    const key = await t.keys.create(ws.id, {});
    const before = await t.workspaces.get(ws.id);
    const requestId = `req_${'0'.repeat(26)}`;
    await t.ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'person_name', credits: 3 });
    await t.ledger.settle({
      workspaceId: ws.id, requestId, keyId: key.id, operation: 'person_name', refund: { owed: 2, cause: 'not_found_price' },
      completed: { outcome: 'not_found', cache_status: 'MISS', credits_charged: 1, error_code: 'not_found' },
    });
    const range = 'from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z';

    const json = await t.call('GET', `/admin/v1/workspaces/${ws.id}/statement?${range}`, { headers: admin });
    expect(json.statusCode, json.body).toBe(200);
    expect(json.json()).toMatchObject({ opening_balance: 0, credits_granted: 20, charged: 3, refunded: 2, closing_balance: 19, calls: 1, entries: 3 });

    const csv = await t.call('GET', `/admin/v1/workspaces/${ws.id}/statement?${range}&format=csv`, { headers: admin });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const [header, ...lines] = csv.body.trim().split('\r\n');
    expect(header).toBe('position,recorded_at,type,operation,request_id,key_id,credits,balance_after,event_hash');
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => Number(l.split(',')[6])).reduce((a, b) => a + b, 0)).toBe(json.json().closing_balance - json.json().opening_balance);

    // At the instant of each entry, the balance is the running balance of the last entry recorded by then.
    const now = (await t.call('GET', `/admin/v1/workspaces/${ws.id}/ledger`, { headers: admin })).json().data as { recorded_at: string; balance_after: number }[];
    for (const entry of now) {
      const then = await t.call('GET', `/admin/v1/workspaces/${ws.id}?as_of=${encodeURIComponent(entry.recorded_at)}`, { headers: admin });
      expect(then.json()).toEqual({ ...before, balance: now.filter((e) => e.recorded_at <= entry.recorded_at).at(-1)!.balance_after });
    }
    const ledgerThen = await t.call('GET', `/admin/v1/workspaces/${ws.id}/ledger?as_of=2999-01-01T00:00:00Z&limit=2`, { headers: admin });
    expect(ledgerThen.json()).toMatchObject({ data: [{ credits: 20, balance_after: 20 }, { credits: -3, balance_after: 17 }], next: expect.any(Number) });
    expect(errorOf(await t.call('GET', `/admin/v1/workspaces/${ws.id}?as_of=2000-01-01T00:00:00Z`, { headers: admin })).status).toBe(404);

    const exported = (await t.call('GET', `/admin/v1/ledger?${range}&limit=10000`, { headers: admin })).json();
    expect(exported.data.filter((l: { workspace_id: string }) => l.workspace_id === ws.id)).toHaveLength(3);
    expect((await t.call('GET', `/admin/v1/usage?${range}`, { headers: admin })).statusCode).toBe(200);

    const backwards = await t.call('GET', `/admin/v1/workspaces/${ws.id}/statement?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z`, { headers: admin });
    expect(errorOf(backwards)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(errorOf(await t.call('GET', `/admin/v1/workspaces/${ws.id}/statement?from=yesterday&to=2025-01-01T00:00:00Z`, { headers: admin })).status).toBe(400);
  });
});

describe('audit jobs', () => {
  /** The job until it is no longer running (the embedded database audits in process, in moments). */
  async function finished(id: string) {
    for (;;) {
      const answer = await t.call('GET', `/admin/v1/audits/${id}`, { headers: admin });
      expect(answer.statusCode, answer.body).toBe(200);
      if (answer.json().state !== 'running') return answer.json();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  const metric = async (line: RegExp) => Number(line.exec((await t.call('GET', '/metrics', { headers: admin })).body)?.[1] ?? 0);

  it('202 starts one, with its Location; a start while it runs is 200 with the running one; when done, 200 with the report POST /admin/v1/audit gives', async () => {
    const auditsBefore = await metric(/^lookup_api_audit_duration_seconds_count\{outcome="ok"\} (\d+)$/m);
    const [first, second] = await Promise.all([t.call('POST', '/admin/v1/audits', { headers: admin }), t.call('POST', '/admin/v1/audits', { headers: admin })]);
    expect(first!.statusCode, first!.body).toBe(202);
    const job = first!.json();
    expect(job).toMatchObject({ id: expect.stringMatching(/^aud_[0-9A-Z]{26}$/), state: 'running', finished_at: null, report: null, error: null });
    expect(first!.headers.location).toBe(`/admin/v1/audits/${job.id}`);
    expect(first!.headers['cache-control']).toBe('no-store');
    expect(second!.statusCode, second!.body).toBe(200);
    expect(second!.json().id).toBe(job.id);
    expect(second!.headers.location).toBe(`/admin/v1/audits/${job.id}`);

    const done = await finished(job.id);
    const synchronous = (await t.call('POST', '/admin/v1/audit', { headers: admin })).json();
    expect(done).toMatchObject({ state: 'done', phase: null, events_read: synchronous.events, position: done.head_position, percent: 100, error: null });
    expect(done.report).toEqual(synchronous);
    expect(Date.parse(done.finished_at) - Date.parse(done.started_at)).toBe(done.elapsed_ms);
    // Both audits, the job's and the synchronous one, are measured; none runs now.
    expect(await metric(/^lookup_api_audit_duration_seconds_count\{outcome="ok"\} (\d+)$/m)).toBe(auditsBefore + 2);
    expect(await metric(/^lookup_api_audits_running (\d+)$/m)).toBe(0);
    expect(await metric(/^lookup_api_audit_events_per_second (\d+)$/m)).toBeGreaterThan(0);

    // Finished, it no longer blocks a new one.
    const next = await t.call('POST', '/admin/v1/audits', { headers: admin });
    expect(next.statusCode).toBe(202);
    expect(next.json().id).not.toBe(job.id);
    await finished(next.json().id);
  });

  it('400 for an id that is no id; 404 for no such job; 401 without the token', async () => {
    const bad = await t.call('GET', `/admin/v1/audits/${'x'.repeat(101)}`, { headers: admin });
    expect(errorOf(bad)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(bad.json().error.details[0].field).toBe('id');
    const unknown = await t.call('GET', '/admin/v1/audits/aud_01J00000000000000000000000', { headers: admin });
    expect(errorOf(unknown)).toMatchObject({ status: 404, code: 'not_found' });
    expect(unknown.json().error.reason).toBe('no_audit');
    expect(errorOf(await t.call('POST', '/admin/v1/audits')).status).toBe(401);
    expect(errorOf(await t.call('GET', '/admin/v1/audits/aud_01J00000000000000000000000')).status).toBe(401);
  });
});
