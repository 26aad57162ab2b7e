// What a run stores (docs/scaling.md, "What grows with what"): events per charged call, bytes per
// event and per row and each index's size, read after the load from the real tables with
// PostgreSQL's own size functions; and the Redis keys of its API keys and workspaces, read under load.
import { Redis } from 'ioredis';
import pg from 'pg';
import { fmt, table } from './support';

/** The tables that gain rows with every charged call, then with each Idempotency-Key (kept 24 h). */
const PER_CHARGED_CALL: readonly string[] = ['events', 'ledger_entries', 'charges'];
const GROWING_TABLES = [...PER_CHARGED_CALL, 'idempotency_keys'];

interface EventType {
  type: string;
  rows: number;
  /** Averages of pg_column_size: the stored (possibly compressed) size of the value. */
  dataBytes: number;
  metadataBytes: number;
  rowBytes: number;
}

interface TableSize {
  table: string;
  rows: number;
  /** pg_relation_size: the main fork; pg_table_size minus it: TOAST, free-space and visibility maps. */
  heapBytes: number;
  toastBytes: number;
  /** entries: rows the index covers (a partial index: those matching its predicate), counted after the run. */
  indexes: { name: string; bytes: number; entries: number }[];
  totalBytes: number;
}

export interface StorageFigures {
  chargedCalls: number;
  eventTypes: EventType[];
  tables: TableSize[];
}

export async function measureStorage(databaseUrl: string): Promise<StorageFigures> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: types } = await client.query<{ type: string; rows: string; data: number; metadata: number; row: number }>(
      `SELECT type, count(*) AS rows, avg(pg_column_size(data))::float8 AS data, avg(pg_column_size(metadata))::float8 AS metadata,
              avg(pg_column_size(e.*))::float8 AS row
         FROM events e GROUP BY type ORDER BY count(*) DESC, type`,
    );
    const eventTypes = types.map((t) => ({ type: t.type, rows: Number(t.rows), dataBytes: t.data, metadataBytes: t.metadata, rowBytes: t.row }));
    const tables: TableSize[] = [];
    for (const name of GROWING_TABLES) {
      const { rows: [size] } = await client.query<{ heap: string; toast: string; total: string }>(
        `SELECT pg_relation_size($1::regclass) AS heap, pg_table_size($1::regclass) - pg_relation_size($1::regclass) AS toast,
                pg_total_relation_size($1::regclass) AS total`,
        [name],
      );
      const { rows: indexes } = await client.query<{ name: string; bytes: string; predicate: string | null }>(
        `SELECT indexrelid::regclass::text AS name, pg_relation_size(indexrelid) AS bytes, pg_get_expr(indpred, indrelid) AS predicate
           FROM pg_index WHERE indrelid = $1::regclass ORDER BY 2 DESC, 1`,
        [name],
      );
      const { rows: [count] } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
      const entries = async (predicate: string | null) =>
        predicate === null ? Number(count!.n) : Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name} WHERE ${predicate}`)).rows[0]!.n);
      tables.push({
        table: name,
        rows: Number(count!.n),
        heapBytes: Number(size!.heap),
        toastBytes: Number(size!.toast),
        indexes: await Promise.all(indexes.map(async (i) => ({ name: i.name, bytes: Number(i.bytes), entries: await entries(i.predicate) }))),
        totalBytes: Number(size!.total),
      });
    }
    return { chargedCalls: eventTypes.find((t) => t.type === 'LookupCharged')?.rows ?? 0, eventTypes, tables };
  } finally {
    await client.end();
  }
}

/** Bytes on disk and index entries per charged call in the tables every charged call adds rows to (events, ledger_entries, charges). */
export function perChargedCall(s: StorageFigures): { bytes: number; indexEntries: number; tables: string[] } {
  const tables = s.tables.filter((t) => PER_CHARGED_CALL.includes(t.table));
  const sum = (pick: (t: TableSize) => number) => tables.reduce((a, t) => a + pick(t), 0);
  return {
    bytes: sum((t) => t.totalBytes) / s.chargedCalls,
    indexEntries: sum((t) => t.indexes.reduce((a, i) => a + i.entries, 0)) / s.chargedCalls,
    tables: tables.map((t) => t.table),
  };
}

/** One table's write counters (pg_stat_user_tables), size, and its indexes with the share of its rows each covers. */
export interface TableWrites {
  table: string;
  inserted: number;
  updated: number;
  /** Updates that wrote no index entry (heap-only tuples). */
  hotUpdated: number;
  deleted: number;
  totalBytes: number;
  indexes: { name: string; share: number }[];
}

/**
 * Every table's write counters. PostgreSQL 15 flushes a backend's counters at most once a second
 * and, once idle, within 10 s (PGSTAT_IDLE_INTERVAL): read this after `settleMs` without load.
 */
export async function readTableWrites(databaseUrl: string, settleMs = 11_000): Promise<TableWrites[]> {
  await new Promise((r) => setTimeout(r, settleMs));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ table: string; ins: string; upd: string; hot: string; del: string; bytes: string; rows: string }>(
      `SELECT relid::regclass::text AS table, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del,
              pg_total_relation_size(relid) AS bytes, n_live_tup AS rows
         FROM pg_stat_user_tables ORDER BY 1`,
    );
    const { rows: indexes } = await client.query<{ table: string; name: string; predicate: string | null }>(
      `SELECT i.indrelid::regclass::text AS table, i.indexrelid::regclass::text AS name, pg_get_expr(i.indpred, i.indrelid) AS predicate
         FROM pg_index i JOIN pg_stat_user_tables t ON t.relid = i.indrelid ORDER BY 1, 2`,
    );
    const result: TableWrites[] = [];
    for (const t of tables) {
      const own = indexes.filter((i) => i.table === t.table);
      result.push({
        table: t.table,
        inserted: Number(t.ins),
        updated: Number(t.upd),
        hotUpdated: Number(t.hot),
        deleted: Number(t.del),
        totalBytes: Number(t.bytes),
        indexes: await Promise.all(
          own.map(async (i) => {
            if (i.predicate === null) return { name: i.name, share: 1 };
            // A partial index covers only the rows matching its predicate: their share of the table now.
            const { rows: [c] } = await client.query<{ share: number | null }>(
              `SELECT (count(*) FILTER (WHERE ${i.predicate}))::float8 / nullif(count(*), 0) AS share FROM ${t.table}`,
            );
            return { name: i.name, share: c!.share ?? 0 };
          }),
        ),
      });
    }
    return result;
  } finally {
    await client.end();
  }
}

export interface WritesPerHit {
  table: string;
  inserted: number;
  updated: number;
  hotUpdated: number;
  deleted: number;
  indexEntries: number;
  bytes: number;
}

/**
 * What each table gained per charged hit between two readings: rows inserted, updated (of them
 * heap-only) and deleted, index entries (one per index for each insert and each update that is not
 * heap-only; a partial index: its share of the rows) and bytes of its files. Tables without writes are left out.
 */
export function writesPerHit(before: readonly TableWrites[], after: readonly TableWrites[], hits: number): WritesPerHit[] {
  if (!(hits > 0)) throw new RangeError(`writes per hit need a positive number of hits, got ${hits}`);
  const rows: WritesPerHit[] = [];
  for (const a of after) {
    const b = before.find((x) => x.table === a.table) ?? { inserted: 0, updated: 0, hotUpdated: 0, deleted: 0, totalBytes: 0 };
    const inserted = a.inserted - b.inserted;
    const updated = a.updated - b.updated;
    const hotUpdated = a.hotUpdated - b.hotUpdated;
    const deleted = a.deleted - b.deleted;
    if (inserted === 0 && updated === 0 && deleted === 0) continue;
    const indexed = inserted + updated - hotUpdated;
    const indexEntries = a.indexes.reduce((sum, i) => sum + i.share * indexed, 0);
    rows.push({ table: a.table, inserted: inserted / hits, updated: updated / hits, hotUpdated: hotUpdated / hits, deleted: deleted / hits,
      indexEntries: indexEntries / hits, bytes: (a.totalBytes - b.totalBytes) / hits });
  }
  return rows;
}

export function writesLines(rows: readonly WritesPerHit[], hits: number): string[] {
  const total = (pick: (r: WritesPerHit) => number) => rows.reduce((a, r) => a + pick(r), 0);
  return [
    table([
      ['table (per charged hit)', 'inserted', 'updated', 'of them HOT', 'deleted', 'index entries', 'bytes (file growth)'],
      ...rows.map((r) => [r.table, r.inserted.toFixed(2), r.updated.toFixed(2), r.hotUpdated.toFixed(2), r.deleted.toFixed(2), r.indexEntries.toFixed(2), fmt(r.bytes)]),
      ['all tables', total((r) => r.inserted).toFixed(2), total((r) => r.updated).toFixed(2), total((r) => r.hotUpdated).toFixed(2), total((r) => r.deleted).toFixed(2),
        total((r) => r.indexEntries).toFixed(2), fmt(total((r) => r.bytes))],
    ]),
    `(pg_stat_user_tables over ${fmt(hits)} charged hits, background work meanwhile included; index entries: one per index for each insert and ` +
      'each update that is not heap-only (HOT), a partial index counted by the share of the rows it covers; bytes: growth of the files, page by page)',
  ];
}

/** A Redis key that names one of the database's API keys or workspaces, the id replaced by its kind. */
export interface RedisKeySample {
  name: string;
  type: string;
  elements: number;
  /** MEMORY USAGE: the key, its value and Redis' overhead for them. */
  bytes: number;
}

/**
 * The Redis keys of the database's API keys and workspaces, found by their ids (no key format is
 * repeated here) and sized. Buckets and slot sets expire once idle: read this under load.
 */
export async function sampleRedisKeys(databaseUrl: string, redisUrl: string): Promise<RedisKeySample[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows: owners } = await client
    .query<{ kind: string; id: string }>(`SELECT '<API key id>' AS kind, id FROM api_keys UNION ALL SELECT '<workspace id>', id FROM workspaces`)
    .finally(() => client.end());
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const samples: RedisKeySample[] = [];
    for (const { kind, id } of owners) {
      for await (const batch of redis.scanStream({ match: `*${id}*`, count: 1000 })) {
        for (const name of batch as string[]) {
          const type = await redis.type(name);
          const elements = type === 'zset' ? await redis.zcard(name) : type === 'hash' ? await redis.hlen(name) : type === 'set' ? await redis.scard(name) : 1;
          samples.push({ name: name.replace(id, kind), type, elements, bytes: (await redis.memory('USAGE', name)) ?? 0 });
        }
      }
    }
    return samples;
  } finally {
    redis.disconnect();
  }
}

/** The figures as lines of the bench's report. */
export function storageLines(s: StorageFigures): string[] {
  const per = (n: number) => (s.chargedCalls > 0 ? (n / s.chargedCalls).toFixed(2) : '-');
  const bytesPer = (bytes: number, rows: number) => (rows > 0 ? fmt(bytes / rows) : '-');
  const eventRows = s.eventTypes.reduce((sum, t) => sum + t.rows, 0);
  const events = s.tables.find((t) => t.table === 'events');
  const lines = [
    `events per charged call: ${per(eventRows)} (${eventRows} events, ${s.chargedCalls} LookupCharged; by type below)`,
    table([
      ['event type', 'rows', 'per charged call', 'avg data B', 'avg metadata B', 'avg row B'],
      ...s.eventTypes.map((t) => [t.type, t.rows, per(t.rows), fmt(t.dataBytes), fmt(t.metadataBytes), fmt(t.rowBytes)]),
    ]),
    '(avg … B: pg_column_size, the stored size of the value; a row also costs a 24-byte tuple header and a 4-byte line pointer in its page)',
    '',
    table([
      ['table / index', 'rows', 'bytes', 'bytes per row', 'bytes per charged call', 'entries per charged call'],
      ...s.tables.flatMap((t) => [
        [`${t.table} (total)`, t.rows, fmt(t.totalBytes), bytesPer(t.totalBytes, t.rows), bytesPer(t.totalBytes, s.chargedCalls), ''],
        ['  heap', '', fmt(t.heapBytes), bytesPer(t.heapBytes, t.rows), bytesPer(t.heapBytes, s.chargedCalls), per(t.rows)],
        ['  TOAST and maps', '', fmt(t.toastBytes), bytesPer(t.toastBytes, t.rows), bytesPer(t.toastBytes, s.chargedCalls), ''],
        ...t.indexes.map((i) => [`  ${i.name}`, '', fmt(i.bytes), bytesPer(i.bytes, t.rows), bytesPer(i.bytes, s.chargedCalls), per(i.entries)]),
      ]),
    ]),
    '(no VACUUM before reading: sizes as the run left them)',
  ];
  if (events && events.rows > 0) {
    const indexBytes = events.indexes.reduce((sum, i) => sum + i.bytes, 0);
    const perCall = perChargedCall(s);
    lines.push(`events: ${bytesPer(events.totalBytes, events.rows)} B per event on disk, of which ${bytesPer(indexBytes, events.rows)} B in its ${events.indexes.length} indexes`);
    lines.push(`per charged call, ${perCall.tables.join(' + ')}: ${fmt(perCall.bytes)} B (idempotency_keys: per call with an Idempotency-Key, above)`);
    lines.push(
      `index entries per charged call, ${perCall.tables.join(' + ')}: ${perCall.indexEntries.toFixed(1)} ` +
        `(${s.tables.filter((t) => perCall.tables.includes(t.table)).map((t) => `${t.table}: ${t.indexes.map((i) => `${i.name} ${i.entries}`).join(', ')}`).join('; ')})`,
    );
  }
  return lines;
}

export function redisLines(samples: RedisKeySample[]): string[] {
  if (samples.length === 0) return ['no Redis key named an API key or a workspace of the run when sampled'];
  return [table([['Redis key', 'type', 'elements', 'bytes (MEMORY USAGE)'], ...samples.map((k) => [k.name, k.type, k.elements, fmt(k.bytes)])])];
}
