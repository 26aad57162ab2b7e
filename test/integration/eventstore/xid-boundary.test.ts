// The global order across a power of ten of the transaction counter (99,999 → 100,000), on a
// cluster of the test's own whose counter starts just below it. Ordered as text, '100000' sorts
// before '99999': a page of a subscription took the later events first, its checkpoint jumped past
// the earlier ones and they were never read. Here the usage projection and the Kafka relay start
// behind a log that straddles the boundary, read it in pages much smaller than the backlog, and
// each must see every event exactly once.
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventId } from '../../../contracts/jsonschema';
import { newRequestId } from '../../../services/common/ids';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { readCheckpoint, startSubscription, type SubscriptionHandler } from '../../../services/eventstore/subscription';
import type { RecordedEvent } from '../../../services/eventstore/types';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { rebuildProjections } from '../../../services/projections/rebuild';
import { usageProjection } from '../../../services/projections/usage';
import { startRelay, type RelayLogger } from '../../../services/relay/relay';
import { topicNames } from '../../../services/relay/routing';
import { privateServersAvailable, startPrivatePostgres, type PrivatePostgres } from '../../support/private-servers';
import { serverUrl } from '../../support/servers';
import { readWholeTopic } from '../../support/kafka-support';
import { accountsOf } from '../../support/accounts';

const BOUNDARY = 100_000n;
/** Pages far smaller than the backlog on either side of the boundary. */
const PAGE = 25;
/** Transactions to run past the boundary: several pages of events after it. */
const PAST_BOUNDARY = 150n;

const kafkaBrokers = serverUrl('kafka');
const canStartPostgres = privateServersAvailable(['postgres'], 'xid-boundary.test.ts');

const quietLogger: RelayLogger = { info() {}, warn() {}, error() {} };

interface UsageTotals {
  calls: number;
  charged: number;
  refunded: number;
  errors: number;
}

describe.skipIf(!canStartPostgres || !kafkaBrokers)('global order across transaction id 99,999 → 100,000', () => {
  const brokers = (kafkaBrokers ?? '').split(',');
  const topicPrefix = `xidboundary-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}.`;
  let server: PrivatePostgres;
  let sql: Sql;
  let store: EventStore;
  /** Every event of the log, by id, read directly (position order, no snapshot filter). */
  let logIds: string[];
  /** What the workload appended, per key and operation (days summed). */
  const expectedUsage = new Map<string, UsageTotals>();

  const add = (keyId: string, operation: string, delta: Partial<UsageTotals>) => {
    const id = `${keyId}|${operation}`;
    const t = expectedUsage.get(id) ?? { calls: 0, charged: 0, refunded: 0, errors: 0 };
    for (const k of Object.keys(delta) as (keyof UsageTotals)[]) t[k] += delta[k]!;
    expectedUsage.set(id, t);
  };

  async function usageTotals(): Promise<Map<string, UsageTotals>> {
    const { rows } = await sql.query<{ key_id: string; operation: string; calls: string; charged: string; refunded: string; errors: string }>(
      `SELECT key_id, operation, sum(calls)::text AS calls, sum(credits_charged)::text AS charged,
              sum(credits_refunded)::text AS refunded, sum(errors)::text AS errors
         FROM usage_daily GROUP BY key_id, operation`,
    );
    return new Map(
      rows.map((r) => [`${r.key_id}|${r.operation}`, { calls: Number(r.calls), charged: Number(r.charged), refunded: Number(r.refunded), errors: Number(r.errors) }]),
    );
  }

  beforeAll(async () => {
    server = await startPrivatePostgres({ nextXid: 99_900 });
    sql = createPgSql(server.url);
    await migrate(sql);
    store = new EventStore(sql, INLINE_PROJECTIONS);
    const ledger = new Ledger(store);
    const accounts = accountsOf(store);

    const keys: { workspaceId: string; keyId: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const ws = await accounts.workspaces.create({ name: `boundary ${i}`, credits: 1_000_000 });
      const key = await accounts.keys.create(ws.id, { name: `key ${i}` });
      keys.push({ workspaceId: ws.id, keyId: key.id });
    }
    const newestXid = async () => BigInt((await sql.query<{ xid: string }>('SELECT max(transaction_id)::text AS xid FROM events')).rows[0]!.xid);
    // One ledger call at a time, each its own transaction, until the counter is well past the boundary.
    for (let i = 0; (await newestXid()) < BOUNDARY + PAST_BOUNDARY; i++) {
      const { workspaceId, keyId } = keys[i % keys.length]!;
      const operation = i % 2 === 0 ? 'company' : 'person_url';
      const credits = 1 + (i % 3);
      const requestId = newRequestId();
      if (i % 3 === 2) {
        // A live lookup that failed: charged, then refunded in full.
        expect(await ledger.charge({ workspaceId, requestId, keyId, operation, credits })).toMatchObject({ kind: 'charged' });
        await ledger.settle({
          workspaceId,
          requestId,
          keyId,
          operation,
          refund: { owed: credits, cause: 'timeout' },
          completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'timeout' },
        });
        add(keyId, operation, { calls: 1, charged: credits, refunded: credits, errors: 1 });
      } else {
        // A cache hit: charge and completion in one transaction.
        const completed = { outcome: 'success', cache_status: 'HIT', credits_charged: credits, error_code: null } as const;
        expect(await ledger.charge({ workspaceId, requestId, keyId, operation, credits, completed })).toMatchObject({ kind: 'charged' });
        add(keyId, operation, { calls: 1, charged: credits });
      }
    }

    const { rows } = await sql.query<{ stream: string; version: string }>('SELECT stream, version FROM events ORDER BY position');
    logIds = rows.map((r) => eventId(r.stream, Number(r.version)));
    // The log must straddle the boundary with a backlog of many pages on each side, or this proves nothing.
    const { rows: sides } = await sql.query<{ before: string; after: string }>(
      `SELECT count(*) FILTER (WHERE transaction_id < $1::xid8)::text AS before,
              count(*) FILTER (WHERE transaction_id >= $1::xid8)::text AS after FROM events`,
      [String(BOUNDARY)],
    );
    expect(Number(sides[0]!.before)).toBeGreaterThan(3 * PAGE);
    expect(Number(sides[0]!.after)).toBeGreaterThan(3 * PAGE);
  }, 120_000);

  afterAll(async () => {
    await sql?.close();
    await server?.destroy();
    if (kafkaBrokers) {
      const admin = new Kafka({ clientId: 'xid-boundary-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      await admin.deleteTopics({ topics: Object.values(topicNames(topicPrefix)) }).catch(() => undefined);
      await admin.disconnect();
    }
  }, 60_000);

  it('the head of the log is the event with the highest transaction id, not the text-greatest one', async () => {
    const { rows } = await sql.query<{ transaction_id: string; position: string }>(
      'SELECT transaction_id::text AS transaction_id, position FROM events WHERE transaction_id = (SELECT max(transaction_id) FROM events) ORDER BY position DESC LIMIT 1',
    );
    expect(BigInt(rows[0]!.transaction_id)).toBeGreaterThanOrEqual(BOUNDARY);
    expect(await store.lastEvent()).toEqual({ transactionId: rows[0]!.transaction_id, position: Number(rows[0]!.position) });
  });

  it('the usage projection, far behind, sees every event exactly once and sums to what was appended', async () => {
    const seen = new Map<string, number>();
    const observedUsage: SubscriptionHandler = {
      name: usageProjection.name,
      async handle(tx, events: RecordedEvent[]) {
        await usageProjection.handle(tx, events);
        for (const e of events) seen.set(eventId(e.stream, e.version), (seen.get(eventId(e.stream, e.version)) ?? 0) + 1);
      },
    };
    const subscription = startSubscription(store, observedUsage, { batchSize: PAGE, pollIntervalMs: 50 });
    try {
      await subscription.settled();
    } finally {
      await subscription.stop();
    }
    expect([...seen.keys()].sort()).toEqual([...logIds].sort());
    expect([...seen.values()].filter((n) => n !== 1)).toEqual([]);
    expect(await usageTotals()).toEqual(expectedUsage);
    expect(await readCheckpoint(store, usageProjection.name)).toEqual(await store.lastEvent());

    // A rebuild replays the log through the same subscription (500 a page): the same totals.
    const rebuilt = await rebuildProjections(store);
    expect(rebuilt).toEqual({ events: logIds.length, usageEvents: logIds.length });
    expect(await usageTotals()).toEqual(expectedUsage);
  }, 60_000);

  it('the Kafka relay, far behind, publishes every event exactly once', async () => {
    const relay = await startRelay({ store, brokers, topicPrefix, batchSize: PAGE, partitions: 1, logger: quietLogger });
    try {
      await relay.settled();
      // settled() waits for the head of the log: nothing may be left once it returns.
      expect(await relay.lag()).toMatchObject({ events: 0, connected: true, publishedSinceStart: logIds.length });
    } finally {
      await relay.stop();
    }
    const published = new Map<string, number>();
    const { balances: _notEvents, ...eventTopics } = relay.topics;
    for (const topic of Object.values(eventTopics)) {
      for (const m of await readWholeTopic(brokers, topic)) {
        const id = m.headers['event-id']!;
        published.set(id, (published.get(id) ?? 0) + 1);
      }
    }
    expect([...published.keys()].sort()).toEqual([...logIds].sort());
    expect([...published.values()].filter((n) => n !== 1)).toEqual([]);
  }, 60_000);
});
