// The relay inside a process on the embedded database (PGlite, one connection): what `npm start`
// does with KAFKA_BROKERS set. Publishing shares the connection with the writers and must not
// starve them or lose anything.
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { startRelay, type RelayLogger, type RunningRelay } from '../../../services/relay/relay';
import { topicNames } from '../../../services/relay/routing';
import { serverUrl } from '../../support/servers';
import { createWorkspaces, expectTopicsToMirrorLog, ledgerRound } from './workload';

const kafkaBrokers = serverUrl('kafka');
const quietLogger: RelayLogger = { info() {}, warn() {}, error() {} };

describe.skipIf(!kafkaBrokers)('Kafka relay on PGlite (embedded database)', () => {
  const brokers = (kafkaBrokers ?? '').split(',');
  const topicPrefix = `relaylite-${randomBytes(3).toString('hex')}.`;
  let sql: Sql;
  let store: EventStore;
  let relay: RunningRelay | undefined;

  beforeAll(async () => {
    sql = await createPgliteSql();
    await migrate(sql);
    store = new EventStore(sql, INLINE_PROJECTIONS);
  });

  afterAll(async () => {
    await relay?.stop();
    await sql?.close();
    const admin = new Kafka({ clientId: 'relay-test-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: Object.values(topicNames(topicPrefix)) }).catch(() => undefined);
    await admin.disconnect();
  });

  it('publishes while the ledger writes, and the ledger topic rebuilds every balance', { timeout: 120_000 }, async () => {
    const ledger = new Ledger(store);
    relay = await startRelay({ store, brokers, topicPrefix, logger: quietLogger, pollIntervalMs: 50 });
    const workspaces = await createWorkspaces(store, 4);
    for (let round = 0; round < 5; round++) await ledgerRound(ledger, workspaces, round);
    await relay.settled();
    expect(await relay.lag()).toMatchObject({ events: 0, connected: true });
    const check = await expectTopicsToMirrorLog(store, brokers, relay.topics);
    expect(check.balances.size).toBe(4);
    expect(check.duplicates).toBe(0);
  });
});
