import type { EventData, EventType } from '../../contracts/events';
import type { RecordedEvent } from '../eventstore/types';
import type { WorkspaceRow } from '../ledger/locked-workspace';
import { balanceChange, evolveWorkspace, workspaceChangedBy } from '../ledger/workspace-state';

/**
 * The ledger projection's rule, without I/O: given the rows of the workspaces a run of events
 * touches, walk the events in order and say which rows to write. The SQL side then writes them
 * with a few set statements, whatever the number of events. Balances and limits move by the one
 * workspace state model (evolveWorkspace), the one the batching writer decides with.
 */

/** Thrown when a charge is not covered by the balance: nothing of the run may commit. */
export class InsufficientCreditsError extends Error {
  constructor(readonly workspaceId: string) {
    super(`insufficient credits in ${workspaceId}`);
  }
}

export interface LedgerEntryRow {
  position: number;
  workspace_id: string;
  type: string;
  request_id: string | null;
  key_id: string | null;
  credits: number;
  balance_after: number;
  recorded_at: Date;
}

export interface ChargeRow {
  request_id: string;
  workspace_id: string;
  key_id: string;
  operation: string;
  credits: number;
  charged_at: Date;
  refunded_credits: number | null;
  settled: boolean;
}

export interface LedgerWrites {
  /** Final state of every workspace the events created or changed (insert or update). */
  workspaces: WorkspaceRow[];
  ledgerEntries: LedgerEntryRow[];
  /** Charges made by these events, already carrying a refund or settlement that followed them here. */
  newCharges: ChargeRow[];
  /**
   * Those of `newCharges` whose LookupCompleted is in the same transaction as their LookupCharged
   * (every cache hit): no query needs a row for them (see chargeRowsToStore).
   */
  settledInOwnTransaction: ReadonlySet<string>;
  /** Refunds of charges made earlier (not in these events), by request id. */
  refunds: { request_id: string; credits: number }[];
  /** Earlier charges settled by these events. */
  settled: string[];
}

/** The workspaces whose current rows `planLedgerWrites` needs. */
export function workspacesTouched(events: readonly RecordedEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    const id = workspaceChangedBy(e);
    if (id !== undefined) ids.add(id);
  }
  return [...ids].sort();
}

/** The event's data, typed by the contract (the type argument names which event it is). */
const dataOf = <T extends EventType>(e: RecordedEvent, _type: T) => e.data as EventData<T>;

/**
 * `current` holds the rows as they are before the events (absent: no such workspace yet).
 * Throws InsufficientCreditsError if a charge exceeds the balance, and an Error for a money event
 * on a workspace that does not exist or a workspace created twice.
 */
export function planLedgerWrites(current: ReadonlyMap<string, WorkspaceRow>, events: readonly RecordedEvent[]): LedgerWrites {
  const workspaces = new Map<string, WorkspaceRow>();
  const changed = new Set<string>();
  const ledgerEntries: LedgerEntryRow[] = [];
  const newCharges = new Map<string, ChargeRow>();
  /** The transaction of each charge among `newCharges`. */
  const chargedIn = new Map<string, string>();
  const settledInOwnTransaction = new Set<string>();
  const refunds = new Map<string, number>();
  const settled = new Set<string>();

  const workspace = (id: string): WorkspaceRow | undefined => {
    if (!workspaces.has(id)) {
      const row = current.get(id);
      if (row) workspaces.set(id, { ...row });
    }
    return workspaces.get(id);
  };
  const existing = (id: string, e: RecordedEvent): WorkspaceRow => {
    const row = workspace(id);
    if (!row) throw new Error(`${e.type} at position ${e.position} for unknown workspace ${id}`);
    return row;
  };
  const entry = (e: RecordedEvent, ws: WorkspaceRow, keyId: string | null) => {
    ledgerEntries.push({
      position: e.position,
      workspace_id: ws.id,
      type: e.type,
      request_id: e.metadata.request_id ?? null,
      key_id: keyId,
      credits: balanceChange(e)!,
      balance_after: ws.balance,
      recorded_at: e.recordedAt,
    });
  };

  /** The row after `e`, by the shared state model. */
  const evolve = (ws: WorkspaceRow, e: RecordedEvent) => {
    const after = evolveWorkspace({ balance: ws.balance, maxConcurrency: ws.max_concurrency }, e)!;
    ws.balance = after.balance;
    ws.max_concurrency = after.maxConcurrency;
    changed.add(ws.id);
  };

  /** Ledger events carry their chain hash; the row keeps the last one. */
  const linked = (ws: WorkspaceRow, e: RecordedEvent) => {
    if (typeof e.metadata.hash === 'string') ws.last_ledger_hash = e.metadata.hash;
  };

  for (const e of events) {
    switch (e.type) {
      case 'WorkspaceCreated': {
        const d = dataOf(e, 'WorkspaceCreated');
        if (workspace(d.workspace_id)) throw new Error(`workspace ${d.workspace_id} created twice (position ${e.position})`);
        const created = evolveWorkspace(undefined, e)!;
        const row: WorkspaceRow = { id: d.workspace_id, name: d.name, balance: created.balance, max_concurrency: created.maxConcurrency, created_at: e.recordedAt, last_ledger_hash: null };
        linked(row, e);
        workspaces.set(d.workspace_id, row);
        changed.add(d.workspace_id);
        break;
      }
      case 'CreditsGranted': {
        const d = dataOf(e, 'CreditsGranted');
        const ws = existing(d.workspace_id, e);
        evolve(ws, e);
        linked(ws, e);
        entry(e, ws, null);
        break;
      }
      case 'LimitsChanged': {
        const d = dataOf(e, 'LimitsChanged');
        const ws = workspace(d.workspace_id);
        if (!ws) break; // nothing to change, as an UPDATE of no row
        evolve(ws, e);
        break;
      }
      case 'LookupCharged': {
        const d = dataOf(e, 'LookupCharged');
        const ws = workspace(d.workspace_id);
        if (!ws || ws.balance < d.credits) throw new InsufficientCreditsError(d.workspace_id);
        evolve(ws, e);
        linked(ws, e);
        entry(e, ws, d.key_id);
        if (newCharges.has(d.request_id)) throw new Error(`request ${d.request_id} charged twice (position ${e.position})`);
        newCharges.set(d.request_id, {
          request_id: d.request_id,
          workspace_id: d.workspace_id,
          key_id: d.key_id,
          operation: d.operation,
          credits: d.credits,
          charged_at: e.recordedAt,
          refunded_credits: null,
          settled: false,
        });
        chargedIn.set(d.request_id, e.transactionId);
        break;
      }
      case 'LookupRefunded': {
        const d = dataOf(e, 'LookupRefunded');
        const ws = existing(d.workspace_id, e);
        evolve(ws, e);
        linked(ws, e);
        entry(e, ws, d.key_id);
        const charge = newCharges.get(d.request_id);
        if (charge) charge.refunded_credits = d.credits;
        else refunds.set(d.request_id, d.credits);
        break;
      }
      case 'LookupCompleted': {
        const requestId = dataOf(e, 'LookupCompleted').request_id;
        const charge = newCharges.get(requestId);
        if (charge) {
          charge.settled = true;
          if (chargedIn.get(requestId) === e.transactionId) settledInOwnTransaction.add(requestId);
        } else settled.add(requestId);
        break;
      }
    }
  }

  return {
    workspaces: [...changed].sort().map((id) => workspaces.get(id)!),
    ledgerEntries,
    newCharges: [...newCharges.values()],
    settledInOwnTransaction,
    refunds: [...refunds].map(([request_id, credits]) => ({ request_id, credits })),
    settled: [...settled],
  };
}

/**
 * The rows of `charges` to insert: only charges not settled in their own transaction. A charge
 * settled with its charge (every cache hit) is read by no query from its row: its state (credits,
 * refund, settled) is that of its events, which the refund and void decisions read instead
 * (services/ledger/batching-writer.ts), its operation is in the events of its ledger lines, and
 * only unsettled charges are swept. The row left out is ~190 bytes and an index entry per hit.
 */
export function chargeRowsToStore(plan: Pick<LedgerWrites, 'newCharges' | 'settledInOwnTransaction'>): ChargeRow[] {
  return plan.newCharges.filter((c) => !plan.settledInOwnTransaction.has(c.request_id));
}
