// Kafka relay throughput: a backlog of N events in PostgreSQL, published to Kafka and acknowledged.
//
//   npx tsx test/bench/relay.bench.ts          (DATABASE_URL and KAFKA_BROKERS, defaults local)
//   BENCH_RELAY_EVENTS=50000 npx tsx test/bench/relay.bench.ts
//
// A fresh database gets N ledger-shaped events (charges and their completions on 200 workspace
// streams, appended 50 per transaction). Then, per batch size, a relay under its own checkpoint
// name and topic prefix publishes the whole backlog: from start to "checkpoint past the last event",
// every message acknowledged by all in-sync replicas (acks = -1, idempotent producer). Beside it,
// the two halves alone, on the same events: the checkpointed read with a handler that does nothing
// (database side), and sendBatch of the same messages without a database (Kafka side).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { newEvent, streams } from '../../contracts/events';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { catchUp } from '../../services/eventstore/subscription';
import { START, type NewEvent } from '../../services/eventstore/types';
import { startRelay, type RelayLogger } from '../../services/relay/relay';
import { byTopic, chunkBySize, toOutgoingMessage, topicNames } from '../../services/relay/routing';
import { createScratchDatabase, fmt, machineLoad, postgresSettings, table } from './support';

const EVENTS = Number(process.env.BENCH_RELAY_EVENTS ?? 20_000);
const BROKERS = (process.env.KAFKA_BROKERS?.trim() || '127.0.0.1:9092').split(',');
const WORKSPACES = 200;
const PER_APPEND = 50;
const WRITERS = 8;
const BATCH_SIZES = [100, 500, 2000];
const quiet: RelayLogger = { info() {}, warn() {}, error() {} };

function backlogEvents(workspace: string, from: number, count: number): NewEvent[] {
  const events: NewEvent[] = [];
  for (let n = from; events.length < count; n++) {
    const requestId = `req_${randomBytes(13).toString('hex').toUpperCase().slice(0, 26)}`;
    const keyId = 'key_01JBENCHKEY00000000000000';
    events.push(
      n % 2 === 0
        ? newEvent('LookupCharged', { workspace_id: workspace, request_id: requestId, key_id: keyId, operation: 'company', credits: 1 }, requestId)
        : newEvent('LookupCompleted', {
            workspace_id: workspace, request_id: requestId, key_id: keyId, operation: 'company',
            outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null,
          }, requestId),
    );
  }
  return events;
}

async function main(): Promise<void> {
  const db = await createScratchDatabase('bench_relay');
  const sql = createPgSql(db.url, { max: WRITERS + 2 });
  const kafka = new Kafka({ clientId: 'relay-bench', brokers: BROKERS, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const createdTopics: string[] = [];
  try {
    await migrate(sql);
    // Projections off for the backlog: the relay reads the log only, and the backlog fills faster.
    const store = new EventStore(sql, []);
    const workspaceIds = Array.from({ length: WORKSPACES }, (_, i) => `ws_01JBENCH${String(i).padStart(17, '0')}`);
    const started = performance.now();
    let appended = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        for (let i = writer; appended < EVENTS; i += WRITERS) {
          const count = Math.min(PER_APPEND, EVENTS - appended);
          if (count <= 0) break;
          appended += count;
          const ws = workspaceIds[i % WORKSPACES]!;
          await store.append(streams.workspace(ws), backlogEvents(ws, i, count));
        }
      }),
    );
    const { rows } = await sql.query<{ n: number }>('SELECT count(*) AS n FROM events');
    const total = Number(rows[0]!.n);
    console.log(`backlog: ${fmt(total)} events appended in ${fmt((performance.now() - started) / 1000, 1)} s`);
    console.log(`${await postgresSettings()}; kafka ${BROKERS.join(',')}; ${machineLoad()}`);

    await admin.connect();
    const results: (string | number)[][] = [['case', 'batch', 'events', 'seconds', 'events/s']];

    // Database side alone: the checkpointed read and checkpoint write, nothing sent.
    for (const batchSize of BATCH_SIZES) {
      const t0 = performance.now();
      const n = await catchUp(store, { name: `bench-read-${batchSize}`, handle: async () => {} }, batchSize);
      const s = (performance.now() - t0) / 1000;
      results.push(['read + checkpoint only', batchSize, n, s.toFixed(2), fmt(n / s)]);
    }

    // Kafka side alone: the same messages, sendBatch with acks = -1 on an idempotent producer.
    const log = await store.readAll(START, total + 1);
    for (const batchSize of BATCH_SIZES) {
      const topics = topicNames(`bench-${randomBytes(3).toString('hex')}.`);
      createdTopics.push(...Object.values(topics));
      await admin.createTopics({ waitForLeaders: true, topics: Object.values(topics).map((topic) => ({ topic, numPartitions: 3 })) });
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      const t0 = performance.now();
      for (let i = 0; i < log.length; i += batchSize) {
        const messages = log.slice(i, i + batchSize).map((e) => toOutgoingMessage(e, topics));
        for (const chunk of chunkBySize(messages, 512 * 1024)) await producer.sendBatch({ acks: -1, topicMessages: byTopic(chunk) });
      }
      const s = (performance.now() - t0) / 1000;
      await producer.disconnect();
      results.push(['kafka send only', batchSize, log.length, s.toFixed(2), fmt(log.length / s)]);
    }

    // The relay end to end: read, send, await acks, move the checkpoint, per transaction.
    for (const batchSize of BATCH_SIZES) {
      const prefix = `bench-${randomBytes(3).toString('hex')}.`;
      const topics = topicNames(prefix);
      createdTopics.push(...Object.values(topics));
      // Topics made beforehand so the figure is the publishing, not topic creation.
      await admin.createTopics({ waitForLeaders: true, topics: Object.values(topics).map((topic) => ({ topic, numPartitions: 3 })) });
      const t0 = performance.now();
      const relay = await startRelay({ store, brokers: BROKERS, topicPrefix: prefix, subscriptionName: `bench-relay-${batchSize}`, batchSize, logger: quiet });
      await relay.settled();
      const s = (performance.now() - t0) / 1000;
      const lag = await relay.lag();
      await relay.stop();
      if (lag.events !== 0 || lag.publishedSinceStart !== total) throw new Error(`relay left ${lag.events} events, published ${lag.publishedSinceStart}`);
      results.push(['relay end to end', batchSize, total, s.toFixed(2), fmt(total / s)]);
    }
    console.log(`\n${table(results)}`);
  } finally {
    if (createdTopics.length > 0) await admin.deleteTopics({ topics: createdTopics }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await sql.close();
    await db.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
