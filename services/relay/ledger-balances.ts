import { PublishedEventEnvelope, type PublishedEvent } from '../../contracts/jsonschema';
import { balanceChange, evolveWorkspace, opensOrMovesBalance, workspaceChangedBy, type WorkspaceState } from '../ledger/workspace-state';

/**
 * Balances rebuilt from the ledger topic alone: what an analytics consumer does. The relay
 * publishes at least once, so a message can arrive twice (after a lost acknowledgement); the
 * event id, `<stream>:<version>`, makes the second one recognisable.
 */
export interface LedgerBalances {
  /** workspace id → its state, by the one workspace model the writer and the projection use. */
  readonly workspaces: Map<string, WorkspaceState>;
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

/**
 * A workspace whose creation this reader never saw (it joined the topic later, or the topic's
 * retention dropped it): its balance counts from zero, its limit is unknown (0).
 */
const UNSEEN: WorkspaceState = { balance: 0, maxConcurrency: 0 };

export function emptyLedgerBalances(): LedgerBalances {
  return { workspaces: new Map(), balances: new Map(), seen: new Set(), applied: 0, duplicates: 0 };
}

/** Credits an event moves: + for grants and refunds, − for charges, 0 for anything else. */
export function creditDelta(event: Pick<PublishedEvent, 'type' | 'data'>): number {
  return balanceChange(event) ?? 0;
}

/** Applies one event to `state` (which it updates); a repeated event id changes nothing. */
export function applyLedgerEvent(state: LedgerBalances, event: PublishedEvent): LedgerStep {
  const eventId = event.event_id;
  if (state.seen.has(eventId)) {
    state.duplicates += 1;
    return { kind: 'duplicate', eventId };
  }
  state.seen.add(eventId);
  const workspaceId = workspaceChangedBy(event);
  if (workspaceId === undefined) return { kind: 'ignored', eventId };
  const before = state.workspaces.get(workspaceId);
  const after = evolveWorkspace(event.type === 'WorkspaceCreated' ? before : (before ?? UNSEEN), event)!;
  state.workspaces.set(workspaceId, after);
  state.balances.set(workspaceId, after.balance);
  if (!opensOrMovesBalance(event)) return { kind: 'ignored', eventId };
  state.applied += 1;
  return { kind: 'applied', eventId, workspaceId, delta: after.balance - (before?.balance ?? 0), balance: after.balance };
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
