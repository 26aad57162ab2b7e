import type { LockedState } from '../../../../services/ledger/batching-writer';
import type { ChargeState } from '../../../../services/ledger/charge-state';
import type { WorkspaceState } from '../../../../services/ledger/workspace-state';

export const WS = 'ws_01HZZZZZZZZZZZZZZZZZZZZZZZ';
export const KEY = 'key_01HZZZZZZZZZZZZZZZZZZZZZZZ';
export const REQ = 'req_01HZZZZZZZZZZZZZZZZZZZZZZZ';

export const workspace = (balance: number, maxConcurrency = 8): WorkspaceState => ({ balance, maxConcurrency });
export const locked = (ws: WorkspaceState | undefined, charge?: ChargeState): LockedState => ({ workspace: ws, charge });
export const call = { workspaceId: WS, requestId: REQ, keyId: KEY, operation: 'domain' as const };

/** Type and the data fields named, of each event: what a test compares. */
export const shape = (events: { type: string; data: unknown }[], ...fields: string[]) =>
  events.map((e) => [e.type, ...fields.map((f) => (e.data as Record<string, unknown>)[f])]);
