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

/**
 * Locks workspace rows ($1: their ids, distinct) in id order, failing with LW001 (migration 019)
 * unless they are as $2 says, each in id order as committedRowKey writes it. Planned afresh at
 * every call (PostgreSQL keeps custom plans for it), hence one small scan and no join.
 */
export const LOCK_WORKSPACES_AS_COMMITTED = `SELECT CASE WHEN coalesce(array_agg(locked.row_key ORDER BY locked.id), '{}') = $2::text[] THEN 0 ELSE workspaces_moved() END
  FROM (SELECT id, balance || ' ' || max_concurrency || ' ' || coalesce(last_ledger_hash, '') AS row_key
          FROM workspaces WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE) AS locked`;

/** What decides for a workspace, of its row, as LOCK_WORKSPACES_AS_COMMITTED writes it: balance, limit, last ledger hash. */
export function committedRowKey(row: WorkspaceRow): string {
  return `${row.balance} ${row.max_concurrency} ${row.last_ledger_hash ?? ''}`;
}

/** A row of SELECT_WORKSPACES_FOR_UPDATE as the plan takes it. */
export function workspaceRowOf(r: WorkspaceRow): WorkspaceRow {
  return { ...r, balance: Number(r.balance), max_concurrency: Number(r.max_concurrency), created_at: new Date(r.created_at) };
}
