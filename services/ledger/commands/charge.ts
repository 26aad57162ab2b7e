import { newEvent } from '../../../contracts/events';
import type { NewEvent } from '../../eventstore/types';
import type { BatchingWriter, Decision } from '../batching-writer';
import { UnknownWorkspaceError } from '../errors';
import { evolveWorkspaceThrough, type WorkspaceState } from '../workspace-state';
import { callFields, completedEvent, type CallRef, type CompletedOutcome } from './lookup-completed';

export interface ChargeCommand extends CallRef {
  credits: number;
  /** Known at charge time (a cache hit): recorded in the same transaction. */
  completed?: CompletedOutcome;
}

export type ChargeResult = { kind: 'charged'; balanceAfter: number } | { kind: 'insufficient_credits'; balance: number };

export function chargeEvents(cmd: ChargeCommand): NewEvent[] {
  const events: NewEvent[] = [newEvent('LookupCharged', { ...callFields(cmd), credits: cmd.credits }, cmd.requestId)];
  if (cmd.completed) events.push(completedEvent(cmd, cmd.completed));
  return events;
}

/**
 * A call is admitted when the balance covers its success price; the balance never goes negative.
 * A refusal appends nothing. `events` are the command's (built ahead, outside the locks).
 */
export function decideCharge(state: WorkspaceState | undefined, cmd: ChargeCommand, events?: NewEvent[]): Decision<ChargeResult> {
  if (!Number.isInteger(cmd.credits) || cmd.credits < 0) throw new RangeError(`bad price ${cmd.credits}`);
  if (!state) throw new UnknownWorkspaceError(cmd.workspaceId);
  if (state.balance < cmd.credits) return { events: [], result: { kind: 'insufficient_credits', balance: state.balance } };
  const charged = events ?? chargeEvents(cmd);
  return { events: charged, result: { kind: 'charged', balanceAfter: evolveWorkspaceThrough(state, charged)!.balance } };
}

export function charge(writer: BatchingWriter, cmd: ChargeCommand): Promise<ChargeResult> {
  // Built (and schema-checked) before joining the batch: the locked part only decides.
  const events = chargeEvents(cmd);
  return writer.submit({ workspaceId: cmd.workspaceId, decide: ({ workspace }) => decideCharge(workspace, cmd, events) });
}
