import { BALANCE_MAX } from '../../../contracts/http';
import { newEvent } from '../../../contracts/events';
import type { BatchingWriter, Decision } from '../batching-writer';
import { BalanceLimitError, UnknownWorkspaceError } from '../errors';
import { evolveWorkspaceThrough, type WorkspaceState } from '../workspace-state';

export interface GrantCreditsCommand {
  workspaceId: string;
  amount: number;
  reason?: string;
}

export type GrantResult = { kind: 'granted'; balance: number } | { kind: 'balance_too_big'; balance: number; max: number };

/**
 * A grant is admitted while the balance it leaves stays at most `max` (BALANCE_MAX, 10^15): every
 * balance is then an exact JavaScript number (below 2^53) in the API, the projections and the
 * int8 parsers. A grant that would pass it is refused whole, with the balance unchanged.
 */
export function decideGrant(state: WorkspaceState | undefined, cmd: GrantCreditsCommand, max: number = BALANCE_MAX): Decision<GrantResult> {
  if (!Number.isSafeInteger(cmd.amount) || cmd.amount <= 0) throw new RangeError(`bad grant ${cmd.amount}`);
  if (!state) throw new UnknownWorkspaceError(cmd.workspaceId);
  if (state.balance + cmd.amount > max) return { events: [], result: { kind: 'balance_too_big', balance: state.balance, max } };
  const events = [newEvent('CreditsGranted', { workspace_id: cmd.workspaceId, amount: cmd.amount, reason: cmd.reason ?? null })];
  return { events, result: { kind: 'granted', balance: evolveWorkspaceThrough(state, events)!.balance } };
}

/** Throws BalanceLimitError when the grant would pass the maximum balance. */
export async function grantCredits(writer: BatchingWriter, cmd: GrantCreditsCommand): Promise<{ balance: number }> {
  const result = await writer.submit({ workspaceId: cmd.workspaceId, decide: ({ workspace }) => decideGrant(workspace, cmd) });
  if (result.kind === 'balance_too_big') throw new BalanceLimitError(result.balance, cmd.amount, result.max);
  return { balance: result.balance };
}
