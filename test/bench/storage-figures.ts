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
  /** entries: rows the index holds (a partial index only those matching its predicate). */
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
    const perCall = s.tables.filter((t) => PER_CHARGED_CALL.includes(t.table)).reduce((sum, t) => sum + t.totalBytes, 0);
    lines.push(`events: ${bytesPer(events.totalBytes, events.rows)} B per event on disk, of which ${bytesPer(indexBytes, events.rows)} B in its ${events.indexes.length} indexes`);
    lines.push(`per charged call, ${PER_CHARGED_CALL.join(' + ')}: ${bytesPer(perCall, s.chargedCalls)} B (idempotency_keys: per call with an Idempotency-Key, above)`);
    const perCallTables = s.tables.filter((t) => PER_CHARGED_CALL.includes(t.table));
    const tuples = perCallTables.reduce((sum, t) => sum + t.rows, 0);
    const indexEntries = perCallTables.reduce((sum, t) => sum + t.indexes.reduce((n, i) => n + i.entries, 0), 0);
    lines.push(`per charged call, ${PER_CHARGED_CALL.join(' + ')}: ${per(tuples)} rows and ${per(indexEntries)} index entries`);
  }
  return lines;
}

export function redisLines(samples: RedisKeySample[]): string[] {
  if (samples.length === 0) return ['no Redis key named an API key or a workspace of the run when sampled'];
  return [table([['Redis key', 'type', 'elements', 'bytes (MEMORY USAGE)'], ...samples.map((k) => [k.name, k.type, k.elements, fmt(k.bytes)])])];
}
