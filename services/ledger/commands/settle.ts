import { newEvent, type RefundCause } from '../../../contracts/events';
import type { EventStore } from '../../eventstore/event-store';
import type { NewEvent } from '../../eventstore/types';
import type { BatchingWriter, Decision, LockedState } from '../batching-writer';
import type { ChargeState } from '../charge-state';
import { UnknownWorkspaceError } from '../errors';
import { refundCap } from '../pricing';
import { evolveWorkspaceThrough } from '../workspace-state';
import { callFields, completedEvent, type CallRef, type CompletedOutcome } from './lookup-completed';

export interface SettleCommand extends CallRef {
  /** What the live fetch learned (ProfileFetched / ProfileNotFound), on the entity's stream. */
  entityEvents?: { stream: string; event: NewEvent }[];
  /** Credits that go back: the whole charge for a failure, the difference for a cheaper not-found. */
  refund?: { owed: number; cause: RefundCause };
  completed: CompletedOutcome;
  /** Recovery: do nothing if the charge was settled meanwhile (another sweeper, a slow instance). */
  onlyIfUnsettled?: boolean;
}

export interface SettleResult {
  balance: number;
  refunded: number;
}

/**
 * What a refund of a charge may return: at most what was charged, and only once per charge.
 * `owed` is what the outcome says should come back (the whole charge for a failure, the
 * difference for a not-found priced lower than the success). 0: nothing comes back.
 */
export function refundDue(charge: Pick<ChargeState, 'credits' | 'refundedCredits'> | undefined, owed: number): number {
  if (!charge || charge.refundedCredits !== null) return 0;
  return refundCap(charge.credits, owed);
}

/** Records what a live lookup ended in, refunding at most once per charge. */
export function decideSettle({ workspace, charge }: LockedState, cmd: SettleCommand): Decision<SettleResult> {
  if (!workspace) throw new UnknownWorkspaceError(cmd.workspaceId);
  if (cmd.onlyIfUnsettled && (!charge || charge.settled)) return { events: [], result: { balance: workspace.balance, refunded: 0 } };
  const refunded = cmd.refund ? refundDue(charge, cmd.refund.owed) : 0;
  const events: NewEvent[] = [];
  if (refunded > 0) events.push(newEvent('LookupRefunded', { ...callFields(cmd), credits: refunded, cause: cmd.refund!.cause }, cmd.requestId));
  events.push(completedEvent(cmd, cmd.completed));
  return { events, entityEvents: cmd.entityEvents, result: { balance: evolveWorkspaceThrough(workspace, events)!.balance, refunded } };
}

export function settle(writer: BatchingWriter, cmd: SettleCommand): Promise<SettleResult> {
  // The charge row only matters to a refund or a recovery; a plain success needs no read of it.
  const needsCharge = cmd.refund !== undefined || cmd.onlyIfUnsettled === true;
  return writer.submit({ workspaceId: cmd.workspaceId, chargeOf: needsCharge ? cmd.requestId : undefined, decide: (locked) => decideSettle(locked, cmd) });
}

/** How many abandoned charges one sweep looks at. */
const SWEEP_LIMIT = 500;

/**
 * Refunds charges whose lookup never completed (the instance serving it died), once they are
 * older than `graceMs`. Safe to run on every instance at once: each charge settles once.
 */
export async function refundAbandonedCharges(store: EventStore, writer: BatchingWriter, graceMs: number): Promise<number> {
  // The key's mode: a test call's completion says so like the rest of its events.
  const { rows } = await store.sql.query<{ request_id: string; workspace_id: string; key_id: string; operation: CallRef['operation']; mode: CallRef['mode'] }>(
    `SELECT c.request_id, c.workspace_id, c.key_id, c.operation, coalesce(k.mode, 'live') AS mode FROM charges c LEFT JOIN api_keys k ON k.id = c.key_id
      WHERE NOT c.settled AND c.charged_at < now() - make_interval(secs => $1) ORDER BY c.charged_at LIMIT $2`,
    [graceMs / 1000, SWEEP_LIMIT],
  );
  let refunded = 0;
  for (const c of rows) {
    const settled = await settle(writer, {
      workspaceId: c.workspace_id,
      requestId: c.request_id,
      keyId: c.key_id,
      operation: c.operation,
      mode: c.mode,
      onlyIfUnsettled: true,
      refund: { owed: Number.MAX_SAFE_INTEGER, cause: 'internal_error' },
      completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'internal_error' },
    });
    if (settled.refunded > 0) refunded++;
  }
  return refunded;
}
