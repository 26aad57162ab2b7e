// The relay on real PostgreSQL and the shared real Kafka broker: every event of the log reaches its
// topic, in log order per key, and the ledger topic alone rebuilds every balance.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { readCheckpoint } from '../../../services/eventstore/subscription';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { RELAY_SUBSCRIPTION, pendingEvents, startRelay, type RelayLogger, type RunningRelay } from '../../../services/relay/relay';
import { topicNames } from '../../../services/relay/routing';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { readWholeTopic } from '../../support/kafka-support';
import { accountsOf } from '../../support/accounts';
import {
  appendProfileAndUnknownEvents,
  createWorkspaces,
  expectTopicsToMirrorLog,
  ledgerRound,
  readWholeLog,
  waitFor,
  type Workspace,
} from './workload';

const databaseUrl = serverUrl('postgres');
const kafkaBrokers = serverUrl('kafka');

const quietLogger: RelayLogger = { info() {}, warn() {}, error() {} };

describe.skipIf(!databaseUrl || !kafkaBrokers)('Kafka relay on PostgreSQL and a real broker', () => {
  const brokers = (kafkaBrokers ?? '').split(',');
  const topicPrefix = `relaytest-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}.`;
  let db: TestDatabase;
  let sql: Sql;
  let store: EventStore;
  let ledger: Ledger;
  let workspaces: Workspace[];
  let relay: RunningRelay | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = createPgSql(db.url);
    await migrate(sql);
    store = new EventStore(sql, INLINE_PROJECTIONS);
    ledger = new Ledger(store);
  });

  afterAll(async () => {
    await relay?.stop();
    await sql?.close();
    await db?.drop();
    // Leave the shared broker as it was.
    const admin = new Kafka({ clientId: 'relay-test-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: Object.values(topicNames(topicPrefix)) }).catch(() => undefined);
    await admin.disconnect();
  });

  it('publishes the whole log: each event on its topic, in log order per key, ledger balances equal to the projection', async () => {
    workspaces = await createWorkspaces(store, 6);
    for (let round = 0; round < 3; round++) await ledgerRound(ledger, workspaces, round);
    const accounts = accountsOf(store);
    await accounts.workspaces.changeLimits(workspaces[0]!.id, 3);
    await accounts.keys.revoke(workspaces[1]!.keyId);
    await appendProfileAndUnknownEvents(store);
    const logLength = (await readWholeLog(store)).length;
    expect(await pendingEvents(store)).toMatchObject({ events: logLength, checkpoint: { transactionId: '0', position: 0 } });

    relay = await startRelay({ store, brokers, topicPrefix, logger: quietLogger });
    await relay.settled();
    const lag = await relay.lag();
    expect(lag).toMatchObject({ events: 0, oldestAgeMs: null, connected: true, lastError: null, publishedSinceStart: logLength });

    const check = await expectTopicsToMirrorLog(store, brokers, relay.topics);
    expect(check.duplicates).toBe(0);
    expect(check.balances.size).toBe(6);

    // Live: what is appended while the relay runs follows.
    await ledgerRound(ledger, workspaces, 3);
    await relay.settled();
    expect((await relay.lag()).events).toBe(0);
    await expectTopicsToMirrorLog(store, brokers, relay.topics);
  });

  it('created every topic with 3 partitions each, kept forever, the balances topic compacted', async () => {
    const admin = new Kafka({ clientId: 'relay-test-admin', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const names = Object.values(relay!.topics);
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      expect(topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual(names.map((n) => [n, 3]).sort());
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['retention.ms', 'cleanup.policy'] })),
      });
      expect(resources).toHaveLength(names.length);
      for (const resource of resources) {
        expect(resource.configEntries).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ configName: 'retention.ms', configValue: '-1' }),
            expect.objectContaining({ configName: 'cleanup.policy', configValue: resource.resourceName === relay!.topics.balances ? 'compact' : 'delete' }),
          ]),
        );
      }
    } finally {
      await admin.disconnect();
    }
  });

  it('puts headers on each message and keeps the key hash out of the keys topic', async () => {
    const charges = (await readWholeTopic(brokers, relay!.topics.ledger)).filter((m) => m.headers.type === 'LookupCharged');
    expect(charges.length).toBeGreaterThan(0);
    for (const m of charges) {
      expect(m.headers['schema-version']).toBe('1');
      expect(m.headers['request-id']).toMatch(/^req_/);
      expect(JSON.parse(m.value)).toMatchObject({ event_id: m.headers['event-id'], metadata: { request_id: m.headers['request-id'] } });
    }
    const keyMessages = await readWholeTopic(brokers, relay!.topics.keys);
    expect(keyMessages.map((m) => m.headers.type).sort()).toEqual([...Array(6).fill('ApiKeyCreated'), 'ApiKeyRevoked']);
    for (const m of keyMessages) expect(m.value).not.toContain('key_hash');
    const { rows } = await sql.query<{ key_hash: string }>('SELECT key_hash FROM api_keys');
    const everything = keyMessages.map((m) => m.value).join('\n');
    for (const { key_hash } of rows) expect(everything).not.toContain(key_hash);

    const other = await readWholeTopic(brokers, relay!.topics.other);
    expect(other.map((m) => [m.key, m.headers.type])).toEqual([['company-1337-aliases', 'AliasesObserved']]);
  });

  it('resumes from its checkpoint after a restart: nothing lost, nothing sent twice', async () => {
    await relay!.stop();
    const checkpoint = await readCheckpoint(store, RELAY_SUBSCRIPTION);
    await ledgerRound(ledger, workspaces, 4);
    const waiting = await pendingEvents(store);
    expect(waiting.events).toBeGreaterThan(0);
    expect(waiting.checkpoint).toEqual(checkpoint);
    expect(waiting.oldestAgeMs).toBeGreaterThanOrEqual(0);

    relay = await startRelay({ store, brokers, topicPrefix, logger: quietLogger });
    await relay.settled();
    expect((await relay.lag()).publishedSinceStart).toBe(waiting.events);
    const check = await expectTopicsToMirrorLog(store, brokers, relay.topics);
    expect(check.duplicates).toBe(0);
  });

  it('lets only one of two relays on the same database publish a batch at a time', async () => {
    const second = await startRelay({ store, brokers, topicPrefix, logger: quietLogger });
    try {
      for (let round = 5; round < 8; round++) await ledgerRound(ledger, workspaces, round);
      await Promise.all([relay!.settled(), second.settled()]);
      const check = await expectTopicsToMirrorLog(store, brokers, relay!.topics);
      expect(check.duplicates).toBe(0);
    } finally {
      await second.stop();
    }
  });

  it('gives consumers the same balances when the whole log is published a second time (duplicates dropped by event id)', async () => {
    await relay!.settled();
    const before = await expectTopicsToMirrorLog(store, brokers, relay!.topics);
    // A second checkpoint name replays everything onto the same topics, as a restored backup would.
    const replay = await startRelay({ store, brokers, topicPrefix, subscriptionName: 'kafka-relay-replay', logger: quietLogger });
    try {
      await replay.settled();
    } finally {
      await replay.stop();
    }
    const after = await expectTopicsToMirrorLog(store, brokers, relay!.topics);
    expect(after.ledgerMessages).toBe(before.ledgerMessages * 2);
    expect(after.duplicates).toBe(before.ledgerMessages);
    expect(after.balances).toEqual(before.balances);
  });

  it('npm run consume prints the running balances and, on Ctrl-C, totals equal to the projection', { timeout: 60_000 }, async () => {
    await relay!.settled();
    const { rows } = await sql.query<{ id: string; balance: number }>('SELECT id, balance FROM workspaces ORDER BY id');
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/relay/consume-ledger.ts', '--from-beginning', '--topic-prefix', topicPrefix], {
      env: { ...process.env, KAFKA_BROKERS: brokers.join(',') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // The last balance line of every workspace shows its current balance.
    await waitFor(
      async () => rows.every((r) => output.includes(`${r.id}\tbalance ${r.balance}\t`)) && /duplicate .* dropped/.test(output),
      45_000,
      `the consumer to print every balance; so far:\n${output.slice(-2000)}`,
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const totals = output.split('\n').filter((line) => /^ws_\S+\t-?\d+$/.test(line));
    expect(totals).toEqual(rows.map((r) => `${r.id}\t${r.balance}`));
  });
});
