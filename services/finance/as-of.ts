import type { EventData } from '../../contracts/events';
import type { LedgerEntry, WorkspaceResponse } from '../../contracts/http';
import type { RecordedEvent } from '../eventstore/types';
import { balanceChange, evolveWorkspace, type WorkspaceState } from '../ledger/workspace-state';

/**
 * A workspace and its ledger as they stood at an instant, from the log alone: its stream's events
 * recorded at or before the instant, replayed in stream order by the one workspace model. Pure.
 */

/** Undefined workspace: not created yet at that instant. `events` in stream order. */
export function replayWorkspace(events: readonly RecordedEvent[]): { workspace: WorkspaceResponse | undefined; ledger: LedgerEntry[] } {
  let state: WorkspaceState | undefined;
  let identity: { id: string; name: string; created_at: string } | undefined;
  const ledger: LedgerEntry[] = [];
  for (const e of events) {
    state = evolveWorkspace(state, e);
    if (e.type === 'WorkspaceCreated') {
      const d = e.data as EventData<'WorkspaceCreated'>;
      identity = { id: d.workspace_id, name: d.name, created_at: e.recordedAt.toISOString() };
    }
    const signed = balanceChange(e);
    if (signed === null || !state) continue;
    const call = e.type === 'CreditsGranted' ? undefined : (e.data as EventData<'LookupCharged'>);
    ledger.push({
      position: e.position,
      type: e.type,
      request_id: e.metadata.request_id ?? null,
      key_id: call?.key_id ?? null,
      credits: signed,
      balance_after: state.balance,
      recorded_at: e.recordedAt.toISOString(),
      mode: call?.mode ?? 'live',
    });
  }
  const workspace = state && identity && { ...identity, balance: state.balance, max_concurrency: state.maxConcurrency };
  return { workspace, ledger };
}
