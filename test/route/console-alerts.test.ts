// Balance alerts' settings and the console's 402 banner through app.inject, by answer status:
// the threshold on the admin API and the console (owners), and the last 402 in the overview.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function signedIn(workspaceId: string, email: string, role: 'owner' | 'member') {
  const invitation = await t.call('POST', `/admin/v1/workspaces/${workspaceId}/invitations`, { headers: admin, body: { email, role } });
  const accepted = await t.call('POST', '/console/v1/invitations/accept', { body: { token: new URL(invitation.json().link).searchParams.get('token'), password: `${role} password 123456` } });
  expect(accepted.statusCode, accepted.body).toBe(200);
  return { cookie: String(accepted.headers['set-cookie']).split(';')[0]!, csrf: accepted.json().csrf_token as string };
}

describe('200', () => {
  it('the operator sets, reads and removes the threshold on the workspace; max_concurrency is left as it was', async () => {
    const { workspaceId } = await t.keyed({ credits: 50, maxConcurrency: 3 });
    const set = await t.call('PATCH', `/admin/v1/workspaces/${workspaceId}`, { headers: admin, body: { low_balance_threshold: 20 } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ id: workspaceId, max_concurrency: 3, low_balance_threshold: 20 });
    expect((await t.call('GET', `/admin/v1/workspaces/${workspaceId}`, { headers: admin })).json().low_balance_threshold).toBe(20);
    const both = await t.call('PATCH', `/admin/v1/workspaces/${workspaceId}`, { headers: admin, body: { low_balance_threshold: null, max_concurrency: 4 } });
    expect(both.json()).toMatchObject({ max_concurrency: 4, low_balance_threshold: null });
  });

  it('an owner sets it in the console; the overview shows it, and the last 402 a caller got', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 0 });
    const owner = await signedIn(workspaceId, 'owner-alerts@example.com', 'owner');
    const before = await t.call('GET', '/console/v1/overview', { headers: { cookie: owner.cookie } });
    expect(before.json()).toMatchObject({ last_insufficient_credits: null, low_balance_threshold: null });

    const refused = await t.call('POST', '/v1/company', { headers, body: { url: 'https://www.linkedin.com/company/acme-robotics' } });
    expect(refused.statusCode).toBe(402);
    const set = await t.call('PATCH', '/console/v1/alerts', { headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf }, body: { low_balance_threshold: 15 } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ low_balance_threshold: 15 });

    // The 402's record is written after its answer: give it a moment.
    await expect
      .poll(async () => (await t.call('GET', '/console/v1/overview', { headers: { cookie: owner.cookie } })).json().last_insufficient_credits)
      .toMatchObject({ request_id: refused.headers['x-request-id'], path: '/v1/company' });
    expect((await t.call('GET', '/console/v1/overview', { headers: { cookie: owner.cookie } })).json().low_balance_threshold).toBe(15);
  });
});

describe('400', () => {
  it('a negative, fractional or missing threshold, or an empty patch, is refused', async () => {
    const { workspaceId } = await t.keyed({ credits: 1 });
    for (const body of [{ low_balance_threshold: -1 }, { low_balance_threshold: 1.5 }, { low_balance_threshold: '10' }, {}]) {
      const answer = await t.call('PATCH', `/admin/v1/workspaces/${workspaceId}`, { headers: admin, body });
      expect(answer.statusCode, JSON.stringify(body)).toBe(400);
      expect(answer.json().error.code).toBe('invalid_request');
    }
    const owner = await signedIn(workspaceId, 'owner-400@example.com', 'owner');
    const bad = await t.call('PATCH', '/console/v1/alerts', { headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf }, body: {} });
    expect(bad.statusCode).toBe(400);
  });
});

describe('403', () => {
  it('a member who is not an owner cannot change it', async () => {
    const { workspaceId } = await t.keyed({ credits: 1 });
    await signedIn(workspaceId, 'first-owner@example.com', 'owner');
    const member = await signedIn(workspaceId, 'just-member@example.com', 'member');
    const answer = await t.call('PATCH', '/console/v1/alerts', { headers: { cookie: member.cookie, 'x-csrf-token': member.csrf }, body: { low_balance_threshold: 5 } });
    expect(answer.statusCode).toBe(403);
    expect(answer.json().error.reason).toBe('not_owner');
  });
});

describe('404', () => {
  it('an unknown workspace', async () => {
    const answer = await t.call('PATCH', '/admin/v1/workspaces/ws_00000000000000000000000000', { headers: admin, body: { low_balance_threshold: 5 } });
    expect(answer.statusCode).toBe(404);
  });
});
