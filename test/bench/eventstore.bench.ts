// Event-store append throughput beside a raw INSERT of the same rows, in the same run.
//
//   npm run bench:eventstore            (BENCH_SECONDS=4 per measurement by default)
//
// Backends: PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test, a fresh
// database per run) with 8 concurrent writers on an 8-connection pool; PGlite in memory and on
// disk with one writer (PGlite has a single connection, so more writers only queue).
// Cases: one event per append, and 50 events per append. "raw" inserts the same rows with one
// autocommitted statement into a plain table of the same columns (no index); "raw+indexes" into a
// copy of the events table with all its indexes, which shows how much of the gap is the indexes
// and how much the store's transaction (BEGIN, stream-version bump, INSERT ... RETURNING, COMMIT).
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import type { Sql } from '../../services/eventstore/sql';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { createPgliteSql } from '../../services/eventstore/sql-pglite';
import type { NewEvent } from '../../services/eventstore/types';
import { benchSeconds, createScratchDatabase, fmt, machineLoad, postgresSettings, ratio, table } from './support';

const BATCH = 50;
const PG_WRITERS = 8;
const ROUNDS = 3;
const WARM_UP_SECONDS = 0.3;

type Variant = 'store' | 'raw' | 'raw+indexes';
const RAW_TABLE: Record<Exclude<Variant, 'store'>, string> = { raw: 'raw_events', 'raw+indexes': 'raw_events_indexed' };

export interface Measurement {
  variant: Variant;
  eventsPerAppend: number;
  writers: number;
  appends: number;
  seconds: number;
  appendsPerSecond: number;
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** A payload shaped like the service's busiest event (a charge), about 200 bytes of JSON. */
function benchEvent(writer: number, n: number): NewEvent {
  const requestId = `req_bench${writer}x${n.toString(36).padStart(12, '0')}`;
  return {
    type: 'BenchCharged',
    data: { workspace_id: 'ws_01JBENCHWORKSPACE00000000', request_id: requestId, key_id: 'key_01JBENCHKEY000000000000', operation: 'company', credits: 1 },
    metadata: { request_id: requestId },
  };
}

async function createRawTables(sql: Sql): Promise<void> {
  // Same columns, defaults (transaction id, time) and identity as `events`.
  await sql.query('CREATE TABLE IF NOT EXISTS raw_events (LIKE events INCLUDING DEFAULTS INCLUDING IDENTITY)');
  await sql.query('CREATE TABLE IF NOT EXISTS raw_events_indexed (LIKE events INCLUDING ALL)');
}

function rawInsert(sql: Sql, tableName: string, stream: string, firstVersion: number, events: NewEvent[]) {
  if (events.length === 1) {
    const e = events[0]!;
    return sql.query(
      `INSERT INTO ${tableName} (stream, version, type, data, metadata) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)`,
      [stream, firstVersion, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata ?? {})],
    );
  }
  // The same multi-row form the store uses, so both send one statement for the batch.
  return sql.query(
    `INSERT INTO ${tableName} (stream, version, type, data, metadata)
     SELECT $1, x.version, x.type, x.data::jsonb, x.metadata::jsonb
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS x(version, type, data, metadata)`,
    [
      stream,
      events.map((_, i) => firstVersion + i),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => JSON.stringify(e.metadata ?? {})),
    ],
  );
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Slice {
  appends: number;
  latencies: number[];
  seconds: number;
}

/**
 * Runs `writers` loops for `seconds`, each appending `eventsPerAppend` events to its own stream.
 * `nextIndex` numbers the appends of each writer across slices, so stream versions stay unique.
 */
async function runSlice(
  sql: Sql,
  store: EventStore,
  variant: Variant,
  eventsPerAppend: number,
  writers: number,
  seconds: number,
  streamOf: (w: number) => string,
  nextIndex: number[],
): Promise<Slice> {
  const latencies: number[] = [];
  let appends = 0;
  const writeOne = async (w: number) => {
    const n = nextIndex[w]!++;
    const events = Array.from({ length: eventsPerAppend }, (_, i) => benchEvent(w, n * eventsPerAppend + i));
    if (variant === 'store') await store.append(streamOf(w), events);
    else await rawInsert(sql, RAW_TABLE[variant], streamOf(w), n * eventsPerAppend + 1, events);
  };
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await writeOne(w);
        latencies.push(performance.now() - t0);
        appends++;
      }
    }),
  );
  return { appends, latencies, seconds: (performance.now() - start) / 1000 };
}

/**
 * Store, raw and raw+indexes for one batch size, interleaved in ROUNDS slices each, so a change in
 * background load (other processes on a 2-core machine) hits all three alike. Each variant first
 * gets an untimed warm-up (connections, plans, first pages).
 */
async function measureInterleaved(
  sql: Sql,
  store: EventStore,
  eventsPerAppend: number,
  writers: number,
  seconds: number,
  runId: string,
): Promise<Measurement[]> {
  const variants = ['store', 'raw', 'raw+indexes'] as const;
  const prefix = (variant: Variant) => `bench-${runId}-${variant}-${eventsPerAppend}-w`;
  const nextIndex = new Map(variants.map((v) => [v, Array.from({ length: writers }, () => 0)]));
  const totals = new Map(variants.map((v) => [v, { appends: 0, latencies: [] as number[], seconds: 0 }]));

  for (const variant of variants) {
    await runSlice(sql, store, variant, eventsPerAppend, writers, WARM_UP_SECONDS, (w) => prefix(variant) + w, nextIndex.get(variant)!);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of variants) {
      const slice = await runSlice(sql, store, variant, eventsPerAppend, writers, seconds / ROUNDS, (w) => prefix(variant) + w, nextIndex.get(variant)!);
      const total = totals.get(variant)!;
      total.appends += slice.appends;
      total.seconds += slice.seconds;
      for (const l of slice.latencies) total.latencies.push(l);
    }
  }

  const measurements: Measurement[] = [];
  for (const variant of variants) {
    // The figures count only what the database really holds.
    const tableName = variant === 'store' ? 'events' : RAW_TABLE[variant];
    const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${tableName} WHERE stream LIKE $1`, [`${prefix(variant)}%`]);
    const written = nextIndex.get(variant)!.reduce((a, b) => a + b, 0) * eventsPerAppend;
    if (rows[0]!.n !== written) throw new Error(`${variant}: ${rows[0]!.n} rows in ${tableName}, expected ${written}`);

    const { appends, latencies, seconds: elapsed } = totals.get(variant)!;
    latencies.sort((a, b) => a - b);
    measurements.push({
      variant,
      eventsPerAppend,
      writers,
      appends,
      seconds: elapsed,
      appendsPerSecond: appends / elapsed,
      eventsPerSecond: (appends * eventsPerAppend) / elapsed,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    });
  }
  return measurements;
}

export interface BackendReport {
  backend: string;
  writers: number;
  measurements: Measurement[];
  load: string;
}

async function benchBackend(backend: string, sql: Sql, writers: number, seconds: number): Promise<BackendReport> {
  await migrate(sql);
  await createRawTables(sql);
  // No inline projections: this measures the store itself (the service's projections only react to
  // its own event types, and their cost belongs to the ledger, not the log).
  const store = new EventStore(sql);
  const loadBefore = machineLoad();
  const runId = Date.now().toString(36);
  const measurements: Measurement[] = [];
  for (const eventsPerAppend of [1, BATCH]) {
    measurements.push(...(await measureInterleaved(sql, store, eventsPerAppend, writers, seconds, runId)));
  }
  return { backend, writers, measurements, load: `${loadBefore} before, ${machineLoad()} after` };
}

export function printReport(report: BackendReport): void {
  console.log(`\n== ${report.backend}: ${report.writers} concurrent writer(s); ${report.load} ==`);
  const rows: (string | number)[][] = [['case', 'appends/s', 'events/s', 'p50 ms', 'p99 ms', 'store/this']];
  for (const m of report.measurements) {
    const store = report.measurements.find((s) => s.variant === 'store' && s.eventsPerAppend === m.eventsPerAppend)!;
    rows.push([
      `${m.variant}, ${m.eventsPerAppend} event${m.eventsPerAppend === 1 ? '' : 's'}/append`,
      fmt(m.appendsPerSecond),
      fmt(m.eventsPerSecond),
      fmt(m.p50Ms, 2),
      fmt(m.p99Ms, 2),
      m.variant === 'store' ? '' : ratio(store.eventsPerSecond, m.eventsPerSecond),
    ]);
  }
  console.log(table(rows));
}

export async function runEventStoreBench(): Promise<BackendReport[]> {
  const seconds = benchSeconds(4);
  const reports: BackendReport[] = [];
  console.log(`Event-store append benchmark: ${seconds} s per measurement, ${BATCH} events per batched append.`);
  console.log('"store/this" = store events/s divided by that row\'s events/s (1.000 = no overhead).');

  const database = await createScratchDatabase('bench_es');
  const pgSql = createPgSql(database.url, { max: PG_WRITERS });
  try {
    console.log(`PostgreSQL: ${await postgresSettings()}; pool of ${PG_WRITERS} connections shared by store and raw.`);
    reports.push(await benchBackend(`PostgreSQL`, pgSql, PG_WRITERS, seconds));
    printReport(reports.at(-1)!);
  } finally {
    await pgSql.close();
    await database.drop();
  }

  const memory = await createPgliteSql();
  try {
    reports.push(await benchBackend('PGlite (in memory)', memory, 1, seconds));
    printReport(reports.at(-1)!);
  } finally {
    await memory.close();
  }

  const dir = resolve('.run', 'bench', `pglite-es-${process.pid}`);
  const onDisk = await createPgliteSql(dir);
  try {
    reports.push(await benchBackend(`PGlite (on disk, ${dir})`, onDisk, 1, seconds));
    printReport(reports.at(-1)!);
  } finally {
    await onDisk.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return reports;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runEventStoreBench().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
