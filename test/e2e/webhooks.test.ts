// Webhooks end to end (issue 25 §2) on two instances sharing PostgreSQL: an event of the log
// becomes one delivery per subscribed endpoint, signed by the Standard Webhooks rules and checked
// by a real receiver with standardwebhooks' Webhook.verify; a receiver that is down gets it once
// it is back, once, with the same webhook-id; a delivery failing past the retry horizon marks its
// endpoint failing and tells the workspace; a re-send goes out again with the same webhook-id.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newEvent, streams } from '../../contracts/events';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { bearer, call } from './support-instances/http';
import { Admin, eventually, startTwoInstances, type TwoInstances } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');
const HORIZON_MS = 5_000;
const SETTINGS = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  WEBHOOK_RETRY_INITIAL_MS: '200',
  WEBHOOK_RETRY_MAX_MS: '600',
  WEBHOOK_RETRY_HORIZON_MS: String(HORIZON_MS),
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '2000',
};

describe.skipIf(!databaseUrl || !redisUrl)('webhooks across two instances', () => {
  let instances: TwoInstances;
  let a: RunningServer;
  let b: RunningServer;
  let receiver: WebhookReceiver;
  let key: Record<string, string>;
  let workspaceId: string;

  beforeAll(async () => {
    instances = await startTwoInstances(redisUrl!, SETTINGS);
    ({ a, b } = instances);
    const keyed = await new Admin(a.url).keyedWorkspace({ credits: 10 });
    key = bearer(keyed.key);
    workspaceId = keyed.workspaceId;
    receiver = await startWebhookReceiver();
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await instances?.close();
  });

  const register = async (body: object) => {
    const created = await call(a.url, '/v1/webhook-endpoints', { method: 'POST', headers: key, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data as { id: string; secret: string };
  };
  /** A ProfileChanged for the endpoint, as a watch's refresh appends it. */
  const profileChanged = (endpointId: string, n: number) =>
    a.store.append(streams.company(`9900${n}`), [
      newEvent('ProfileChanged', {
        entity: `company:9900${n}`,
        kind: 'company',
        before_hash: `sha256:${'a'.repeat(64)}`,
        after_hash: `sha256:${'b'.repeat(64)}`,
        changed_fields: ['follower_count'],
        watch_id: 'wat_01TEST',
        workspace_id: workspaceId,
        webhook_endpoint_id: endpointId,
        request_id: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD',
      }),
    ]);
  const deliveries = async (endpointId: string) => {
    const answer = await call(b.url, `/v1/webhook-endpoints/${endpointId}/deliveries`, { headers: key });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data as { id: string; state: string; attempts: { status: string; response_status: number | null; latency_ms: number }[] }[];
  };

  test('a delivery retried while the receiver was down arrives once, with the same webhook-id, signed with both secrets during a rotation', async () => {
    const endpoint = await register({ url: receiver.url, event_types: ['profile.changed'] });
    const rotated = await call(b.url, `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { method: 'POST', headers: key });
    expect(rotated.status).toBe(200);
    receiver.secrets = [endpoint.secret, rotated.body.data.secret];

    await receiver.down();
    await profileChanged(endpoint.id, 1);
    // Attempts fail while it is down: connection refused, no response code.
    expect(await eventually(async () => ((await deliveries(endpoint.id))[0]?.attempts.length ?? 0) >= 3, 10_000, 100)).toBe(true);
    expect(receiver.received).toHaveLength(0);
    await receiver.up();

    expect(await eventually(async () => receiver.received.length > 0, 10_000, 50)).toBe(true);
    // Two instances poll every 50 ms: still one arrival after many more passes.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.received).toHaveLength(1);
    expect(receiver.unverified).toEqual([]);
    const [delivered] = await deliveries(endpoint.id);
    const webhook = receiver.received[0]!;
    expect(webhook.id).toBe(delivered!.id);
    expect(webhook.id).toMatch(/^msg_/);
    // One signature per secret, each verifies on its own.
    expect(webhook.signatures).toHaveLength(2);
    expect(webhook.verifiedBy).toEqual([0, 1]);
    expect(webhook.payload).toMatchObject({ type: 'profile.changed', data: { entity: 'company:99001', changed_fields: ['follower_count'], webhook_endpoint_id: endpoint.id } });
    expect(delivered!.state).toBe('delivered');
    const attempts = delivered!.attempts;
    expect(attempts.length).toBeGreaterThanOrEqual(4);
    expect(attempts.slice(0, -1).every((t) => t.status === 'failed' && t.response_status === null)).toBe(true);
    expect(attempts.at(-1)).toMatchObject({ status: 'succeeded', response_status: 204 });
  });

  test('past the retry horizon the endpoint is failing and the workspace told; a re-send goes out with the same webhook-id', async () => {
    const dead = await startWebhookReceiver('/dead');
    const deadUrl = dead.url;
    await dead.down();
    const failing = await register({ url: deadUrl, event_types: ['profile.changed'] });
    const watcher = await register({ url: receiver.url, event_types: ['webhook_endpoint.failing'] });
    receiver.secrets = [watcher.secret];
    receiver.received.length = 0;

    await profileChanged(failing.id, 2);
    expect(await eventually(async () => (await deliveries(failing.id))[0]?.state === 'failed', HORIZON_MS + 10_000, 200)).toBe(true);
    const endpoint = await call(a.url, `/v1/webhook-endpoints/${failing.id}`, { headers: key });
    expect(endpoint.body.data).toMatchObject({ state: 'failing', failing_since: expect.any(String) });
    const events = await a.store.readStream(streams.webhookEndpoint(failing.id));
    expect(events.map((e) => e.type)).toEqual(['WebhookEndpointFailing']);
    expect(events[0]!.data).toMatchObject({ workspace_id: workspaceId, endpoint_id: failing.id, url: deadUrl });
    // The workspace's other endpoint hears of it.
    expect(await eventually(async () => receiver.received.length === 1, 10_000, 50)).toBe(true);
    expect(receiver.received[0]!.payload).toMatchObject({ type: 'webhook_endpoint.failing', data: { endpoint_id: failing.id } });
    expect(receiver.unverified).toEqual([]);

    // Back up: a re-send arrives with the same webhook-id, and the endpoint is active again.
    await dead.up();
    dead.secrets = [failing.secret];
    const [given] = await deliveries(failing.id);
    const resent = await call(b.url, `/v1/webhook-endpoints/${failing.id}/deliveries/${given!.id}/resend`, { method: 'POST', headers: key });
    expect(resent.status, JSON.stringify(resent.body)).toBe(202);
    expect(resent.body.data).toMatchObject({ id: given!.id, state: 'pending' });
    expect(await eventually(async () => dead.received.length === 1, 10_000, 50)).toBe(true);
    expect(dead.received[0]!.id).toBe(given!.id);
    expect(await eventually(async () => (await call(a.url, `/v1/webhook-endpoints/${failing.id}`, { headers: key })).body.data.state === 'active', 5_000, 100)).toBe(true);
    await dead.close();
  }, 30_000);
});
