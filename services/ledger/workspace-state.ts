import type { EventData, EventType } from '../../contracts/events';

/**
 * The one model of a workspace's money and limits, and how each event moves it. The batching
 * writer decides from it (and evolves it through a batch), the ledger projection writes it to the
 * `workspaces` rows, and the relay's balance consumer rebuilds it from the ledger topic. The audit
 * replays with its own, independent code on purpose (see services/audit/audit.ts).
 *
 * The key set is not part of it: none of these readers sees key events (they live on the keys'
 * own streams and topic) and no money decision reads them; keys are services/keys' business.
 */
export interface WorkspaceState {
  readonly balance: number;
  readonly maxConcurrency: number;
}

/** Anything shaped like an event: recorded, about to be appended, or read back from a topic. */
export interface EventLike {
  readonly type: string;
  readonly data: unknown;
}

/** Events on a workspace's stream that create it or move its balance or limits. */
export const WORKSPACE_EVENT_TYPES = ['WorkspaceCreated', 'CreditsGranted', 'LimitsChanged', 'LookupCharged', 'LookupRefunded'] as const;
const WORKSPACE_EVENTS: ReadonlySet<string> = new Set(WORKSPACE_EVENT_TYPES);

/** The workspace an event creates or changes; undefined for every other event. */
export function workspaceChangedBy(e: EventLike): string | undefined {
  if (!WORKSPACE_EVENTS.has(e.type)) return undefined;
  const id = (e.data as { workspace_id?: unknown } | null)?.workspace_id;
  return typeof id === 'string' ? id : undefined;
}

/** Events that open (WorkspaceCreated, at 0) or move a workspace's balance. */
export const BALANCE_EVENT_TYPES = ['WorkspaceCreated', 'CreditsGranted', 'LookupCharged', 'LookupRefunded'] as const;
const BALANCE_EVENTS: ReadonlySet<string> = new Set(BALANCE_EVENT_TYPES);

/** Whether the event opens or moves a workspace's balance. */
export function opensOrMovesBalance(e: Pick<EventLike, 'type'>): boolean {
  return BALANCE_EVENTS.has(e.type);
}

/** The event's data, typed by the contract (the type argument names which event it is). */
const dataOf = <T extends EventType>(e: EventLike, _type: T) => e.data as EventData<T>;

/**
 * The credits an event moves, signed as its ledger line shows them: + for a grant or a refund,
 * − for a charge (0, never −0, for a free charge). null: the event moves no credits.
 */
export function balanceChange(e: EventLike): number | null {
  switch (e.type) {
    case 'CreditsGranted':
      return dataOf(e, 'CreditsGranted').amount;
    case 'LookupCharged':
      return 0 - dataOf(e, 'LookupCharged').credits;
    case 'LookupRefunded':
      return dataOf(e, 'LookupRefunded').credits;
    default:
      return null;
  }
}

/**
 * A workspace after one event. An event other than WorkspaceCreated on no workspace leaves none:
 * whether that is an error is the caller's to say. Events that do not concern workspaces change nothing.
 */
export function evolveWorkspace(state: WorkspaceState | undefined, e: EventLike): WorkspaceState | undefined {
  switch (e.type) {
    case 'WorkspaceCreated':
      return { balance: 0, maxConcurrency: dataOf(e, 'WorkspaceCreated').max_concurrency };
    case 'CreditsGranted':
    case 'LookupCharged':
    case 'LookupRefunded':
      return state && { ...state, balance: state.balance + balanceChange(e)! };
    case 'LimitsChanged':
      return state && { ...state, maxConcurrency: dataOf(e, 'LimitsChanged').max_concurrency };
    default:
      return state;
  }
}

/** Folds events in order. */
export function evolveWorkspaceThrough(state: WorkspaceState | undefined, events: Iterable<EventLike>): WorkspaceState | undefined {
  let current = state;
  for (const e of events) current = evolveWorkspace(current, e);
  return current;
}
