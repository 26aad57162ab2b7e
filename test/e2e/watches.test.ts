// Watches end to end (issue 25 §1) on two instances sharing PostgreSQL: a watch on the sandbox's
// `sandbox-changing` company (a new follower_count on every fetch) made due again and again is
// refreshed once per round across both instances (one fetch, one charge each), and each change is
// one ProfileChanged on the entity's stream, published on Kafka, and one profile.changed webhook
// that a real receiver verifies with standardwebhooks.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { streams } from '../../contracts/events';
import type { RunningServer } from '../../services/api/server';
import { startRelay } from '../../services/relay/relay';
import { readWholeTopic } from '../support/kafka-support';
import { serverUrl } from '../support/servers';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { bearer, call } from './support-instances/http';
import { Admin, eventually, startTwoInstances, type SharedServersHandle, type TwoInstances } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');
const kafkaBrokers = serverUrl('kafka');
const SETTINGS = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '50', WATCH_POLL_MS: '50' };
const ROUNDS = 3;

describe.skipIf(!databaseUrl || !redisUrl || !kafkaBrokers)('watches across two instances', () => {
  let instances: TwoInstances;
  let servers: SharedServersHandle;
  let a: RunningServer;
  let b: RunningServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    instances = await startTwoInstances(redisUrl!, SETTINGS);
    ({ servers, a, b } = instances);
    receiver = await startWebhookReceiver();
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await instances?.close();
  });

  test('each change of a watched profile is one refresh, one charge, one ProfileChanged on Kafka and one signed webhook', async () => {
    const { workspaceId, key } = await new Admin(a.url).keyedWorkspace({ credits: 100 });
    const headers = bearer(key);
    const endpoint = await call(a.url, '/v1/webhook-endpoints', { method: 'POST', headers, body: { url: receiver.url, event_types: ['profile.changed'] } });
    receiver.secrets = [endpoint.body.data.secret];
    const created = await call(b.url, '/v1/watches', { method: 'POST', headers, body: { operation: 'company', body: { url: 'sandbox-changing' }, every: '1d', webhook_endpoint_id: endpoint.body.data.id } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const watchId: string = created.body.data.id;
    const hitsBefore = servers.sourceHits();

    // Round 0 sets the baseline (nothing was cached); each later round finds a new follower_count.
    const requestIds: string[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      // A day passes: the watch is due (both instances poll every 50 ms).
      await a.store.sql.query('UPDATE watches SET next_run_at = now() WHERE id = $1', [watchId]);
      let watch: any;
      expect(
        await eventually(async () => {
          watch = (await call(a.url, `/v1/watches/${watchId}`, { headers })).body.data;
          return watch.last_request_id !== null && !requestIds.includes(watch.last_request_id) && Date.parse(watch.next_run_at) > Date.now() + 3_600_000;
        }, 15_000, 50),
      ).toBe(true);
      requestIds.push(watch.last_request_id);
    }
    // More passes of both instances: nothing is due, nothing more happens.
    await new Promise((r) => setTimeout(r, 500));
    expect(servers.sourceHits() - hitsBefore).toBe(ROUNDS + 1);

    const { rows: charges } = await a.store.sql.query<{ request_id: string }>("SELECT data->>'request_id' AS request_id FROM events WHERE type = 'LookupCharged' AND data->>'workspace_id' = $1", [workspaceId]);
    expect(charges.map((c) => c.request_id).sort()).toEqual([...requestIds].sort());
    expect((await new Admin(a.url).workspace(workspaceId)).balance).toBe(100 - (ROUNDS + 1));

    const changes = (await a.store.readStream(streams.company('7001'))).filter((e) => e.type === 'ProfileChanged');
    expect(changes).toHaveLength(ROUNDS);
    expect(changes.map((e) => (e.data as { request_id: string }).request_id)).toEqual(requestIds.slice(1));
    for (const change of changes) expect(change.data).toMatchObject({ entity: 'company:7001', kind: 'company', changed_fields: ['follower_count'], watch_id: watchId, workspace_id: workspaceId });

    expect(await eventually(async () => receiver.received.length >= ROUNDS, 10_000, 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.unverified).toEqual([]);
    expect(receiver.received).toHaveLength(ROUNDS);
    expect(new Set(receiver.received.map((w) => w.id)).size).toBe(ROUNDS);
    expect(receiver.received.map((w) => w.payload.data.after_hash).sort()).toEqual(changes.map((e) => (e.data as { after_hash: string }).after_hash).sort());
    for (const webhook of receiver.received) expect(webhook.payload.type).toBe('profile.changed');

    // Published on Kafka like every event (a relay of the test's own, on topics of its own).
    const relay = await startRelay({ store: a.store, brokers: kafkaBrokers!.split(','), topicPrefix: `watches-${randomBytes(4).toString('hex')}.`, logger: { info: () => {}, warn: () => {}, error: () => {} } });
    try {
      await relay.settled();
      const messages = await readWholeTopic(kafkaBrokers!.split(','), relay.topics.profiles);
      const published = messages.map((m) => JSON.parse(m.value)).filter((v) => v.type === 'ProfileChanged');
      expect(published.map((v) => v.data.request_id)).toEqual(requestIds.slice(1));
      expect(messages.filter((m) => JSON.parse(m.value).type === 'ProfileChanged').every((m) => m.key === 'company:7001')).toBe(true);
    } finally {
      await relay.stop();
    }
  }, 90_000);
});
