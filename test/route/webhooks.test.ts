// Webhook endpoints through app.inject, by answer status: free, keyed, scoped to the workspace.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp({ env: { WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/8' } });
}, 60_000);
afterAll(async () => t?.close());

const ENDPOINT = { url: 'https://hooks.example.com/lookup', event_types: ['profile.changed'] };

describe('201', () => {
  it('registering an endpoint shows its whsec_ secret once; reading it never shows it again', async () => {
    const { headers, workspaceId } = await t.keyed({ credits: 5 });
    const created = await t.call('POST', '/v1/webhook-endpoints', { headers, body: { ...ENDPOINT, description: 'CRM sync' } });
    expect(created.statusCode, created.body).toBe(201);
    const data = created.json().data;
    expect(data).toMatchObject({ url: ENDPOINT.url, event_types: ['profile.changed'], description: 'CRM sync', state: 'active', failing_since: null, previous_secret_expires_at: null });
    expect(data.id).toMatch(/^whep_/);
    // A secret standardwebhooks takes as it is.
    expect(() => new Webhook(data.secret)).not.toThrow();
    const read = await t.call('GET', `/v1/webhook-endpoints/${data.id}`, { headers });
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toContain(data.secret);
    expect(read.json().data.secret).toBeUndefined();
    expect(await t.balance(workspaceId)).toBe(5);
  });

  it('an allowed private range (WEBHOOK_ALLOWED_HOSTS) is accepted', async () => {
    const { headers } = await t.keyed();
    expect((await t.call('POST', '/v1/webhook-endpoints', { headers, body: { ...ENDPOINT, url: 'http://10.1.2.3:8080/hook' } })).statusCode).toBe(201);
  });
});

describe('200', () => {
  it('list, change, pause, rotate with overlap, delete', async () => {
    const { headers } = await t.keyed();
    const { data: endpoint } = (await t.call('POST', '/v1/webhook-endpoints', { headers, body: ENDPOINT })).json();
    const list = await t.call('GET', '/v1/webhook-endpoints', { headers });
    expect(list.json().data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);

    const patched = await t.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { headers, body: { url: 'https://other.example.com/h', event_types: ['profile.changed', 'webhook_endpoint.failing'], description: null, enabled: false } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({ url: 'https://other.example.com/h', event_types: ['profile.changed', 'webhook_endpoint.failing'], description: null, state: 'disabled' });

    const rotated = await t.call('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { headers });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().data.secret).toMatch(/^whsec_/);
    expect(rotated.json().data.secret).not.toBe(endpoint.secret);
    const overlapEnds = Date.parse(rotated.json().data.previous_secret_expires_at);
    expect(overlapEnds - Date.now()).toBeGreaterThan(23 * 3_600_000);

    const deliveries = await t.call('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=5`, { headers });
    expect(deliveries.statusCode).toBe(200);
    expect(deliveries.json().data).toEqual([]);

    const deleted = await t.call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { headers });
    expect(deleted.json().data).toEqual({ id: endpoint.id, deleted: true, deleted_watches: [] });
    expect((await t.call('GET', '/v1/webhook-endpoints', { headers })).json().data).toEqual([]);
  });
});

describe('400', () => {
  it.each([
    ['a loopback address', 'http://127.0.0.1:9000/hook'],
    ['a link-local address (cloud metadata)', 'http://169.254.169.254/latest'],
    ['an IPv6 loopback', 'http://[::1]/hook'],
    ['a private address outside the allowed range', 'https://192.168.1.10/hook'],
    ['localhost', 'http://localhost:3000/'],
    ['another scheme', 'ftp://example.com/hook'],
    ['credentials in the URL', 'https://user:pw@example.com/hook'],
    ['no URL at all', 'example.com/hook'],
  ])('a URL that is %s', async (_what, url) => {
    const { headers } = await t.keyed();
    const answer = await t.call('POST', '/v1/webhook-endpoints', { headers, body: { ...ENDPOINT, url } });
    expect(errorOf(answer)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(answer.json().error).toMatchObject({ reason: 'webhook_url_refused', details: [{ field: 'url' }] });
  });

  it('an unknown event type, none, or an unknown field', async () => {
    const { headers } = await t.keyed();
    for (const body of [{ ...ENDPOINT, event_types: ['profile.deleted'] }, { ...ENDPOINT, event_types: [] }, { ...ENDPOINT, secret: 'mine' }]) {
      expect(errorOf(await t.call('POST', '/v1/webhook-endpoints', { headers, body })).code).toBe('invalid_request');
    }
  });
});

describe('401', () => {
  it('without a key', async () => {
    expect(errorOf(await t.call('GET', '/v1/webhook-endpoints'))).toMatchObject({ status: 401, code: 'unauthorized' });
  });
});

describe('404', () => {
  it("another workspace's endpoint is none, and so is a delivery it does not have", async () => {
    const mine = await t.keyed();
    const theirs = await t.keyed();
    const { data: endpoint } = (await t.call('POST', '/v1/webhook-endpoints', { headers: theirs.headers, body: ENDPOINT })).json();
    for (const [method, path] of [
      ['GET', `/v1/webhook-endpoints/${endpoint.id}`],
      ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`],
      ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ['GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
    ] as const) {
      const answer = await t.call(method, path, { headers: mine.headers });
      expect(errorOf(answer), path).toMatchObject({ status: 404, code: 'not_found' });
      expect(answer.json().error.reason).toBe('no_webhook_endpoint');
    }
    const resend = await t.call('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/msg_nothing/resend`, { headers: theirs.headers });
    expect(resend.json().error).toMatchObject({ code: 'not_found', reason: 'no_webhook_delivery' });
  });
});
