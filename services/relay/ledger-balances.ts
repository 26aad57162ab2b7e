import { PublishedEventEnvelope, type PublishedEvent } from '../../contracts/jsonschema';

/**
 * Balances rebuilt from the ledger topic alone: what an analytics consumer does. The relay
 * publishes at least once, so a message can arrive twice (after a lost acknowledgement); the
 * event id, `<stream>:<version>`, makes the second one recognisable.
 */
export interface LedgerBalances {
  /** workspace id → credits. */
  readonly balances: Map<string, number>;
  /** Event ids already applied. */
  readonly seen: Set<string>;
  applied: number;
  duplicates: number;
}

export type LedgerStep =
  | { kind: 'applied'; eventId: string; workspaceId: string; delta: number; balance: number }
  | { kind: 'duplicate'; eventId: string }
  /** An event of the topic that moves no credits (LimitsChanged, or a type this reader does not know). */
  | { kind: 'ignored'; eventId: string };

/** Events that open or move a balance. */
const BALANCE_EVENTS = new Set(['WorkspaceCreated', 'CreditsGranted', 'LookupCharged', 'LookupRefunded']);

export function emptyLedgerBalances(): LedgerBalances {
  return { balances: new Map(), seen: new Set(), applied: 0, duplicates: 0 };
}

/** Credits an event moves: + for grants and refunds, − for charges, 0 for anything else. */
export function creditDelta(event: Pick<PublishedEvent, 'type' | 'data'>): number {
  const data = event.data as { amount?: unknown; credits?: unknown };
  switch (event.type) {
    case 'CreditsGranted':
      return Number(data.amount);
    case 'LookupCharged':
      return 0 - Number(data.credits); // not -x: a free charge is 0, not -0
    case 'LookupRefunded':
      return Number(data.credits);
    default:
      return 0;
  }
}

/** Applies one event to `state` (which it updates); a repeated event id changes nothing. */
export function applyLedgerEvent(state: LedgerBalances, event: PublishedEvent): LedgerStep {
  const eventId = event.event_id;
  if (state.seen.has(eventId)) {
    state.duplicates += 1;
    return { kind: 'duplicate', eventId };
  }
  state.seen.add(eventId);
  const workspaceId = (event.data as { workspace_id?: unknown } | null)?.workspace_id;
  if (typeof workspaceId !== 'string') return { kind: 'ignored', eventId };
  if (!BALANCE_EVENTS.has(event.type)) return { kind: 'ignored', eventId };
  const delta = creditDelta(event);
  const balance = (state.balances.get(workspaceId) ?? 0) + delta;
  state.balances.set(workspaceId, balance);
  state.applied += 1;
  return { kind: 'applied', eventId, workspaceId, delta, balance };
}

/** The whole fold: events in topic order → balances. */
export function foldLedger(events: Iterable<PublishedEvent>, state = emptyLedgerBalances()): LedgerBalances {
  for (const event of events) applyLedgerEvent(state, event);
  return state;
}

/** A message value as read from the topic, checked against the envelope of the contract. */
export function parsePublishedEvent(value: Buffer | string | null): PublishedEvent {
  if (value === null) throw new Error('message without a value');
  return PublishedEventEnvelope.parse(JSON.parse(typeof value === 'string' ? value : value.toString('utf8')));
}
