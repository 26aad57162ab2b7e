import { createHash } from 'node:crypto';
import { canonicalJson } from '../../contracts/content-hash';

/** A response as it is replayed: same status, body and the headers the caller chose to keep. */
export type StoredResponse = { status: number; body: unknown; headers: Record<string, string> };

export type BeginResult =
  /** The caller runs the request and then calls complete() or abandon() with this token. */
  | { kind: 'started'; token: string }
  /** Completed before with the same fingerprint: answer with this, run nothing. */
  | { kind: 'replay'; response: StoredResponse }
  /** The first request with this key and fingerprint is still running: 409. */
  | { kind: 'in_use' }
  /** The key was used with another endpoint or body: 422. */
  | { kind: 'reused' };

export interface IdempotencyStore {
  /** Claims `key` in the workspace, or says why not. Atomic across instances. */
  begin(workspaceId: string, key: string, fingerprint: string, now?: Date): Promise<BeginResult>;
  /** Stores the outcome for replay; does nothing unless `token` still owns the key. */
  complete(workspaceId: string, key: string, token: string, response: StoredResponse): Promise<void>;
  /** Forgets the claim so the same key runs anew; does nothing unless `token` still owns the key. */
  abandon(workspaceId: string, key: string, token: string): Promise<void>;
  /** Deletes records past their retention; returns how many. */
  purgeExpired(now?: Date): Promise<number>;
}

/**
 * sha256 (hex) of the endpoint and the RFC 8785 canonical JSON of the body, so key order and
 * number spelling do not matter but any change of endpoint or value does.
 */
export function fingerprint(endpoint: string, body: unknown): string {
  // No body at all fingerprints as empty, unlike a JSON null.
  const canonicalBody = body === undefined ? '' : canonicalJson(body);
  return createHash('sha256').update(endpoint).update('\n').update(canonicalBody).digest('hex');
}

/** Only outcomes that ran to a definitive answer are stored: 200 and the lookups' 404s. */
export function isStoredOutcome(status: number): boolean {
  return status === 200 || status === 404;
}
