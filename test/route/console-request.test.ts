// A call's whole story (GET /console/v1/requests/:id) through app.inject, by answer status: the
// session's workspace's calls only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../services/common/ids';
import { errorOf, signedInMember, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

/** A workspace whose one call was charged, failed and was refunded. */
async function workspaceWithRefundedCall(name: string) {
  const ws = await t.workspaces.create({ name, credits: 20 });
  const key = await t.keys.create(ws.id, {});
  const requestId = newRequestId();
  await t.ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'domain', credits: 4 });
  await t.ledger.settle({
    workspaceId: ws.id, requestId, keyId: key.id, operation: 'domain', refund: { owed: 4, cause: 'parse_error' },
    completed: { outcome: 'error', cache_status: 'MISS', credits_charged: 4, error_code: 'parse_error' },
  });
  return { id: ws.id, keyId: key.id, requestId };
}

describe('200', () => {
  it('tells a refunded call: its status, its charge and refund with balance_after, the events it appended', async () => {
    const ws = await workspaceWithRefundedCall('story a');
    const member = await signedInMember(t, ws.id, 'member-story@example.com', 'member');
    const answer = await t.call('GET', `/console/v1/requests/${ws.requestId}`, { headers: { cookie: member.cookie } });
    expect(answer.statusCode, answer.body).toBe(200);
    const story = answer.json();
    expect(story.call).toMatchObject({ operation: 'domain', key_id: ws.keyId, outcome: 'error', status: 502, error_code: 'parse_error', credits_charged: 4 });
    expect(story.refund).toMatchObject({ credits: 4, cause: 'parse_error' });
    expect(story.ledger.map((e: any) => [e.type, e.credits, e.balance_after, e.operation])).toEqual([
      ['LookupCharged', -4, 16, 'domain'],
      ['LookupRefunded', 4, 20, 'domain'],
    ]);
    expect(story.events.map((e: any) => e.type)).toEqual(expect.arrayContaining(['LookupCharged', 'LookupRefunded', 'LookupCompleted']));
    expect(story.content_hash).toBeNull();
  });
});

describe('404', () => {
  it("answers another workspace's request id, and an unknown one, as not found", async () => {
    const other = await workspaceWithRefundedCall('story b');
    const mine = await workspaceWithRefundedCall('story c');
    const member = await signedInMember(t, mine.id, 'owner-story@example.com', 'owner');
    for (const id of [other.requestId, newRequestId()]) {
      const answer = await t.call('GET', `/console/v1/requests/${id}`, { headers: { cookie: member.cookie } });
      expect(answer.statusCode).toBe(404);
      expect(errorOf(answer).code).toBe('not_found');
      expect(answer.body).not.toContain(other.id);
    }
  });
});

describe('401', () => {
  it('asks for a session', async () => {
    const answer = await t.call('GET', `/console/v1/requests/${newRequestId()}`);
    expect(answer.statusCode).toBe(401);
  });
});
