// The console's webhook endpoints and watches (/console/v1/webhook-endpoints, /console/v1/watches)
// through app.inject, by answer status: the session's workspace only, any member, CSRF on changes;
// a failing endpoint made so by the delivery worker itself, on its own clock.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catchUp } from '../../services/eventstore/subscription';
import { WebhookDeliveryWorker } from '../../services/webhooks/delivery-worker';
import { webhookDispatch } from '../../services/webhooks/dispatcher';
import { ADMIN_TOKEN, errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
/** A receiver that answers every delivery 500. */
let broken: { server: Server; url: string; hits: number };
beforeAll(async () => {
  t = await startRouteApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
  const state = { hits: 0 };
  const server = createServer((req, res) => {
    state.hits++;
    req.resume();
    req.on('end', () => res.writeHead(500).end('down for maintenance'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  broken = {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get hits() {
      return state.hits;
    },
  };
}, 60_000);
afterAll(async () => {
  await t?.close();
  await new Promise((r) => broken?.server.close(r));
});

/** A member of a new workspace (with `credits` and a live key), signed in: cookie, CSRF token, key headers. */
async function member(credits = 10, role: 'owner' | 'member' = 'member') {
  const keyed = await t.keyed({ credits });
  const invitation = await t.call('POST', `/admin/v1/workspaces/${keyed.workspaceId}/invitations`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { email: `${role}-${keyed.workspaceId.toLowerCase()}@example.com`, role },
  });
  const accepted = await t.call('POST', '/console/v1/invitations/accept', { body: { token: new URL(invitation.json().link).searchParams.get('token'), password: `${role} password 123456` } });
  expect(accepted.statusCode, accepted.body).toBe(200);
  const cookie = String(accepted.headers['set-cookie']).split(';')[0]!;
  return { ...keyed, read: { cookie }, write: { cookie, 'x-csrf-token': accepted.json().csrf_token as string } };
}

const ENDPOINT = { url: 'https://hooks.example.com/console', event_types: ['profile.changed'] };

describe('200, 201, 202, 204', () => {
  it('a member registers an endpoint, its secret shown once; lists it without; rotates it (a new secret, once); deletes it', async () => {
    const m = await member();
    const created = await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json();
    expect(endpoint).toMatchObject({ ...ENDPOINT, state: 'active', failing_since: null });
    expect(() => new Webhook(endpoint.secret)).not.toThrow();

    const list = await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([expect.objectContaining({ id: endpoint.id, state: 'active', failing_reason: null })]);
    expect(list.body).not.toContain(endpoint.secret);
    // The public API sees the same endpoint: one store.
    expect((await t.call('GET', '/v1/webhook-endpoints', { headers: m.headers })).json().data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);

    const rotated = await t.call('POST', `/console/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { headers: m.write });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(endpoint.secret);
    expect(rotated.json().previous_secret_expires_at).not.toBeNull();
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).body).not.toContain(rotated.json().secret);

    const deleted = await t.call('DELETE', `/console/v1/webhook-endpoints/${endpoint.id}`, { headers: m.write });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data).toEqual([]);
  });

  it('a member changes an endpoint (URL, event types), pauses it (nothing is sent, its deliveries wait) and resumes it; the public API sees each change', async () => {
    const m = await member();
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT })).json();
    const path = `/console/v1/webhook-endpoints/${endpoint.id}`;

    const changed = await t.call('PATCH', path, { headers: m.write, body: { url: 'https://hooks.example.com/moved', event_types: ['profile.changed', 'balance.low'] } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ id: endpoint.id, url: 'https://hooks.example.com/moved', event_types: ['profile.changed', 'balance.low'], state: 'active', failing_reason: null });
    expect(changed.body).not.toContain(endpoint.secret);

    const paused = await t.call('PATCH', path, { headers: m.write, body: { enabled: false } });
    expect(paused.statusCode, paused.body).toBe(200);
    expect(paused.json()).toMatchObject({ state: 'disabled', url: 'https://hooks.example.com/moved' });
    expect((await t.call('GET', `/v1/webhook-endpoints/${endpoint.id}`, { headers: m.headers })).json().data).toMatchObject({ state: 'disabled' });

    const resumed = await t.call('PATCH', path, { headers: m.write, body: { enabled: true } });
    expect(resumed.json()).toMatchObject({ state: 'active' });
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data).toEqual([expect.objectContaining({ id: endpoint.id, state: 'active', url: 'https://hooks.example.com/moved' })]);
  });

  it('runs a watch now (charged, under its own request id), lists it, deletes it; an endpoint the worker gave up on is failing, with why, on the page and the overview; a re-send is due again', async () => {
    const m = await member(10);
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: { url: broken.url, event_types: ['profile.changed'] } })).json();
    // Watches are created with a key (the API); the console lists and runs them.
    const watch = (await t.call('POST', '/v1/watches', { headers: m.headers, body: { operation: 'company', body: { url: 'sandbox-changing' }, every: '1d', webhook_endpoint_id: endpoint.id } })).json().data;
    const listed = await t.call('GET', '/console/v1/watches', { headers: m.read });
    expect(listed.json().data).toEqual([expect.objectContaining({ id: watch.id, state: 'active', last_run_at: null, every: '1d' })]);

    const first = await t.call('POST', `/console/v1/watches/${watch.id}/run`, { headers: m.write });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ changed: false, credits_charged: 1, credits_remaining: 9, refresh_request_id: first.headers['x-request-id'] });
    expect(first.json().watch.last_request_id).toBe(first.headers['x-request-id']);
    const second = await t.call('POST', `/console/v1/watches/${watch.id}/run`, { headers: m.write });
    expect(second.json()).toMatchObject({ changed: true, credits_charged: 1, credits_remaining: 8 });
    expect(await t.balance(m.workspaceId)).toBe(8);

    // The change becomes a delivery (the dispatcher), sent by the worker to a receiver answering 500:
    // retried, then given up once the worker's clock is past the retry horizon.
    await catchUp(t.store, webhookDispatch);
    let clock = Date.now() + 1_000;
    const worker = new WebhookDeliveryWorker(t.store, {
      settings: { ...t.app.deps.config.webhooks, retry: { initialMs: 1_000, maxMs: 1_000, horizonMs: 60_000 } },
      logger: t.app.log,
      now: () => new Date(clock),
      random: () => 0.5,
    });
    expect(await worker.runOnce()).toBe(1);
    const retrying = (await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data[0];
    expect(retrying).toMatchObject({ state: 'active', failing_reason: null });
    clock += 120_000;
    expect(await worker.runOnce()).toBe(1);
    expect(broken.hits).toBeGreaterThanOrEqual(2);

    const failing = (await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data[0];
    expect(failing).toMatchObject({ id: endpoint.id, state: 'failing', failing_reason: { attempts: 2, response_status: 500 } });
    expect(failing.failing_since).not.toBeNull();

    const deliveries = await t.call('GET', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=5`, { headers: m.read });
    expect(deliveries.statusCode).toBe(200);
    const [delivery] = deliveries.json().data;
    expect(delivery).toMatchObject({ id: failing.failing_reason.delivery_id, event_type: 'profile.changed', state: 'failed' });
    expect(delivery.attempts.map((a: { attempt: number; status: string; response_status: number }) => [a.attempt, a.status, a.response_status])).toEqual([
      [1, 'failed', 500],
      [2, 'failed', 500],
    ]);

    const overview = (await t.call('GET', '/console/v1/overview', { headers: m.read })).json();
    expect(overview.failing_webhook_endpoints).toEqual([{ id: endpoint.id, url: broken.url, failing_since: failing.failing_since }]);
    expect(overview.paused_watches).toEqual([]);

    const resent = await t.call('POST', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/resend`, { headers: m.write });
    expect(resent.statusCode, resent.body).toBe(202);
    expect(resent.json()).toMatchObject({ id: delivery.id, state: 'pending' });

    expect((await t.call('DELETE', `/console/v1/watches/${watch.id}`, { headers: m.write })).statusCode).toBe(204);
    expect((await t.call('GET', '/console/v1/watches', { headers: m.read })).json().data).toEqual([]);
  });

  it('a member makes a watch under a live key of the workspace: the API lists it, a run charges it, revoking the key deletes it', async () => {
    const m = await member(10);
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT })).json();
    const created = await t.call('POST', '/console/v1/watches', {
      headers: m.write,
      body: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpoint.id, key_id: m.keyId },
    });
    expect(created.statusCode, created.body).toBe(201);
    const watch = created.json();
    expect(watch).toMatchObject({ operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpoint.id, state: 'active', last_run_at: null });
    expect((await t.call('GET', '/v1/watches', { headers: m.headers })).json().data).toEqual([expect.objectContaining({ id: watch.id })]);

    const run = await t.call('POST', `/console/v1/watches/${watch.id}/run`, { headers: m.write });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.json()).toMatchObject({ credits_charged: 1, credits_remaining: 9 });

    const revoked = await t.call('POST', `/console/v1/keys/${m.keyId}/revoke`, { headers: m.write });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().deleted_watches).toEqual([watch.id]);
    expect((await t.call('GET', '/console/v1/watches', { headers: m.read })).json().data).toEqual([]);
  });

  it('a delivery first tried long after it was made (workers behind, endpoint disabled) gets its whole horizon from that attempt, as a re-sent one does', async () => {
    const m = await member(10);
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: { url: broken.url, event_types: ['profile.changed'] } })).json();
    const watch = (await t.call('POST', '/v1/watches', { headers: m.headers, body: { operation: 'company', body: { url: 'sandbox-changing' }, every: '1d', webhook_endpoint_id: endpoint.id } })).json().data;
    for (let run = 0; run < 2; run++) await t.call('POST', `/console/v1/watches/${watch.id}/run`, { headers: m.write });
    await catchUp(t.store, webhookDispatch);

    const horizonMs = 60_000;
    let clock = Date.now() + 10 * horizonMs;
    const worker = new WebhookDeliveryWorker(t.store, {
      settings: { ...t.app.deps.config.webhooks, retry: { initialMs: 1_000, maxMs: 1_000, horizonMs } },
      logger: t.app.log,
      now: () => new Date(clock),
      random: () => 0.5,
    });
    // Other tests' deliveries may be due too: only this endpoint's are looked at.
    const deliveries = async () => (await t.call('GET', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=5`, { headers: m.read })).json().data;
    await worker.runOnce();
    expect((await deliveries())[0]).toMatchObject({ state: 'pending', attempts: [expect.objectContaining({ attempt: 1, status: 'failed' })] });

    clock += horizonMs + 1_000;
    await worker.runOnce();
    const [given] = await deliveries();
    expect(given).toMatchObject({ state: 'failed' });
    expect(given.attempts).toHaveLength(2);

    // Re-sent much later: its horizon again runs from its next attempt.
    expect((await t.call('POST', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries/${given.id}/resend`, { headers: m.write })).statusCode).toBe(202);
    clock += 10 * horizonMs;
    await worker.runOnce();
    expect((await deliveries())[0]).toMatchObject({ state: 'pending' });
  });
});

describe('400', () => {
  it('a URL the service may not reach, an unknown event type, none', async () => {
    const m = await member();
    const refused = await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: { ...ENDPOINT, url: 'http://169.254.169.254/latest' } });
    expect(errorOf(refused)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(refused.json().error).toMatchObject({ reason: 'webhook_url_refused', details: [{ field: 'url' }] });
    for (const body of [{ ...ENDPOINT, event_types: ['profile.deleted'] }, { ...ENDPOINT, event_types: [] }]) {
      expect(errorOf(await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body })).code).toBe('invalid_request');
    }
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data).toEqual([]);
  });

  it('a change to a URL the service may not reach, to no event types, or with an unknown field leaves the endpoint as it was', async () => {
    const m = await member();
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT })).json();
    const path = `/console/v1/webhook-endpoints/${endpoint.id}`;
    const refused = await t.call('PATCH', path, { headers: m.write, body: { url: 'http://169.254.169.254/latest' } });
    expect(errorOf(refused)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(refused.json().error).toMatchObject({ reason: 'webhook_url_refused', details: [{ field: 'url' }] });
    for (const body of [{ event_types: [] }, { enabled: 'no' }, { secret: 'whsec_mine' }]) {
      expect(errorOf(await t.call('PATCH', path, { headers: m.write, body })), JSON.stringify(body)).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data).toEqual([expect.objectContaining({ ...ENDPOINT, state: 'active' })]);
  });
});

describe('400, 403, 404: a watch the console may not make', () => {
  it('a bad reference, an unknown field, no key; a test key; a revoked key, another workspace\'s key or endpoint: nothing is made', async () => {
    const m = await member();
    const theirs = await member();
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT })).json();
    const theirEndpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: theirs.write, body: ENDPOINT })).json();
    const test = await t.call('POST', '/console/v1/keys', { headers: m.write, body: { name: 'sandbox', mode: 'test' } });
    const revoked = (await t.call('POST', '/console/v1/keys', { headers: m.write, body: { name: 'old' } })).json();
    expect((await t.call('POST', `/console/v1/keys/${revoked.id}/revoke`, { headers: m.write })).statusCode).toBe(200);
    const withoutKey = { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpoint.id };
    const watch = { ...withoutKey, key_id: m.keyId };

    for (const [body, status, code, reason] of [
      [{ ...watch, body: { url: 'https://example.com/not-a-company' } }, 400, 'invalid_company_reference', undefined],
      [{ ...watch, every: '1h' }, 400, 'invalid_request', undefined],
      [{ ...watch, note: 'mine' }, 400, 'invalid_request', undefined],
      [withoutKey, 400, 'invalid_request', undefined],
      [{ ...watch, key_id: test.json().id }, 403, 'forbidden', 'test_key'],
      [{ ...watch, key_id: revoked.id }, 404, 'not_found', 'no_key'],
      [{ ...watch, key_id: theirs.keyId }, 404, 'not_found', 'no_key'],
      [{ ...watch, webhook_endpoint_id: theirEndpoint.id }, 404, 'not_found', 'no_webhook_endpoint'],
    ] as const) {
      const answer = await t.call('POST', '/console/v1/watches', { headers: m.write, body });
      expect(errorOf(answer), JSON.stringify(body)).toMatchObject({ status, code });
      if (reason) expect(answer.json().error.reason).toBe(reason);
    }
    expect((await t.call('GET', '/console/v1/watches', { headers: m.read })).json().data).toEqual([]);
    expect((await t.call('GET', '/console/v1/watches', { headers: theirs.read })).json().data).toEqual([]);
  });
});

describe('401', () => {
  it('without a session', async () => {
    for (const [method, path] of [['GET', '/console/v1/webhook-endpoints'], ['GET', '/console/v1/watches'], ['POST', '/console/v1/webhook-endpoints']] as const) {
      expect(errorOf(await t.call(method, path, method === 'POST' ? { body: ENDPOINT } : {})), path).toMatchObject({ status: 401, code: 'unauthorized' });
    }
  });
});

describe('402', () => {
  it('a refresh the balance cannot pay pauses the watch: the list and the overview say so', async () => {
    const m = await member(0);
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT })).json();
    const watch = (await t.call('POST', '/v1/watches', { headers: m.headers, body: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpoint.id } })).json().data;
    const refused = await t.call('POST', `/console/v1/watches/${watch.id}/run`, { headers: m.write });
    expect(errorOf(refused)).toMatchObject({ status: 402, code: 'insufficient_credits', charged: 0, remaining: 0 });
    expect((await t.call('GET', '/console/v1/watches', { headers: m.read })).json().data[0]).toMatchObject({ id: watch.id, state: 'paused', paused_reason: 'insufficient_credits' });
    expect((await t.call('GET', '/console/v1/overview', { headers: m.read })).json()).toMatchObject({ paused_watches: [{ id: watch.id, paused_reason: 'insufficient_credits' }], failing_webhook_endpoints: [] });
    // Deleting the endpoint in the console ends the watch delivering to it, as the public API does.
    expect((await t.call('DELETE', `/console/v1/webhook-endpoints/${endpoint.id}`, { headers: m.write })).statusCode).toBe(204);
    expect((await t.call('GET', '/console/v1/watches', { headers: m.read })).json().data).toEqual([]);
  });
});

describe('403', () => {
  it('a change without the session CSRF token', async () => {
    const m = await member();
    const created = await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.read, body: ENDPOINT });
    expect(errorOf(created)).toMatchObject({ status: 403, code: 'forbidden' });
    expect(created.json().error.reason).toBe('csrf');
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data).toEqual([]);

    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: m.write, body: ENDPOINT })).json();
    const paused = await t.call('PATCH', `/console/v1/webhook-endpoints/${endpoint.id}`, { headers: m.read, body: { enabled: false } });
    expect(errorOf(paused)).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: m.read })).json().data).toEqual([expect.objectContaining({ id: endpoint.id, state: 'active' })]);
  });
});

describe('404', () => {
  it("another workspace's endpoint, delivery and watch are none", async () => {
    const mine = await member();
    const theirs = await member();
    const endpoint = (await t.call('POST', '/console/v1/webhook-endpoints', { headers: theirs.write, body: ENDPOINT })).json();
    const watch = (await t.call('POST', '/v1/watches', { headers: theirs.headers, body: { operation: 'company', body: { url: 'acme' }, every: '1d', webhook_endpoint_id: endpoint.id } })).json().data;
    for (const [method, path, reason] of [
      ['DELETE', `/console/v1/webhook-endpoints/${endpoint.id}`, 'no_webhook_endpoint'],
      ['PATCH', `/console/v1/webhook-endpoints/${endpoint.id}`, 'no_webhook_endpoint'],
      ['POST', `/console/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, 'no_webhook_endpoint'],
      ['GET', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries`, 'no_webhook_endpoint'],
      ['POST', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries/msg_nothing/resend`, 'no_webhook_endpoint'],
      ['DELETE', `/console/v1/watches/${watch.id}`, 'no_watch'],
      ['POST', `/console/v1/watches/${watch.id}/run`, 'no_watch'],
    ] as const) {
      const answer = await t.call(method, path, { headers: mine.write, ...(method === 'PATCH' ? { body: { enabled: false } } : {}) });
      expect(errorOf(answer), path).toMatchObject({ status: 404, code: 'not_found' });
      expect(answer.json().error.reason, path).toBe(reason);
    }
    const resend = await t.call('POST', `/console/v1/webhook-endpoints/${endpoint.id}/deliveries/msg_nothing/resend`, { headers: theirs.write });
    expect(resend.json().error).toMatchObject({ code: 'not_found', reason: 'no_webhook_delivery' });
    // Nothing of theirs moved: the endpoint (not paused) and the watch are still there.
    expect((await t.call('GET', '/console/v1/webhook-endpoints', { headers: theirs.read })).json().data).toEqual([expect.objectContaining({ id: endpoint.id, state: 'active' })]);
    expect((await t.call('GET', '/console/v1/watches', { headers: theirs.read })).json().data).toHaveLength(1);
  });
});
