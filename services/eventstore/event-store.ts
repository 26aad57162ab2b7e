import type { Sql, SqlExecutor } from './sql';
import {
  START,
  WrongExpectedVersionError,
  type Checkpoint,
  type ExpectedVersion,
  type NewEvent,
  type RecordedEvent,
} from './types';

/** A projection kept in the append transaction: if it throws, nothing is written. */
export interface InlineProjection {
  readonly name: string;
  apply(tx: SqlExecutor, events: RecordedEvent[]): Promise<void>;
}

/** Appends that commit together, with the inline projections of each. */
export interface StoreTransaction {
  readonly sql: SqlExecutor;
  append(stream: string, events: NewEvent[], expected?: ExpectedVersion): Promise<RecordedEvent[]>;
}

export interface EventRow {
  position: number;
  stream: string;
  version: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown> | null;
  transaction_id: string;
  recorded_at: Date | string;
}

export const EVENT_COLUMNS =
  'position, stream, version, type, data, metadata, transaction_id::text AS transaction_id, recorded_at';

export class EventStore {
  private readonly appendedListeners = new Set<() => void>();

  constructor(
    readonly sql: Sql,
    private readonly inlineProjections: InlineProjection[] = [],
  ) {}

  /** Appends to one stream in its own transaction. */
  append(stream: string, events: NewEvent[], expected: ExpectedVersion = 'any'): Promise<RecordedEvent[]> {
    return this.transaction((tx) => tx.append(stream, events, expected));
  }

  /** Several appends (any streams) that commit together or not at all. */
  async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    let appended = false;
    const result = await this.sql.transaction((sqlTx) =>
      fn({
        sql: sqlTx,
        append: async (stream, events, expected = 'any') => {
          const recorded = await appendIn(sqlTx, stream, events, expected);
          for (const projection of this.inlineProjections) await projection.apply(sqlTx, recorded);
          appended ||= recorded.length > 0;
          return recorded;
        },
      }),
    );
    if (appended) for (const listener of this.appendedListeners) listener();
    return result;
  }

  async readStream(stream: string, fromVersion = 1): Promise<RecordedEvent[]> {
    const { rows } = await this.sql.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE stream = $1 AND version >= $2 ORDER BY version`,
      [stream, fromVersion],
    );
    return rows.map(toRecorded);
  }

  /**
   * Events strictly after `after` in global order, only from transactions that can no longer be
   * overtaken: every transaction older than the oldest one still in flight has committed or
   * aborted, so a reader that moves its checkpoint never skips an event that commits late.
   */
  readAll(after: Checkpoint = START, limit = 1000, executor: SqlExecutor = this.sql): Promise<RecordedEvent[]> {
    return readAllIn(executor, after, limit);
  }

  /**
   * Resolves once every transaction that was running at the call has finished, so readAll shows
   * everything committed before it. The global order holds events back while ANY older
   * transaction on the server is open (even in another database), so readers that need
   * "everything so far" wait here instead of mistaking a held-back event for none.
   */
  async waitForCommitted(timeoutMs = 30_000): Promise<void> {
    const { rows } = await this.sql.query<{ xmax: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax');
    const target = rows[0]!.xmax;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows: done } = await this.sql.query<{ ok: boolean }>(
        'SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS ok',
        [target],
      );
      if (done[0]!.ok) return;
      if (Date.now() > deadline) throw new Error('timed out waiting for older transactions to finish');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** In-process hint that something was appended; subscriptions poll anyway. */
  onAppended(listener: () => void): () => void {
    this.appendedListeners.add(listener);
    return () => this.appendedListeners.delete(listener);
  }
}

export async function readAllIn(executor: SqlExecutor, after: Checkpoint, limit: number): Promise<RecordedEvent[]> {
  const { rows } = await executor.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
      WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
        AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY transaction_id, position
      LIMIT $3`,
    [after.transactionId, after.position, limit],
  );
  return rows.map(toRecorded);
}

async function appendIn(
  tx: SqlExecutor,
  stream: string,
  events: NewEvent[],
  expected: ExpectedVersion,
): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const count = events.length;
  const newVersion = await bumpStreamVersion(tx, stream, count, expected);
  if (newVersion === null) {
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM streams WHERE stream = $1', [stream]);
    throw new WrongExpectedVersionError(stream, expected, rows[0]?.version ?? 0);
  }
  const firstVersion = newVersion - count + 1;
  const { rows } = await tx.query<EventRow>(
    `INSERT INTO events (stream, version, type, data, metadata)
     SELECT $1, x.version, x.type, x.data::jsonb, x.metadata::jsonb
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS x(version, type, data, metadata)
     RETURNING ${EVENT_COLUMNS}`,
    [
      stream,
      events.map((_, i) => firstVersion + i),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data ?? null)),
      events.map((e) => JSON.stringify(e.metadata ?? {})),
    ],
  );
  return rows.map(toRecorded).sort((a, b) => a.version - b.version);
}

/**
 * Moves the stream's version under its row lock, so concurrent writers to one stream serialise
 * here and the expectation is checked against the committed version. Null means a conflict.
 */
async function bumpStreamVersion(
  tx: SqlExecutor,
  stream: string,
  count: number,
  expected: ExpectedVersion,
): Promise<number | null> {
  if (expected === 'any') {
    const { rows } = await tx.query<{ version: number }>(
      `INSERT INTO streams (stream, version) VALUES ($1, $2)
       ON CONFLICT (stream) DO UPDATE SET version = streams.version + EXCLUDED.version
       RETURNING version`,
      [stream, count],
    );
    return rows[0]!.version;
  }
  if (expected === 'no_stream' || expected === 0) {
    const { rows } = await tx.query<{ version: number }>(
      `INSERT INTO streams (stream, version) VALUES ($1, $2) ON CONFLICT (stream) DO NOTHING RETURNING version`,
      [stream, count],
    );
    return rows[0]?.version ?? null;
  }
  if (!Number.isInteger(expected) || expected < 0) throw new RangeError(`bad expected version ${expected}`);
  const { rows } = await tx.query<{ version: number }>(
    `UPDATE streams SET version = version + $2 WHERE stream = $1 AND version = $3 RETURNING version`,
    [stream, count, expected],
  );
  return rows[0]?.version ?? null;
}

export function toRecorded(row: EventRow): RecordedEvent {
  return {
    position: Number(row.position),
    stream: row.stream,
    version: Number(row.version),
    type: row.type,
    data: row.data,
    metadata: row.metadata ?? {},
    transactionId: row.transaction_id,
    recordedAt: row.recorded_at instanceof Date ? row.recorded_at : new Date(row.recorded_at),
  };
}
