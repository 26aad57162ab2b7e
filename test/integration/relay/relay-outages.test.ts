// The relay against a broker of its own that the test stops and kills: down at start, lost in the
// middle of a stream, back again. Nothing committed to the log may be missing from Kafka after.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { startRelay, type RelayLogger, type RunningRelay } from '../../../services/relay/relay';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { DedicatedBroker } from '../../support/kafka-support';
import { createWorkspaces, expectTopicsToMirrorLog, ledgerRound, readWholeLog, waitFor, type Workspace } from './workload';

const databaseUrl = serverUrl('postgres');
// This suite starts its own broker from infra/kafka/lib; it runs where the shared one does.
const kafkaBrokers = serverUrl('kafka');

function recordingLogger() {
  const lines: { level: string; message?: string; fields: object }[] = [];
  const at = (level: string) => (fields: object, message?: string) => void lines.push({ level, message, fields });
  const logger: RelayLogger = { info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!databaseUrl || !kafkaBrokers)('Kafka relay through broker outages (a broker of its own)', () => {
  const topicPrefix = `relayfault-${randomBytes(3).toString('hex')}.`;
  let broker: DedicatedBroker;
  let db: TestDatabase;
  let sql: Sql;
  let store: EventStore;
  let ledger: Ledger;
  let workspaces: Workspace[];
  let relay: RunningRelay | undefined;
  const log = recordingLogger();

  beforeAll(async () => {
    broker = await DedicatedBroker.create();
    db = await createTestDatabase();
    sql = createPgSql(db.url);
    await migrate(sql);
    store = new EventStore(sql, INLINE_PROJECTIONS);
    ledger = new Ledger(store);
  });

  afterAll(async () => {
    await relay?.stop();
    await broker?.destroy();
    await sql?.close();
    await db?.drop();
  });

  it('waits for a broker that is down at start, with a growing lag, then publishes everything', { timeout: 180_000 }, async () => {
    relay = await startRelay({ store, brokers: [broker.address], topicPrefix, logger: log.logger, backoff: { initialMs: 100, maxMs: 1_000 } });
    workspaces = await createWorkspaces(store, 4);
    await ledgerRound(ledger, workspaces, 0);
    const written = (await readWholeLog(store)).length;

    await waitFor(async () => (await relay!.lag()).lastError !== null, 20_000, 'the relay to report the unreachable broker');
    const first = await relay.lag();
    await sleep(1_500);
    const later = await relay.lag();
    expect(first).toMatchObject({ events: written, connected: false, publishedSinceStart: 0 });
    expect(later.events).toBe(written);
    expect(later.oldestAgeMs!).toBeGreaterThan(first.oldestAgeMs!);
    // Reported once per outage (and every 20th attempt), not once per retry.
    const warnings = log.lines.filter((l) => l.level === 'warn');
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(3);

    await broker.start();
    await relay.settled();
    expect(await relay.lag()).toMatchObject({ events: 0, connected: true, lastError: null, publishedSinceStart: written });
    const check = await expectTopicsToMirrorLog(store, [broker.address], relay.topics);
    expect(check.duplicates).toBe(0);
  });

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`loses nothing when the broker dies (${signal}) in the middle of a stream and comes back`, { timeout: 240_000 }, async () => {
      let writing = true;
      let rounds = 0;
      const writer = (async () => {
        while (writing) await ledgerRound(ledger, workspaces, ++rounds);
      })();
      try {
        const before = (await relay!.lag()).publishedSinceStart;
        await waitFor(async () => (await relay!.lag()).publishedSinceStart > before + 50, 30_000, 'the relay to publish under load');

        await broker.kill(signal);
        const roundsAtKill = rounds;
        await waitFor(async () => !(await relay!.lag()).connected, 30_000, 'the relay to notice the lost broker');
        await waitFor(async () => rounds > roundsAtKill + 3, 30_000, 'more writes while the broker is away');
        const during = await relay!.lag();
        expect(during.events).toBeGreaterThan(0);
        expect(during.lastError).not.toBeNull();

        await broker.start();
        await waitFor(async () => (await relay!.lag()).publishedSinceStart > during.publishedSinceStart, 60_000, 'publishing to resume');
      } finally {
        writing = false;
        await writer;
      }
      await relay!.settled();
      expect((await relay!.lag()).events).toBe(0);
      const check = await expectTopicsToMirrorLog(store, [broker.address], relay!.topics);
      // Duplicates are allowed (a batch whose acknowledgement was lost is sent again), losses are not.
      expect(check.balances.size).toBe(workspaces.length);
      console.info(`${signal}: ${check.ledgerMessages} ledger messages, ${check.duplicates} re-sent duplicates dropped by the consumer`);
    });
  }
});
