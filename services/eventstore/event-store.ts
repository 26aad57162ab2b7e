import type { Sql, SqlExecutor, TransactionExecutor } from './sql';
import {
  START,
  WrongExpectedVersionError,
  type Checkpoint,
  type ExpectedVersion,
  type NewEvent,
  type RecordedEvent,
} from './types';

/**
 * Rows a transaction holds locked, as they stand in it, keyed `<table>:<id>`. Whoever locks a row
 * first records it (the batching writer, its workspaces), and an inline projection reads it here
 * instead of in another round trip, then records what it wrote.
 */
export type LockedRows = Map<string, unknown>;

/**
 * A projection's writes that go in the append's own statement (appendIn), as data-modifying CTEs
 * (`name AS (…)`, comma-separated). They may read `appended (positions, instants)`, one row: the
 * append's events' positions and instants, in order, from 1 (appendedEvent). `param(n)` names
 * their n-th parameter (the first of `params` is 1).
 */
export interface WritesWithAppend {
  ctes(param: (n: number) => string): string;
  params: unknown[];
}

/** The same writes as a statement of their own, after the append (a projection's `apply`). */
export function writesStatement(writes: WritesWithAppend): { text: string; params: unknown[] } {
  return { text: `WITH ${writes.ctes((n) => `$${n}`)} SELECT 1`, params: writes.params };
}

/**
 * How a projection's writes read an event from bigint columns of their parameters, in a CTE
 * `FROM unnest(…) AS u(…) ${join}`: recorded events' own position and instant (ms since the
 * epoch), or pending events' ordinals (in both columns), subscripts of `appended` as `alias`. A
 * pending ordinal out of its range gives NULLs (a NOT NULL column, e.g. a position, refuses them).
 */
export function appendedEvent(form: 'recorded' | 'pending', alias: string, columns: { position?: string; instant?: string }) {
  if (form === 'pending') {
    const ordinal = columns.position ?? columns.instant;
    return { join: `CROSS JOIN appended ${alias}`, position: `${alias}.positions[${ordinal}]`, instant: `${alias}.instants[${ordinal}]` };
  }
  return { join: '', position: columns.position ?? 'NULL', instant: columns.instant ? `(timestamptz 'epoch' + ${columns.instant} * interval '1 millisecond')` : 'NULL' };
}

/** A projection kept in the append transaction: if it throws, nothing is written. */
export interface InlineProjection {
  readonly name: string;
  /** The event types it writes for (others cost it nothing); absent: every type. */
  readonly types?: readonly string[];
  apply(tx: TransactionExecutor, events: RecordedEvent[], locked?: LockedRows): Promise<void>;
  /**
   * Its writes for `events` planned before they are appended, to go in the append's statement:
   * each event's `position` is then its ordinal in the append (from 1), and so is its
   * `recordedAt`'s time value (appendedEvent finds both); its `transactionId` is the
   * same for all. Null writes: nothing to write; `locked`: the rows as the writes leave them.
   * Undefined when these events need more (a read, their positions in JS): `apply` runs after
   * the append instead.
   */
  withAppend?(events: RecordedEvent[], locked: ReadonlyMap<string, unknown>): { writes: WritesWithAppend | null; locked: [string, unknown][] } | undefined;
}

export interface AppendOptions {
  /**
   * The transaction's last write: when every inline projection can go in the append's statement
   * (withAppend) and `expected` is 'any', COMMIT goes with it in one round trip; otherwise the
   * append runs as any other and the transaction commits when it ends.
   */
  last?: boolean;
}

/** Appends that commit together, with the inline projections of each. */
export interface StoreTransaction {
  readonly sql: TransactionExecutor;
  readonly locked: LockedRows;
  append(stream: string, events: NewEvent[], expected?: ExpectedVersion, options?: AppendOptions): Promise<RecordedEvent[]>;
}

export interface EventRow {
  position: number;
  stream: string;
  version: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown> | null;
  transaction_id: string;
  /** Milliseconds since the epoch, as a float8 (within a rounding error of the whole milliseconds the column keeps). */
  recorded_ms: number;
}

/**
 * An EventRow's columns, qualified by the events table (some queries join it to others); data and
 * metadata unless left out (they come as null). The transaction id goes to JS as text: an xid8 can
 * exceed 2^53. The instant goes as a number of milliseconds: parsing timestamp text cost the
 * subscriptions more than any other column.
 */
const eventColumns = (read: { data?: boolean; metadata?: boolean } = {}) =>
  `events.position, events.stream, events.version, events.type, ${read.data === false ? 'NULL::jsonb AS data' : 'events.data'}, ${read.metadata === false ? 'NULL::jsonb AS metadata' : 'events.metadata'}, events.transaction_id::text AS transaction_id, date_part('epoch', events.recorded_at) * 1000 AS recorded_ms`;

export const EVENT_COLUMNS = eventColumns();

/**
 * The global order, by the xid8 column. Qualified on purpose: a bare `transaction_id` in ORDER BY
 * binds to the text alias of EVENT_COLUMNS, which sorts '100000' before '99999' (a subscription
 * page then skips events across every power of ten) and cannot use the events_global_order index.
 */
const GLOBAL_ORDER = 'events.transaction_id, events.position';
const GLOBAL_ORDER_DESC = 'events.transaction_id DESC, events.position DESC';

export class EventStore {
  private readonly appendedListeners = new Set<(committed: RecordedEvent[]) => void>();

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
    const committed: RecordedEvent[] = [];
    const locked: LockedRows = new Map();
    const result = await this.sql.transaction((sqlTx) =>
      fn({
        sql: sqlTx,
        locked,
        append: async (stream, events, expected = 'any', options = {}) => {
          const withAppend = options.last && expected === 'any' ? this.writesWithAppend(stream, events, locked) : undefined;
          if (withAppend) {
            const recorded = await appendIn(sqlTx, stream, events, expected, { writes: withAppend.writes, commit: true });
            for (const [key, row] of withAppend.locked) locked.set(key, row);
            committed.push(...recorded);
            return recorded;
          }
          const recorded = await appendIn(sqlTx, stream, events, expected);
          for (const projection of this.inlineProjections) await projection.apply(sqlTx, recorded, locked);
          committed.push(...recorded);
          return recorded;
        },
      }),
    );
    if (committed.length > 0) for (const listener of this.appendedListeners) listener(committed);
    return result;
  }

  /**
   * Every inline projection's writes for `events` planned ahead (InlineProjection.withAppend), or
   * undefined when one of them needs to run after the append.
   */
  private writesWithAppend(stream: string, events: NewEvent[], locked: LockedRows) {
    const pending: RecordedEvent[] = events.map((e, i) => ({
      position: i + 1,
      stream,
      version: 0,
      type: e.type,
      data: e.data ?? null,
      metadata: e.metadata ?? {},
      transactionId: 'pending',
      recordedAt: new Date(i + 1),
    }));
    const writes: WritesWithAppend[] = [];
    const lockedAfter: [string, unknown][] = [];
    // Each plans from the rows as the previous ones left them, as apply() in turn would.
    const view = new Map(locked);
    for (const projection of this.inlineProjections) {
      if (projection.types && !events.some((e) => projection.types!.includes(e.type))) continue;
      const planned = projection.withAppend?.(pending, view);
      if (!planned) return undefined;
      if (planned.writes) writes.push(planned.writes);
      for (const [key, row] of planned.locked) view.set(key, row);
      lockedAfter.push(...planned.locked);
    }
    return { writes, locked: lockedAfter };
  }

  /**
   * Appends inside a transaction the caller already runs (a subscription's batch), inline
   * projections included: the events commit, or not, with the caller's other writes.
   */
  async appendWithin(tx: TransactionExecutor, stream: string, events: NewEvent[], expected: ExpectedVersion = 'any'): Promise<RecordedEvent[]> {
    const recorded = await appendIn(tx, stream, events, expected);
    for (const projection of this.inlineProjections) await projection.apply(tx, recorded, new Map());
    return recorded;
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

  /** Where the newest committed event sits in the global order; null for an empty log. */
  async lastEvent(): Promise<Checkpoint | null> {
    const { rows } = await this.sql.query<{ transaction_id: string; position: number }>(
      `SELECT transaction_id::text AS transaction_id, position FROM events ORDER BY ${GLOBAL_ORDER_DESC} LIMIT 1`,
    );
    return rows[0] ? { transactionId: rows[0].transaction_id, position: Number(rows[0].position) } : null;
  }

  /** In-process hint that something was appended, with what each transaction committed; subscriptions poll anyway. */
  onAppended(listener: (committed: RecordedEvent[]) => void): () => void {
    this.appendedListeners.add(listener);
    return () => this.appendedListeners.delete(listener);
  }
}

export async function readAllIn(executor: SqlExecutor, after: Checkpoint, limit: number): Promise<RecordedEvent[]> {
  const { rows } = await executor.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
      WHERE (events.transaction_id, events.position) > ($1::xid8, $2::bigint)
        AND events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY ${GLOBAL_ORDER}
      LIMIT $3`,
    [after.transactionId, after.position, limit],
  );
  return rows.map(toRecorded);
}

/** The page readAllIn would read, of which only the events of some types were read whole. */
export interface TypedPage {
  /** The page's events of the types asked for, in global order. */
  events: RecordedEvent[];
  /** How many events the page holds, of every type (0: nothing new). */
  scanned: number;
  /** The page's last event, whatever its type (undefined when the page is empty). */
  last: Checkpoint | undefined;
}

/** Which events of a page are read whole, and how much of each. */
export interface PageRead {
  types: readonly string[];
  /** A further SQL condition on the row `events` (none: every event of `types`). */
  where?: string;
  /** False: each event's data comes as null (default true). */
  data?: boolean;
  /** False: each event's metadata comes as {} (default true). */
  metadata?: boolean;
}

/**
 * The same page as readAllIn (the same window, order and limit), but only the events of
 * `read.types` (meeting `read.where`) are read whole; of the others only the page's last one's
 * place (the checkpoint moves past them). On PGlite every row read crosses into the service's own
 * thread, and on PostgreSQL each row read costs the service more CPU than its append did: a
 * subscription that acts on a few events no longer reads every cache hit's two.
 */
export async function readTypedPageIn(executor: SqlExecutor, after: Checkpoint, limit: number, read: PageRead): Promise<TypedPage> {
  const { rows } = await executor.query<Partial<EventRow> & { scanned: number; last_transaction_id: string; last_position: number }>(
    `WITH page AS MATERIALIZED (
       SELECT events.position AS p, events.transaction_id AS x, events.type AS t FROM events
        WHERE (events.transaction_id, events.position) > ($1::xid8, $2::bigint)
          AND events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY ${GLOBAL_ORDER}
        LIMIT $3),
     last AS (SELECT p, x FROM page ORDER BY x DESC, p DESC LIMIT 1)
     SELECT ${eventColumns(read)}, (SELECT count(*) FROM page)::int AS scanned,
            last.x::text AS last_transaction_id, last.p AS last_position
       FROM last LEFT JOIN (events JOIN page ON page.p = events.position AND page.t = ANY($4::text[])${read.where ? ` AND (${read.where})` : ''}) ON true
      ORDER BY ${GLOBAL_ORDER}`,
    [after.transactionId, after.position, limit, read.types],
  );
  const first = rows[0];
  if (!first) return { events: [], scanned: 0, last: undefined };
  return {
    // A page without any event of those types comes back as its one row of nulls.
    events: rows.filter((r) => r.position !== null && r.position !== undefined).map((r) => toRecorded(r as EventRow)),
    scanned: Number(first.scanned),
    last: { transactionId: first.last_transaction_id, position: Number(first.last_position) },
  };
}

/**
 * One statement: the stream's version moved under its row lock (so concurrent writers to one
 * stream serialise there and the expectation is checked against the committed version) and the
 * events inserted after it. Only what the database assigns comes back; the rest is what was sent.
 * No row back means the expectation failed.
 */
async function appendIn(
  tx: TransactionExecutor,
  stream: string,
  events: NewEvent[],
  expected: ExpectedVersion,
  options: { writes?: WritesWithAppend[]; commit?: boolean } = {},
): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const count = events.length;
  // One JSON document for the whole append: no per-element escaping of text arrays, and each
  // event's data and metadata read back as JSON (undefined fields dropped) like the log keeps them.
  const sent = JSON.stringify(events.map((e) => [e.type, e.data ?? null, e.metadata ?? {}]));
  const params: unknown[] = [stream, count, sent];
  if (typeof expected === 'number' && expected > 0) params.push(expected);
  // The projections' writes planned ahead read the positions from `appended`, by ordinal.
  let projected = '';
  if (options.writes && options.writes.length > 0) {
    projected =
      ', appended AS (SELECT array_agg(position ORDER BY version) AS positions, array_agg(recorded_at ORDER BY version) AS instants FROM inserted)';
    for (const w of options.writes) {
      const offset = params.length;
      projected += `, ${w.ctes((n) => `$${offset + n}`)}`;
      params.push(...w.params);
    }
  }
  // One row back, not one per event: the events of a transaction share its id, and the positions
  // and recorded instants (in ms, as the column keeps them) come as JSON arrays in version order.
  const text = `WITH bumped AS (${bumpStreamVersion(expected)}), inserted AS (
       INSERT INTO events (stream, version, type, data, metadata)
       SELECT $1::text, bumped.version - $2::bigint + x.ord, x.event->>0, x.event->1, x.event->2
         FROM bumped, jsonb_array_elements($3::jsonb) WITH ORDINALITY AS x(event, ord)
       RETURNING position, version, recorded_at)${projected}
     SELECT json_agg(position ORDER BY version) AS positions,
            json_agg((extract(epoch FROM recorded_at) * 1000)::bigint ORDER BY version) AS recorded_ms,
            min(version) AS first_version, pg_current_xact_id()::text AS transaction_id
       FROM inserted`;
  type Appended = { positions: number[] | null; recorded_ms: number[]; first_version: number; transaction_id: string };
  const reply = options.commit ? tx.queryThenCommit<Appended>(text, params) : tx.query<Appended>(text, params);
  // Parsed while the statement is in flight: the thread would otherwise wait out the round trip idle.
  const readBack = JSON.parse(sent) as [string, unknown, Record<string, unknown>][];
  const { rows } = await reply;
  const appended = rows[0];
  if (!appended?.positions) {
    const { rows: current } = await tx.query<{ version: number }>('SELECT version FROM streams WHERE stream = $1', [stream]);
    throw new WrongExpectedVersionError(stream, expected, current[0]?.version ?? 0);
  }
  const firstVersion = Number(appended.first_version);
  // The i-th position (by version) is the i-th event sent.
  return appended.positions.map((position, i) => ({
    position: Number(position),
    stream,
    version: firstVersion + i,
    type: events[i]!.type,
    data: readBack[i]![1],
    metadata: readBack[i]![2],
    transactionId: appended.transaction_id,
    recordedAt: new Date(appended.recorded_ms[i]!),
  }));
}

/**
 * The stream-version statement of an append (parameters: $1 stream, $2 count, $4 expected
 * version when it is a number > 0). Returns the new version; no row on a conflict.
 */
function bumpStreamVersion(expected: ExpectedVersion): string {
  if (expected === 'any') {
    return `INSERT INTO streams (stream, version) VALUES ($1::text, $2::bigint)
            ON CONFLICT (stream) DO UPDATE SET version = streams.version + EXCLUDED.version
            RETURNING version`;
  }
  if (expected === 'no_stream' || expected === 0) {
    return 'INSERT INTO streams (stream, version) VALUES ($1::text, $2::bigint) ON CONFLICT (stream) DO NOTHING RETURNING version';
  }
  if (!Number.isInteger(expected) || expected < 0) throw new RangeError(`bad expected version ${expected}`);
  return 'UPDATE streams SET version = version + $2::bigint WHERE stream = $1::text AND version = $4::bigint RETURNING version';
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
    recordedAt: new Date(Math.round(row.recorded_ms)),
  };
}
