import { hash } from 'node:crypto';
import { canonicalJson } from '../../contracts/content-hash';
import type { NewEvent } from '../eventstore/types';

/**
 * Tamper evidence of the ledger. Each ledger event of a workspace carries, in its metadata, the
 * hash of the workspace's previous ledger event (`prev_hash`, null for the first) and its own
 * (`hash` = hex SHA-256 of the RFC 8785 canonical JSON of `{event: {type, stream, data}, prev_hash}`),
 * fixed when it is appended. Changing, removing or reordering an event breaks the chain at that
 * event or the next one; the audit recomputes every chain (services/audit/audit.ts).
 *
 * Ledger events are those that create a workspace or move its money; limits, keys and lookups'
 * completions are not part of the chain.
 */
export const LEDGER_EVENT_TYPES = ['WorkspaceCreated', 'CreditsGranted', 'LookupCharged', 'LookupRefunded'] as const;
const LEDGER_EVENTS: ReadonlySet<string> = new Set(LEDGER_EVENT_TYPES);

export const isLedgerEvent = (type: string): boolean => LEDGER_EVENTS.has(type);

export interface ChainLinks {
  prev_hash: string | null;
  hash: string;
}

/** The hash of one ledger event after `prevHash`. `data` as it reads back from the log (JSON). */
export function ledgerEventHash(prevHash: string | null, event: { type: string; stream: string; data: unknown }): string {
  return hash('sha256', canonicalJson({ event: { type: event.type, stream: event.stream, data: event.data }, prev_hash: prevHash }), 'hex');
}

/**
 * The events to append to a workspace's stream, each ledger event with its links, given the hash
 * of the workspace's last ledger event so far (null: none yet). Other events pass unchanged.
 * Pure: the caller keeps `lastHash` for the next events of the workspace.
 */
export function chainLedgerEvents(prevHash: string | null, stream: string, events: readonly NewEvent[]): { events: NewEvent[]; lastHash: string | null } {
  let last = prevHash;
  const chained = events.map((e) => {
    if (!isLedgerEvent(e.type)) return e;
    // Hashed as the log will hold it: canonicalJson drops undefined fields, as JSON (jsonb) does.
    const hash = ledgerEventHash(last, { type: e.type, stream, data: e.data ?? null });
    const links: ChainLinks = { prev_hash: last, hash };
    last = hash;
    return { ...e, metadata: { ...e.metadata, ...links } };
  });
  return { events: chained, lastHash: last };
}

export interface ChainBreak {
  workspace_id: string;
  /** The first event of the workspace's chain that does not hold. */
  position: number;
  stream: string;
  version: number;
  /** `prev_hash`: the link to the previous event is wrong; `hash`: the event is not what was hashed. */
  field: 'prev_hash' | 'hash';
  expected: string | null;
  actual: unknown;
}

/** A ledger event as the log holds it, with the links its metadata carries as stored (null when absent). */
export interface StoredLedgerEvent {
  position: number;
  stream: string;
  version: number;
  type: string;
  data: unknown;
  prevHash: unknown;
  hash: unknown;
}

/**
 * Checks one workspace's chain event by event, in log order: feed it every ledger event of the
 * workspace; it remembers the first break and stops checking after it (what follows a break
 * cannot be trusted, and one name is what an operator needs).
 */
export class ChainVerifier {
  private last: string | null = null;
  broken: ChainBreak | undefined;

  constructor(readonly workspaceId: string) {}

  /** The hash the next event must link to; the stored one once the chain broke. */
  get lastHash(): string | null {
    return this.last;
  }

  check(e: StoredLedgerEvent): void {
    if (this.broken) return;
    const storedPrev = e.prevHash ?? null;
    if (storedPrev !== this.last) {
      this.broken = { ...this.at(e), field: 'prev_hash', expected: this.last, actual: storedPrev };
      return;
    }
    const expected = ledgerEventHash(this.last, e);
    if (e.hash !== expected) {
      this.broken = { ...this.at(e), field: 'hash', expected, actual: e.hash ?? null };
      return;
    }
    this.last = expected;
  }

  private at(e: StoredLedgerEvent) {
    return { workspace_id: this.workspaceId, position: e.position, stream: e.stream, version: e.version };
  }
}
