/**
 * The workspace rows a write transaction holds locked: the batching writer reads them to decide,
 * and the ledger projection (services/projections/ledger-plan.ts) writes them in the same
 * transaction without reading them again.
 */

export interface WorkspaceRow {
  id: string;
  name: string;
  balance: number;
  max_concurrency: number;
  created_at: Date;
  /** The hash of its last ledger event, the one the writer links the next to (services/ledger/ledger-chain.ts). */
  last_ledger_hash: string | null;
}

/** Where a transaction's locked workspace row is kept (LockedRows of the event store). */
export const lockedWorkspaceKey = (id: string) => `workspaces:${id}`;

/** Locks and reads workspace rows ($1: their ids), in id order: the order every writer locks them in. */
export const SELECT_WORKSPACES_FOR_UPDATE =
  'SELECT id, name, balance, max_concurrency, created_at, last_ledger_hash FROM workspaces WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE';

/** What decides for a workspace, of its row, as one text: balance, limit, last ledger hash (committedRowKey in SQL). */
const ROW_KEY_SQL = `balance || ' ' || max_concurrency || ' ' || coalesce(last_ledger_hash, '')`;

function committedRowKey(row: WorkspaceRow): string {
  return `${row.balance} ${row.max_concurrency} ${row.last_ledger_hash ?? ''}`;
}

/**
 * Locks workspace rows in id order, failing with LW001 (migration 019) unless each is as
 * committedRowKey says. One row (most batches) by a scalar parameter: PostgreSQL then settles on
 * a generic plan, where the arrays of the several-rows form get planned again at every call.
 */
export const LOCK_WORKSPACES_AS_COMMITTED = {
  one: `SELECT CASE WHEN (SELECT ${ROW_KEY_SQL} FROM workspaces WHERE id = $1::text FOR UPDATE) IS NOT DISTINCT FROM $2::text THEN 0 ELSE workspaces_moved() END`,
  several: `SELECT CASE WHEN coalesce(array_agg(locked.row_key ORDER BY locked.id), '{}') = $2::text[] THEN 0 ELSE workspaces_moved() END
  FROM (SELECT id, ${ROW_KEY_SQL} AS row_key FROM workspaces WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE) AS locked`,
};

/** The statement and parameters that lock `rows` (distinct, in id order) as LOCK_WORKSPACES_AS_COMMITTED checks them. */
export function lockAsCommitted(rows: WorkspaceRow[]): { text: string; params: unknown[] } {
  if (rows.length === 1) return { text: LOCK_WORKSPACES_AS_COMMITTED.one, params: [rows[0]!.id, committedRowKey(rows[0]!)] };
  return { text: LOCK_WORKSPACES_AS_COMMITTED.several, params: [rows.map((r) => r.id), rows.map(committedRowKey)] };
}

/** A row of SELECT_WORKSPACES_FOR_UPDATE as the plan takes it. */
export function workspaceRowOf(r: WorkspaceRow): WorkspaceRow {
  return { ...r, balance: Number(r.balance), max_concurrency: Number(r.max_concurrency), created_at: new Date(r.created_at) };
}
