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

/** A row of SELECT_WORKSPACES_FOR_UPDATE as the plan takes it. */
export function workspaceRowOf(r: WorkspaceRow): WorkspaceRow {
  return { ...r, balance: Number(r.balance), max_concurrency: Number(r.max_concurrency), created_at: new Date(r.created_at) };
}
