import { newEvent, type EventData } from '../../../contracts/events';
import type { NewEvent } from '../../eventstore/types';
import type { BatchingWriter, Decision, LockedState } from '../batching-writer';
import { UnknownWorkspaceError } from '../errors';
import { callFields, completedEvent, type CallRef } from './lookup-completed';
import { refundDue } from './settle';

/** A call answered "nothing charged" whose charge may stand in the ledger. */
export interface VoidCommand extends CallRef {
  /** How the call was to be answered (STALE: a stale copy whose settlement could not be written). */
  cacheStatus: EventData<'LookupCompleted'>['cache_status'];
}

export interface VoidResult {
  refunded: number;
  /** Credits the charge keeps: a refund already spent on less than the whole charge. */
  kept: number;
}

/**
 * A call whose caller was told it cost nothing, though its outcome could not be recorded (the
 * database went away): what makes the ledger agree. Whatever was not refunded yet comes back (one
 * refund per charge, as always), and a charge with no recorded outcome gets one. No charge: the
 * charge itself never committed, and there is nothing to do.
 */
export function decideVoid({ workspace, charge }: LockedState, cmd: VoidCommand): Decision<VoidResult> {
  if (!workspace) throw new UnknownWorkspaceError(cmd.workspaceId);
  if (!charge) return { events: [], result: { refunded: 0, kept: 0 } };
  const refunded = refundDue(charge, charge.credits);
  const events: NewEvent[] = [];
  if (refunded > 0) events.push(newEvent('LookupRefunded', { ...callFields(cmd), credits: refunded, cause: 'service_unavailable' }, cmd.requestId));
  if (!charge.settled) {
    events.push(completedEvent(cmd, { outcome: 'error', cache_status: cmd.cacheStatus, credits_charged: 0, error_code: 'service_unavailable' }));
  }
  return { events, result: { refunded, kept: charge.credits - (charge.refundedCredits ?? 0) - refunded } };
}

/** Safe to repeat; does nothing when the charge never committed. */
export function voidCharge(writer: BatchingWriter, cmd: VoidCommand): Promise<VoidResult> {
  return writer.submit({ workspaceId: cmd.workspaceId, chargeOf: cmd.requestId, decide: (locked) => decideVoid(locked, cmd) });
}
