import type { EventData, EventType } from '../../contracts/events';
import type { EventStore } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import { START, type Checkpoint } from '../eventstore/types';
import { ChainVerifier, isLedgerEvent, type ChainBreak, type StoredLedgerEvent } from '../ledger/ledger-chain';
import { catchUpToNow } from '../eventstore/subscription';
import { usageProjection } from '../projections/usage';

/**
 * The audit: a second, independent reading of the log. Pure evolve functions (sharing no code
 * with the SQL projections) replay every event into memory, and the result is compared with every
 * projection table, row by row and field by field.
 *
 * Independent on purpose: it does NOT use the shared workspace model (services/ledger/
 * workspace-state.ts) that the batching writer, the ledger projection and the relay's balance
 * consumer share. A bug there would be written into every table alike and agree with itself;
 * a second implementation is what catches it.
 */

export interface AuditMismatch {
  /** The projection table. */
  projection: string;
  /** The row: workspace id, key id, ledger position, request id, usage row, entity or alias. */
  key: string;
  /** The column; `row` when the whole row is missing (actual null) or extra (expected null). */
  field: string;
  /** What the replay says. */
  expected: unknown;
  /** What the table holds. */
  actual: unknown;
}

export interface AuditReport {
  ok: boolean;
  events: number;
  workspaces: number;
  mismatches: AuditMismatch[];
  /** Ledger chains checked (one per workspace) and the first broken link of each broken one. */
  chains: { checked: number; broken: ChainBreak[] };
}

/** Where an audit stands: what an operator watching a long one is shown. */
export interface AuditProgress {
  /**
   * `catching_up`: the usage subscription is brought to the log's end; `replaying`: the log is
   * read and replayed; `comparing`: the projection tables are read and compared with the replay.
   */
  phase: 'catching_up' | 'replaying' | 'comparing';
  /** Events read and replayed so far. */
  events: number;
  /** The log position of the last event read (0 before the first). */
  position: number;
  /** The last position of the log in the audit's snapshot: what it reads up to; null before the snapshot. */
  head: number | null;
}

/** Events per read of the log: large pages, few round trips. */
const AUDIT_PAGE = 5000;

/** A damaged table could differ in every row; the report lists the first ones. */
export const MAX_REPORTED_MISMATCHES = 1000;

// ---------- the replayed model: pure evolve functions ----------

export interface ReplayedWorkspace {
  name: string;
  balance: number;
  max_concurrency: number;
}
export interface ReplayedKey {
  workspace_id: string;
  rate_limit_per_minute: number;
  mode: string;
  revoked: boolean;
}
export interface ReplayedLedgerEntry {
  workspace_id: string;
  type: string;
  credits: number;
  balance_after: number;
}
export interface ReplayedCharge {
  credits: number;
  refunded_credits: number | null;
  /** Its LookupCompleted is in the log. */
  settled: boolean;
}
export interface ReplayedUsage {
  calls: number;
  credits_charged: number;
  credits_refunded: number;
  errors: number;
}
export interface ReplayedAlias {
  entity: string | null;
  code: string | null;
}

/**
 * An event as the audit reads it: what it replays, the chain links of its metadata as stored
 * (null when absent) and when it was recorded (ms since the epoch, as a Date would hold it).
 */
export interface AuditedEvent extends StoredLedgerEvent {
  recordedAtMs: number;
  /** The transaction that appended a LookupCharged or LookupCompleted (xid8 as text); absent for others. */
  transactionId?: string | null;
}

/** The event's data, typed by the contract (the type argument names which event it is). */
const dataOf = <T extends EventType>(e: AuditedEvent, _type: T) => e.data as EventData<T>;

/** The workspace an event concerns, if it is a workspace event. */
export function workspaceOf(e: AuditedEvent): string | undefined {
  switch (e.type) {
    case 'WorkspaceCreated':
    case 'CreditsGranted':
    case 'LimitsChanged':
    case 'LookupCharged':
    case 'LookupRefunded':
      return (e.data as { workspace_id: string }).workspace_id;
    default:
      return undefined;
  }
}

/** A workspace after one of its events. */
export function evolveWorkspace(ws: ReplayedWorkspace | undefined, e: AuditedEvent): ReplayedWorkspace | undefined {
  switch (e.type) {
    case 'WorkspaceCreated': {
      const d = dataOf(e, 'WorkspaceCreated');
      return { name: d.name, balance: 0, max_concurrency: d.max_concurrency };
    }
    case 'CreditsGranted':
      return ws && { ...ws, balance: ws.balance + dataOf(e, 'CreditsGranted').amount };
    case 'LimitsChanged':
      return ws && { ...ws, max_concurrency: dataOf(e, 'LimitsChanged').max_concurrency };
    case 'LookupCharged':
      return ws && { ...ws, balance: ws.balance - dataOf(e, 'LookupCharged').credits };
    case 'LookupRefunded':
      return ws && { ...ws, balance: ws.balance + dataOf(e, 'LookupRefunded').credits };
    default:
      return ws;
  }
}

/** The ledger line a money event writes, given the workspace after it; null for other events. */
export function ledgerEntryOf(e: AuditedEvent, after: ReplayedWorkspace | undefined): ReplayedLedgerEntry | null {
  const signed =
    e.type === 'CreditsGranted' ? dataOf(e, 'CreditsGranted').amount
    : e.type === 'LookupCharged' ? 0 - dataOf(e, 'LookupCharged').credits // not -x: a free charge is 0, not -0
    : e.type === 'LookupRefunded' ? dataOf(e, 'LookupRefunded').credits
    : null;
  if (signed === null) return null;
  return { workspace_id: workspaceOf(e)!, type: e.type, credits: signed, balance_after: after ? after.balance : Number.NaN };
}

export function evolveKey(key: ReplayedKey | undefined, e: AuditedEvent): ReplayedKey | undefined {
  if (e.type === 'ApiKeyCreated') {
    const d = dataOf(e, 'ApiKeyCreated');
    return { workspace_id: d.workspace_id, rate_limit_per_minute: d.rate_limit_per_minute, mode: d.mode ?? 'live', revoked: false };
  }
  if (e.type === 'ApiKeyRevoked') return key && { ...key, revoked: true };
  return key;
}

export function evolveCharge(charge: ReplayedCharge | undefined, e: AuditedEvent): ReplayedCharge | undefined {
  if (e.type === 'LookupCharged') return { credits: dataOf(e, 'LookupCharged').credits, refunded_credits: null, settled: false };
  if (e.type === 'LookupRefunded') return charge && { ...charge, refunded_credits: dataOf(e, 'LookupRefunded').credits };
  if (e.type === 'LookupCompleted') return charge && { ...charge, settled: true };
  return charge;
}

/** The usage row (workspace|day|key|operation) an event counts in, and what it adds. */
export function usageContribution(e: AuditedEvent): { key: string; add: ReplayedUsage } | null {
  const zero = { calls: 0, credits_charged: 0, credits_refunded: 0, errors: 0 };
  let d: { workspace_id: string; key_id: string; operation: string };
  let add: ReplayedUsage;
  if (e.type === 'LookupCompleted') {
    const c = dataOf(e, 'LookupCompleted');
    d = c;
    add = { ...zero, calls: 1, errors: c.outcome === 'error' ? 1 : 0 };
  } else if (e.type === 'LookupCharged') {
    const c = dataOf(e, 'LookupCharged');
    d = c;
    add = { ...zero, credits_charged: c.credits };
  } else if (e.type === 'LookupRefunded') {
    const c = dataOf(e, 'LookupRefunded');
    d = c;
    add = { ...zero, credits_refunded: c.credits };
  } else return null;
  return { key: usageKey(d.workspace_id, utcDay(e.recordedAtMs), d.key_id, d.operation), add };
}

const DAY_MS = 86_400_000;
const dayNames = new Map<number, string>();
/** `YYYY-MM-DD` of an instant, UTC; memoised per day (a log holds few days and many events). */
function utcDay(atMs: number): string {
  const day = Math.floor(atMs / DAY_MS);
  let name = dayNames.get(day);
  if (name === undefined) dayNames.set(day, (name = new Date(day * DAY_MS).toISOString().slice(0, 10)));
  return name;
}

export const usageKey = (workspaceId: string, day: string, keyId: string, operation: string) =>
  `${workspaceId}|${day}|${keyId}|${operation}`;

export function addUsage(row: ReplayedUsage | undefined, add: ReplayedUsage): ReplayedUsage {
  const base = row ?? { calls: 0, credits_charged: 0, credits_refunded: 0, errors: 0 };
  return {
    calls: base.calls + add.calls,
    credits_charged: base.credits_charged + add.credits_charged,
    credits_refunded: base.credits_refunded + add.credits_refunded,
    errors: base.errors + add.errors,
  };
}

/** The aliases an event points somewhere: every alias of a fetched profile, or one not-found. */
export function aliasesOf(e: AuditedEvent): Array<[string, ReplayedAlias]> {
  if (e.type === 'ProfileFetched') {
    const d = dataOf(e, 'ProfileFetched');
    return d.aliases.map((alias) => [alias, { entity: d.entity, code: null }]);
  }
  if (e.type === 'ProfileNotFound') {
    const d = dataOf(e, 'ProfileNotFound');
    return [[d.alias, { entity: null, code: d.code }]];
  }
  return [];
}

/** Everything the log says the projections should hold. */
export class ReplayState {
  readonly workspaces = new Map<string, ReplayedWorkspace>();
  readonly keys = new Map<string, ReplayedKey>();
  readonly ledger = new Map<number, ReplayedLedgerEntry>();
  readonly charges = new Map<string, ReplayedCharge>();
  /** The transaction of each charge's LookupCharged, while its LookupCompleted is not replayed yet. */
  private readonly chargedIn = new Map<string, string>();
  /**
   * Charges completed in the transaction that made them (every cache hit): `charges` holds no row
   * for them (services/projections/ledger-plan.ts, chargeRowsToStore).
   */
  readonly chargesWithoutRow = new Set<string>();
  readonly usage = new Map<string, ReplayedUsage>();
  readonly keyLastUsed = new Map<string, number>();
  readonly entities = new Map<string, string>();
  readonly aliases = new Map<string, ReplayedAlias>();
  /** Per workspace: its chain's check, and the `hash` its last ledger event carries. */
  readonly chains = new Map<string, ChainVerifier>();
  readonly lastLedgerHash = new Map<string, string | null>();

  /**
   * Events must come in position order (each stream's own order). `countUsage` is false for
   * events the usage subscription has not reached yet: its tables may lag the log.
   */
  apply(e: AuditedEvent, countUsage: boolean): void {
    const workspaceId = workspaceOf(e);
    if (workspaceId !== undefined) {
      const after = evolveWorkspace(this.workspaces.get(workspaceId), e);
      if (after) this.workspaces.set(workspaceId, after);
      if (after && isLedgerEvent(e.type)) {
        let chain = this.chains.get(workspaceId);
        if (!chain) this.chains.set(workspaceId, (chain = new ChainVerifier(workspaceId)));
        chain.check(e);
        this.lastLedgerHash.set(workspaceId, typeof e.hash === 'string' ? e.hash : null);
      }
      const entry = ledgerEntryOf(e, after);
      if (entry) this.ledger.set(e.position, entry);
    }
    if (e.type === 'ApiKeyCreated' || e.type === 'ApiKeyRevoked') {
      const keyId = (e.data as { key_id: string }).key_id;
      const key = evolveKey(this.keys.get(keyId), e);
      if (key) this.keys.set(keyId, key);
    }
    if (e.type === 'LookupCharged' || e.type === 'LookupRefunded' || e.type === 'LookupCompleted') {
      const requestId = (e.data as { request_id: string }).request_id;
      const before = this.charges.get(requestId);
      const charge = evolveCharge(before, e);
      if (charge) this.charges.set(requestId, charge);
      if (e.type === 'LookupCharged' && typeof e.transactionId === 'string') this.chargedIn.set(requestId, e.transactionId);
      if (e.type === 'LookupCompleted' && before && !before.settled) {
        if (e.transactionId != null && this.chargedIn.get(requestId) === e.transactionId) this.chargesWithoutRow.add(requestId);
        this.chargedIn.delete(requestId);
      }
    }
    if (countUsage) {
      const usage = usageContribution(e);
      if (usage) {
        const row = this.usage.get(usage.key);
        // The state's own rows: added to in place (a new object per event is what the GC pays for).
        if (row) {
          row.calls += usage.add.calls;
          row.credits_charged += usage.add.credits_charged;
          row.credits_refunded += usage.add.credits_refunded;
          row.errors += usage.add.errors;
        } else this.usage.set(usage.key, addUsage(undefined, usage.add));
      }
      if (e.type === 'LookupCompleted') {
        const keyId = dataOf(e, 'LookupCompleted').key_id;
        this.keyLastUsed.set(keyId, Math.max(this.keyLastUsed.get(keyId) ?? 0, e.recordedAtMs));
      }
    }
    if (e.type === 'ProfileFetched') {
      const d = dataOf(e, 'ProfileFetched');
      this.entities.set(d.entity, d.content_hash);
    }
    for (const [alias, target] of aliasesOf(e)) this.aliases.set(alias, target);
  }
}

// ---------- comparison ----------

/** A compared column: its value in the replay and, if it needs one, how a stored value is read for comparing. */
export interface ComparedField<K, V> {
  column: string;
  replayed(value: V, key: K): unknown;
  stored?(cell: unknown): unknown;
}

/**
 * One projection table against the replay: `columns` are read from `table` (the key's first), each
 * row is found in `expected` by `keyOf`, and each of `fields` is compared with the replayed value.
 */
export interface TableCheck<K, V> {
  table: string;
  /** Plain column names, or `expression AS name`. */
  columns: readonly string[];
  keyOf(row: readonly unknown[]): K;
  /** The replay's rows by key (never an undefined value). */
  expected: ReadonlyMap<K, V>;
  fields: readonly ComparedField<K, V>[];
  /** A row no event accounts for, as a mismatch shows it; by default its columns by name. */
  extraRow?(row: readonly unknown[]): Record<string, unknown>;
}

const columnName = (column: string) => column.split(' AS ').at(-1)!;

/**
 * Missing rows, extra rows and every differing field, in key order (each row's fields in their
 * order). `rows` are the table's, as arrays of `check.columns`. Nothing is built for a row that
 * agrees, and only what was found is sorted.
 */
export function compareTable<K, V>(check: TableCheck<K, V>, rows: readonly (readonly unknown[])[]): AuditMismatch[] {
  const { table: projection, expected, fields } = check;
  const names = check.columns.map(columnName);
  const at = fields.map((field) => {
    const index = names.indexOf(field.column);
    if (index < 0) throw new Error(`audit of ${projection}: ${field.column} is not among the columns read`);
    return index;
  });
  const replayedRow = (value: V, key: K) => Object.fromEntries(fields.map((field) => [field.column, field.replayed(value, key)]));
  const extraRow = check.extraRow ?? ((row: readonly unknown[]) => Object.fromEntries(names.map((name, i) => [name, row[i]])));
  const out: AuditMismatch[] = [];
  let found = 0;
  for (const row of rows) {
    const key = check.keyOf(row);
    const value = expected.get(key);
    if (value === undefined) {
      out.push({ projection, key: String(key), field: 'row', expected: null, actual: extraRow(row) });
      continue;
    }
    found++;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      const want = field.replayed(value, key);
      const have = field.stored ? field.stored(row[at[i]!]) : row[at[i]!];
      if (!Object.is(want, have)) out.push({ projection, key: String(key), field: field.column, expected: want, actual: have });
    }
  }
  // Keys are the tables' primary keys: fewer found than replayed means some are missing.
  if (found < expected.size) {
    const present = new Set(rows.map((row) => check.keyOf(row)));
    for (const [key, value] of expected) {
      if (!present.has(key)) out.push({ projection, key: String(key), field: 'row', expected: replayedRow(value, key), actual: null });
    }
  }
  return out.sort(byKey);
}

/** Code-unit order of the keys, as Array#sort orders strings. */
const byKey = (a: AuditMismatch, b: AuditMismatch) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A table check with its types erased, to keep checks of different tables in one list. */
interface TableAudit {
  query: string;
  compare(rows: readonly (readonly unknown[])[]): AuditMismatch[];
}

const tableAudit = <K, V>(check: TableCheck<K, V>): TableAudit => ({
  query: `SELECT ${check.columns.join(', ')} FROM ${check.table}`,
  compare: (rows) => compareTable(check, rows),
});

/** The replayed charges that have a row of `charges`: those not settled in their own transaction. */
function chargesWithRows(state: ReplayState): Map<string, ReplayedCharge> {
  if (state.chargesWithoutRow.size === 0) return state.charges;
  const withRows = new Map<string, ReplayedCharge>();
  for (const [requestId, charge] of state.charges) if (!state.chargesWithoutRow.has(requestId)) withRows.set(requestId, charge);
  return withRows;
}

/** Every projection table the audit checks, against what `state` replayed. */
function tableAudits(state: ReplayState): TableAudit[] {
  const text = (cell: unknown) => String(cell);
  const isoInstant = (at: number | string | Date) => new Date(at).toISOString();
  return [
    tableAudit({
      table: 'workspaces',
      columns: ['id', 'name', 'balance', 'max_concurrency', 'last_ledger_hash'],
      keyOf: (row) => text(row[0]),
      expected: state.workspaces,
      fields: [
        { column: 'name', replayed: (w) => w.name },
        { column: 'balance', replayed: (w) => w.balance },
        { column: 'max_concurrency', replayed: (w) => w.max_concurrency },
        { column: 'last_ledger_hash', replayed: (_w, id) => state.lastLedgerHash.get(id) ?? null },
      ],
    }),
    tableAudit({
      table: 'api_keys',
      columns: ['id', 'workspace_id', 'rate_limit_per_minute', 'mode', 'revoked_at IS NOT NULL AS revoked'],
      keyOf: (row) => text(row[0]),
      expected: state.keys,
      fields: [
        { column: 'workspace_id', replayed: (k) => k.workspace_id },
        { column: 'rate_limit_per_minute', replayed: (k) => k.rate_limit_per_minute },
        { column: 'mode', replayed: (k) => k.mode },
        { column: 'revoked', replayed: (k) => k.revoked },
      ],
    }),
    tableAudit({
      table: 'ledger_entries',
      columns: ['position', 'workspace_id', 'type', 'credits', 'balance_after'],
      keyOf: (row) => row[0] as number,
      expected: state.ledger,
      fields: [
        { column: 'workspace_id', replayed: (l) => l.workspace_id },
        { column: 'type', replayed: (l) => l.type },
        { column: 'credits', replayed: (l) => l.credits },
        { column: 'balance_after', replayed: (l) => l.balance_after },
      ],
    }),
    tableAudit({
      table: 'charges',
      columns: ['request_id', 'credits', 'refunded_credits', 'settled'],
      keyOf: (row) => text(row[0]),
      expected: chargesWithRows(state),
      fields: [
        { column: 'credits', replayed: (c) => c.credits },
        { column: 'refunded_credits', replayed: (c) => c.refunded_credits },
        { column: 'settled', replayed: (c) => c.settled },
      ],
    }),
    tableAudit({
      table: 'usage_daily',
      columns: ['workspace_id', 'day::text AS day', 'key_id', 'operation', 'calls', 'credits_charged', 'credits_refunded', 'errors'],
      keyOf: (row) => usageKey(text(row[0]), text(row[1]), text(row[2]), text(row[3])),
      expected: state.usage,
      fields: [
        { column: 'calls', replayed: (u) => u.calls },
        { column: 'credits_charged', replayed: (u) => u.credits_charged },
        { column: 'credits_refunded', replayed: (u) => u.credits_refunded },
        { column: 'errors', replayed: (u) => u.errors },
      ],
    }),
    tableAudit({
      table: 'key_last_used',
      columns: ['key_id', 'last_used_at'],
      keyOf: (row) => text(row[0]),
      expected: state.keyLastUsed,
      // Compared as ISO text: what a mismatch shows of both sides.
      fields: [{ column: 'last_used_at', replayed: (ms) => isoInstant(ms), stored: (at) => isoInstant(at as string | Date) }],
      extraRow: (row) => ({ last_used_at: isoInstant(row[1] as string | Date) }),
    }),
    tableAudit({
      table: 'cache_entities',
      columns: ['entity', 'content_hash'],
      keyOf: (row) => text(row[0]),
      expected: state.entities,
      fields: [{ column: 'content_hash', replayed: (hash) => hash }],
    }),
    tableAudit({
      table: 'cache_aliases',
      columns: ['alias', 'entity', 'code'],
      keyOf: (row) => text(row[0]),
      expected: state.aliases,
      fields: [
        { column: 'entity', replayed: (a) => a.entity },
        { column: 'code', replayed: (a) => a.code },
      ],
    }),
  ];
}

/** One event of the log as `readAuditPage` selects it. */
type AuditRow = [
  position: number,
  stream: string,
  version: number,
  type: string,
  data: unknown,
  prevHash: unknown,
  hash: unknown,
  countedByUsage: boolean,
  recordedAtMs: number,
  transactionId: string | null,
];

/**
 * Every event after `afterPosition`, in position order (see readLogPage), with only what the audit
 * checks: the metadata's chain links, the instant in whole ms (no Date per event; truncated first,
 * so the product is exact whether epoch comes back as numeric or, before PostgreSQL 14, as a
 * double), and whether the usage subscription has processed the event, i.e. it is at or before
 * `usageCheckpoint` in the global order (the row comparison the subscription's own reads use).
 */
function readAuditPage(tx: SqlExecutor, afterPosition: number, usageCheckpoint: Checkpoint): Promise<AuditRow[]> {
  return tx.queryArrays<AuditRow>(
    `SELECT position, stream, version, type, data, metadata->'prev_hash', metadata->'hash',
            (transaction_id, position) <= ($2::xid8, $3::bigint),
            (extract(epoch FROM date_trunc('milliseconds', recorded_at)) * 1000)::bigint,
            CASE WHEN type IN ('LookupCharged', 'LookupCompleted') THEN transaction_id::text END
       FROM events WHERE position > $1 ORDER BY position LIMIT $4`,
    [afterPosition, usageCheckpoint.transactionId, usageCheckpoint.position, AUDIT_PAGE],
  );
}

/**
 * A read asked for before it is needed. Its failure reaches the audit when it is awaited; if an
 * earlier failure ends the audit first, it must not also surface as an unhandled rejection.
 */
function ahead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => undefined);
  return read;
}

/**
 * Replays the whole log and compares every projection table with the replay. The usage
 * subscription is caught up first; the log and the tables are then read in one snapshot
 * (REPEATABLE READ), so writes committing meanwhile cannot show up as mismatches, and the usage
 * tables are compared with exactly the events their checkpoint covers.
 * On the embedded database (one connection) other work waits while the audit runs.
 */
export async function audit(store: EventStore, options: { onProgress?: (progress: AuditProgress) => void; signal?: AbortSignal } = {}): Promise<AuditReport> {
  const { onProgress, signal } = options;
  onProgress?.({ phase: 'catching_up', events: 0, position: 0, head: null });
  await catchUpToNow(store, usageProjection);
  signal?.throwIfAborted();
  return store.sql.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const { rows: cp } = await tx.query<{ transaction_id: string; position: number }>(
      'SELECT transaction_id::text AS transaction_id, position FROM subscription_checkpoints WHERE name = $1',
      [usageProjection.name],
    );
    const usageCheckpoint: Checkpoint = cp[0] ? { transactionId: cp[0].transaction_id, position: Number(cp[0].position) } : START;
    const { rows: last } = await tx.query<{ head: string }>('SELECT coalesce(max(position), 0)::text AS head FROM events');
    const head = Number(last[0]!.head);
    onProgress?.({ phase: 'replaying', events: 0, position: 0, head });

    const state = new ReplayState();
    let events = 0;
    let position = 0;
    // The next page is asked for before this one is replayed: the database reads while we compute.
    let next = ahead(readAuditPage(tx, 0, usageCheckpoint));
    for (;;) {
      const page = await next;
      if (page.length === 0) break;
      position = page[page.length - 1]![0];
      next = ahead(readAuditPage(tx, position, usageCheckpoint));
      for (const [at, stream, version, type, data, prevHash, hash, countedByUsage, recordedAtMs, transactionId] of page) {
        state.apply({ position: at, stream, version, type, data, prevHash, hash, recordedAtMs, transactionId }, countedByUsage);
      }
      events += page.length;
      onProgress?.({ phase: 'replaying', events, position, head });
      if (signal?.aborted) {
        // The page read ahead must settle before the transaction ends.
        await next.catch(() => undefined);
        signal.throwIfAborted();
      }
    }
    onProgress?.({ phase: 'comparing', events, position, head });

    const found: AuditMismatch[][] = [];
    const audits = tableAudits(state);
    // As with the log: the next table is asked for before this one is compared.
    let nextRows = ahead(tx.queryArrays(audits[0]!.query));
    for (let i = 0; i < audits.length; i++) {
      const rows = await nextRows;
      if (i + 1 < audits.length) nextRows = ahead(tx.queryArrays(audits[i + 1]!.query));
      found.push(audits[i]!.compare(rows));
    }
    const mismatches = found.flat();

    const broken = [...state.chains.values()].flatMap((c) => (c.broken ? [c.broken] : [])).sort((a, b) => a.position - b.position);
    return {
      ok: mismatches.length === 0 && broken.length === 0,
      events,
      workspaces: state.workspaces.size,
      mismatches: mismatches.slice(0, MAX_REPORTED_MISMATCHES),
      chains: { checked: state.chains.size, broken: broken.slice(0, MAX_REPORTED_MISMATCHES) },
    };
  });
}
