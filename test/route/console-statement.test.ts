// The console's statement (GET /console/v1/statement) through app.inject, by answer status: the
// admin API's statement of the session's workspace, to the credit, for members and owners alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../services/common/ids';
import { ADMIN_TOKEN, errorOf, signedInMember as signIn, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const WHOLE = { from: '2000-01-01T00:00:00Z', to: '2999-01-01T00:00:00Z' };
const signedInMember = (workspaceId: string, email: string, role: 'owner' | 'member') => signIn(t, workspaceId, email, role);
const query = (period: { from: string; to: string }, extra = '') => `from=${encodeURIComponent(period.from)}&to=${encodeURIComponent(period.to)}${extra}`;

/** A workspace with a grant, a charge refunded in part and a plain charge, split by an instant between them. */
async function workspaceWithHistory(name: string) {
  const ws = await t.workspaces.create({ name, credits: 20 });
  const key = await t.keys.create(ws.id, {});
  const charged = newRequestId();
  await t.ledger.charge({ workspaceId: ws.id, requestId: charged, keyId: key.id, operation: 'person_name', credits: 3 });
  await t.ledger.settle({
    workspaceId: ws.id, requestId: charged, keyId: key.id, operation: 'person_name', refund: { owed: 2, cause: 'not_found_price' },
    completed: { outcome: 'not_found', cache_status: 'MISS', credits_charged: 1, error_code: 'not_found' },
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  const between = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await t.ledger.grantCredits(ws.id, 7);
  const second = newRequestId();
  await t.ledger.charge({ workspaceId: ws.id, requestId: second, keyId: key.id, operation: 'company', credits: 1 });
  return { id: ws.id, between };
}

describe('200', () => {
  it("gives a member and an owner the admin API's statement of their own workspace, as JSON and as CSV", async () => {
    const ws = await workspaceWithHistory('statement a');
    const member = await signedInMember(ws.id, 'member-a@example.com', 'member');
    const owner = await signedInMember(ws.id, 'owner-a@example.com', 'owner');

    const adminStatement = await t.call('GET', `/admin/v1/workspaces/${ws.id}/statement?${query(WHOLE)}`, { headers: admin });
    for (const who of [member, owner]) {
      const answer = await t.call('GET', `/console/v1/statement?${query(WHOLE)}`, { headers: { cookie: who.cookie } });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.json()).toEqual(adminStatement.json());
    }
    expect(adminStatement.json()).toMatchObject({ workspace_id: ws.id, opening_balance: 0, credits_granted: 27, charged: 4, refunded: 2, closing_balance: 25, calls: 2 });

    const csv = await t.call('GET', `/console/v1/statement?${query(WHOLE, '&format=csv')}`, { headers: { cookie: member.cookie } });
    const adminCsv = await t.call('GET', `/admin/v1/workspaces/${ws.id}/statement?${query(WHOLE, '&format=csv')}`, { headers: admin });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(adminCsv.headers['content-disposition']);
    expect(csv.body).toBe(adminCsv.body);
    expect(csv.body.trim().split('\r\n')).toHaveLength(1 + adminStatement.json().entries);
  });

  it('chains adjacent periods: the first one closes on what the next one opens with', async () => {
    const ws = await workspaceWithHistory('statement chain');
    const { cookie } = await signedInMember(ws.id, 'member-chain@example.com', 'member');
    const before = (await t.call('GET', `/console/v1/statement?${query({ from: WHOLE.from, to: ws.between })}`, { headers: { cookie } })).json();
    const after = (await t.call('GET', `/console/v1/statement?${query({ from: ws.between, to: WHOLE.to })}`, { headers: { cookie } })).json();
    expect(before).toMatchObject({ opening_balance: 0, credits_granted: 20, charged: 3, refunded: 2, closing_balance: 19, calls: 1 });
    expect(after).toMatchObject({ opening_balance: 19, credits_granted: 7, charged: 1, refunded: 0, closing_balance: 25, calls: 1 });
  });
});

describe('400', () => {
  it('a period that is not two instants, runs backwards, or names a workspace (the session decides it)', async () => {
    const ws = await workspaceWithHistory('statement bad input');
    const { cookie } = await signedInMember(ws.id, 'member-bad@example.com', 'member');
    const headers = { cookie };
    const notInstant = await t.call('GET', '/console/v1/statement?from=2025-06-01&to=2025-07-01T00:00:00Z', { headers });
    expect(errorOf(notInstant)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(notInstant.json().error.details[0].field).toBe('from');
    const backwards = await t.call('GET', '/console/v1/statement?from=2025-07-01T00:00:00Z&to=2025-06-01T00:00:00Z', { headers });
    expect(backwards.json().error.details).toEqual([expect.objectContaining({ field: 'to', issue: 'too_small' })]);
    const other = await t.workspaces.create({ name: 'someone else', credits: 50 });
    const named = await t.call('GET', `/console/v1/statement?${query(WHOLE)}&workspace_id=${other.id}`, { headers });
    expect(errorOf(named).status).toBe(400);
    expect(named.json().error.details).toEqual([expect.objectContaining({ field: 'workspace_id', issue: 'unknown_field' })]);
    expect(errorOf(await t.call('GET', `/console/v1/statement?${query(WHOLE, '&format=pdf')}`, { headers })).status).toBe(400);
  });
});

describe('401', () => {
  it('without a session, or with an ended one', async () => {
    const none = await t.call('GET', `/console/v1/statement?${query(WHOLE)}`);
    expect(errorOf(none)).toMatchObject({ status: 401, code: 'unauthorized' });
    const ws = await workspaceWithHistory('statement signed out');
    const { cookie } = await signedInMember(ws.id, 'member-out@example.com', 'member');
    const session = (await t.call('GET', '/console/v1/session', { headers: { cookie } })).json();
    expect((await t.call('DELETE', '/console/v1/session', { headers: { cookie, 'x-csrf-token': session.csrf_token } })).statusCode).toBe(204);
    expect(errorOf(await t.call('GET', `/console/v1/statement?${query(WHOLE)}`, { headers: { cookie } })).status).toBe(401);
  });
});
