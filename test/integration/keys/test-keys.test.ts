// Test keys through the composition root (services/api/server.ts) over HTTP: on real PostgreSQL,
// Redis and Kafka, and on the embedded defaults (PGlite, in-process limits). The live source is a
// server that answers 500 to everything and counts what reaches it: a test key's call must be
// answered from the sandbox network anyway, charge nothing, leave the live cache, balance, ledger
// and statement as they were, and reach Kafka with `mode: "test"`; the audit stays exact.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../services/config/config';
import { startServer, type RunningServer } from '../../../services/api/server';
import { startRelay, type RelayLogger, type RunningRelay } from '../../../services/relay/relay';
import { topicNames } from '../../../services/relay/routing';
import { readWholeTopic } from '../../support/kafka-support';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';

const ADMIN_TOKEN = 'test-keys-integration-admin-token';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const quietLogger: RelayLogger = { info() {}, warn() {}, error() {} };

/** The live keys' source: down (500), counting the requests that reach it. */
async function startDownSource(): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** One HTTP client of a running server. */
function client(baseUrl: string) {
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, { method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
  };
  return {
    call,
    async workspaceWithTestKey(credits: number) {
      const ws = (await call('POST', '/admin/v1/workspaces', admin, { name: 'test keys', credits })).json();
      const key = await call('POST', `/admin/v1/workspaces/${ws.id}/keys`, admin, { mode: 'test' });
      expect(key.status, key.text).toBe(201);
      return { workspaceId: ws.id as string, keyId: key.json().id as string, headers: { authorization: `Bearer ${key.json().key}` } };
    },
  };
}

/** What every deployment must show; `afterCall` adds the checks of the servers it runs on. */
async function expectTestKeyCallChargesNothing(api: ReturnType<typeof client>, running: RunningServer, source: { hits: () => number }) {
  const { workspaceId, keyId, headers } = await api.workspaceWithTestKey(0);
  const period = `from=2000-01-01T00:00:00Z&to=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`;
  const statementBefore = (await api.call('GET', `/admin/v1/workspaces/${workspaceId}/statement?${period}`, admin)).json();

  const answer = await api.call('POST', '/v1/company', headers, { url: 'acme-robotics' });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.json().meta).toMatchObject({ credits_charged: 0, credits_remaining: 0, cache: { status: 'MISS' } });
  const failed = await api.call('POST', '/v1/person', headers, { url: 'sandbox-upstream-error' });
  expect([failed.status, failed.json().error.code, failed.json().meta.credits_charged]).toEqual([502, 'upstream_error', 0]);
  expect(source.hits()).toBe(0);

  // The balance, the default ledger and the statement are as they were.
  expect((await api.call('GET', `/admin/v1/workspaces/${workspaceId}`, admin)).json().balance).toBe(0);
  expect((await api.call('GET', `/admin/v1/workspaces/${workspaceId}/ledger`, admin)).json().data).toEqual([]);
  expect((await api.call('GET', `/admin/v1/workspaces/${workspaceId}/statement?${period}`, admin)).json()).toEqual(statementBefore);
  const testLedger = (await api.call('GET', `/admin/v1/workspaces/${workspaceId}/ledger?mode=test`, admin)).json().data;
  expect(testLedger.map((l: { type: string; credits: number; mode: string }) => [l.type, l.credits, l.mode])).toEqual([
    ['LookupCharged', 0, 'test'],
    ['LookupCharged', 0, 'test'],
  ]);

  // The live cache is untouched: no alias, no entity.
  const { rows } = await running.store.sql.query<{ aliases: number; entities: number }>(
    'SELECT (SELECT count(*) FROM cache_aliases)::int AS aliases, (SELECT count(*) FROM cache_entities)::int AS entities',
  );
  expect(rows[0]).toEqual({ aliases: 0, entities: 0 });

  // Usage (an async projection) shows the calls under mode test only.
  await expect
    .poll(async () => (await api.call('GET', `/admin/v1/workspaces/${workspaceId}/usage?mode=test`, admin)).json().data, { timeout: 10_000 })
    .toEqual(expect.arrayContaining([expect.objectContaining({ key_id: keyId, operation: 'company', calls: 1, credits_charged: 0, mode: 'test' })]));
  expect((await api.call('GET', `/admin/v1/workspaces/${workspaceId}/usage`, admin)).json().data).toEqual([]);

  const audit = (await api.call('POST', '/admin/v1/audit', admin)).json();
  expect(audit).toMatchObject({ ok: true, mismatches: [], chains: { broken: [] } });
  return { workspaceId, keyId };
}

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');
const kafkaBrokers = serverUrl('kafka');

describe.skipIf(!databaseUrl || !redisUrl || !kafkaBrokers)('test keys on PostgreSQL, Redis and Kafka', () => {
  const brokers = (kafkaBrokers ?? '').split(',');
  const topics = topicNames(`testkeys-${randomBytes(3).toString('hex')}.`);
  let db: TestDatabase;
  let source: Awaited<ReturnType<typeof startDownSource>>;
  let running: RunningServer;
  let relay: RunningRelay | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    source = await startDownSource();
    running = await startServer(
      loadConfig({ PORT: '0', ADMIN_TOKEN, DATABASE_URL: db.url, REDIS_URL: redisUrl, SOURCE_URL: source.url, DATA_DIR: tmpdir(), LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '60000' }),
    );
    // The relay of the composition root, on topics of this test's own.
    relay = await startRelay({ store: running.store, brokers, topicPrefix: topics.ledger.slice(0, -'lookup.ledger.v1'.length), logger: quietLogger, pollIntervalMs: 50 });
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    await running?.close();
    await source?.close();
    await db?.drop();
    const kafkaAdmin = new Kafka({ clientId: 'test-keys-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
    await kafkaAdmin.connect();
    await kafkaAdmin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
    await kafkaAdmin.disconnect();
  });

  it('a test key\'s calls charge nothing, leave balance, ledger, statement and live cache as they were, and reach Kafka with mode test', { timeout: 120_000 }, async () => {
    const api = client(running.url);
    const { workspaceId, keyId } = await expectTestKeyCallChargesNothing(api, running, source);

    await relay!.settled();
    const ledger = (await readWholeTopic(brokers, topics.ledger)).map((m) => JSON.parse(m.value)).filter((e) => e.data.workspace_id === workspaceId);
    expect(ledger.filter((e) => e.type === 'LookupCharged').map((e) => [e.data.mode, e.data.credits])).toEqual([
      ['test', 0],
      ['test', 0],
    ]);
    const lookups = (await readWholeTopic(brokers, topics.lookups)).map((m) => JSON.parse(m.value)).filter((e) => e.data.workspace_id === workspaceId);
    expect(lookups.map((e) => [e.type, e.data.mode, e.data.credits_charged])).toEqual([
      ['LookupCompleted', 'test', 0],
      ['LookupCompleted', 'test', 0],
    ]);
    const keys = (await readWholeTopic(brokers, topics.keys)).map((m) => JSON.parse(m.value)).filter((e) => e.data.key_id === keyId);
    expect(keys.map((e) => [e.type, e.data.mode])).toEqual([['ApiKeyCreated', 'test']]);
    // No profile reached the profiles topic: the cache was never written.
    const profiles = await readWholeTopic(brokers, topics.profiles).catch(() => []);
    expect(profiles).toEqual([]);
  });
});

describe('test keys on the embedded defaults (PGlite, in-process limits)', () => {
  let dataDir: string;
  let source: Awaited<ReturnType<typeof startDownSource>>;
  let running: RunningServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'test-keys-'));
    source = await startDownSource();
    running = await startServer(loadConfig({ PORT: '0', ADMIN_TOKEN, SOURCE_URL: source.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '60000' }));
  }, 60_000);

  afterAll(async () => {
    await running?.close();
    await source?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a test key\'s calls charge nothing and leave balance, ledger, statement and live cache as they were', { timeout: 120_000 }, async () => {
    await expectTestKeyCallChargesNothing(client(running.url), running, source);
  });
});
