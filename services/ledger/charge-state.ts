import type { EventData } from '../../contracts/events';
import type { EventLike } from './workspace-state';

/** A charged call as the refund and void decisions see it (its row of `charges`, or its events when it has none). */
export interface ChargeState {
  readonly credits: number;
  /** Null until its one refund; a refund of 0 credits still counts as the refund. */
  readonly refundedCredits: number | null;
  /** Its LookupCompleted is recorded. */
  readonly settled: boolean;
}

/** The events that make and move a charge. */
export const CHARGE_EVENT_TYPES = ['LookupCharged', 'LookupRefunded', 'LookupCompleted'] as const;
const CHARGE_EVENTS: ReadonlySet<string> = new Set(CHARGE_EVENT_TYPES);

/** The request an event charges, refunds or completes; undefined for every other event. */
export function chargeRequestOf(e: EventLike): string | undefined {
  if (!CHARGE_EVENTS.has(e.type)) return undefined;
  return (e.data as { request_id: string }).request_id;
}

/** A charge after one event of its request. Refunds and completions of no charge leave none. */
export function evolveCharge(charge: ChargeState | undefined, e: EventLike): ChargeState | undefined {
  switch (e.type) {
    case 'LookupCharged':
      return { credits: (e.data as EventData<'LookupCharged'>).credits, refundedCredits: null, settled: false };
    case 'LookupRefunded':
      return charge && { ...charge, refundedCredits: (e.data as EventData<'LookupRefunded'>).credits };
    case 'LookupCompleted':
      return charge && { ...charge, settled: true };
    default:
      return charge;
  }
}
