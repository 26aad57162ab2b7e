// The compacted balances topic on PostgreSQL and the shared real broker: a consumer that starts
// after everything was published reads the topic from its beginning and ends with, for every
// workspace, the balance the admin API reports.
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../../services/api/server';
import { loadConfig } from '../../../services/config/config';
import { EventStore } from '../../../services/eventstore/event-store';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { startRelay, type RelayLogger, type RunningRelay } from '../../../services/relay/relay';
import { topicNames } from '../../../services/relay/routing';
import { ADMIN_TOKEN, AdminApi } from '../../e2e/support/harness';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { readWholeTopic } from '../../support/kafka-support';
import { createWorkspaces, latestBalances, ledgerRound, type Workspace } from './workload';

const databaseUrl = serverUrl('postgres');
const kafkaBrokers = serverUrl('kafka');
const quietLogger: RelayLogger = { info() {}, warn() {}, error() {} };

describe.skipIf(!databaseUrl || !kafkaBrokers)('the compacted balances topic', () => {
  const brokers = (kafkaBrokers ?? '').split(',');
  const topicPrefix = `balancestest-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}.`;
  const topics = topicNames(topicPrefix);
  let db: TestDatabase;
  let server: RunningServer;
  let admin: AdminApi;
  let sql: Sql;
  let ledger: Ledger;
  let ledgerStore: EventStore;
  let relay: RunningRelay | undefined;
  const workspaceIds: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // The API without KAFKA_BROKERS: the test runs its own relay, on topics of its own.
    server = await startServer(
      loadConfig({ PORT: '0', ADMIN_TOKEN, DATABASE_URL: db.url, SOURCE_URL: 'sandbox', DATA_DIR: tmpdir(), LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '60000' }),
    );
    admin = new AdminApi(server.url);
    sql = createPgSql(db.url);
    ledgerStore = new EventStore(sql, INLINE_PROJECTIONS);
    ledger = new Ledger(ledgerStore);
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    await server?.close();
    await sql?.close();
    await db?.drop();
    const kafkaAdmin = new Kafka({ clientId: 'balances-test-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
    await kafkaAdmin.connect();
    await kafkaAdmin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
    await kafkaAdmin.disconnect();
  });

  /** What a consumer starting now from the beginning ends with, against GET /admin/v1/workspaces/:id. */
  async function expectTopicToEqualAdminBalances(): Promise<Map<string, number>> {
    const latest = await latestBalances(brokers, topics.balances);
    const fromAdmin = new Map<string, number>();
    for (const id of workspaceIds) fromAdmin.set(id, await admin.balance(id));
    expect(Object.fromEntries(latest)).toEqual(Object.fromEntries(fromAdmin));
    return latest;
  }

  it('given grants, charges and refunds on several workspaces, when the relay has caught up, then the topic read from the start gives the admin balances', { timeout: 60_000 }, async () => {
    const workspaces: Workspace[] = await createWorkspaces(ledgerStore, 5);
    workspaceIds.push(...workspaces.map((w) => w.id));
    // One through the admin API with no credits at all: its balance, 0, is on the topic too.
    workspaceIds.push((await admin.createWorkspace({ name: 'never funded' })).id);
    for (let round = 0; round < 3; round++) await ledgerRound(ledger, workspaces, round);
    await admin.grantCredits(workspaces[2]!.id, 77);

    relay = await startRelay({ store: new EventStore(sql, INLINE_PROJECTIONS), brokers, topicPrefix, logger: quietLogger });
    await relay.settled();
    const latest = await expectTopicToEqualAdminBalances();
    expect(latest.get(workspaceIds.at(-1)!)).toBe(0);

    // Live traffic while the relay runs, then a consumer that starts later still.
    for (let round = 3; round < 6; round++) await ledgerRound(ledger, workspaces, round);
    await admin.grantCredits(workspaces[0]!.id, 5);
    await relay.settled();
    await expectTopicToEqualAdminBalances();
  });

  it('each message is the balance after the ledger event it names, keyed by workspace, with CloudEvents headers', { timeout: 60_000 }, async () => {
    const messages = await readWholeTopic(brokers, topics.balances);
    expect(messages.length).toBeGreaterThanOrEqual(workspaceIds.length);
    const ledgerIds = new Set((await readWholeTopic(brokers, topics.ledger)).map((m) => m.headers['event-id']));
    for (const m of messages) {
      const value = JSON.parse(m.value);
      expect(Object.keys(value).sort()).toEqual(['balance', 'last_event_id', 'last_event_position', 'last_event_recorded_at', 'workspace_id']);
      expect(value.workspace_id).toBe(m.key);
      expect(Number.isInteger(value.balance)).toBe(true);
      expect(ledgerIds.has(value.last_event_id)).toBe(true);
      expect(m.headers).toMatchObject({ ce_id: value.last_event_id, ce_source: '/lookup-api/balances', ce_time: value.last_event_recorded_at });
    }
  });
});
