import { API_KEY_PATTERN, hashApiKey } from '../common/ids';
import type { Sql } from '../eventstore/sql';
import { KEY_CHANGES_CHANNEL } from '../ledger/ledger';

export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  rateLimitPerMinute: number;
  maxConcurrency: number;
}

export type Credentials = { kind: 'none' } | { kind: 'malformed' } | { kind: 'key'; key: string };

/**
 * Reads the key from `Authorization: Bearer` or `X-Api-Key`. Two different keys, or anything not
 * shaped like a key, is "malformed".
 */
export function readCredentials(headers: Record<string, string | string[] | undefined>): Credentials {
  const authorization = single(headers.authorization);
  const apiKeyHeader = single(headers['x-api-key']);
  if (authorization === undefined && apiKeyHeader === undefined) return { kind: 'none' };
  let fromBearer: string | undefined;
  if (authorization !== undefined) {
    const m = /^Bearer +(\S+) *$/i.exec(authorization);
    if (!m) return { kind: 'malformed' };
    fromBearer = m[1];
  }
  const fromHeader = apiKeyHeader?.trim();
  if (fromBearer !== undefined && fromHeader !== undefined && fromBearer !== fromHeader) return { kind: 'malformed' };
  const key = (fromBearer ?? fromHeader)!;
  return API_KEY_PATTERN.test(key) ? { kind: 'key', key } : { kind: 'malformed' };
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? (v.length === 1 ? v[0] : v.join(',')) : v);

interface CachedKey {
  key: AuthenticatedKey | null;
  expiresAt: number;
}

/**
 * Revoked keys, shared by every instance (Redis), so a revocation holds on the very next request
 * anywhere: the NOTIFY below reaches other instances asynchronously, a moment after the revoke has
 * already been answered. A mark only needs to outlive the cache entries it overrides.
 */
export interface RevocationMarks {
  mark(keyId: string, ttlMs: number): Promise<void>;
  isMarked(keyId: string): Promise<boolean>;
}

/**
 * Key checks without a database round trip in steady state: answers are cached in process and
 * dropped the moment any instance revokes a key (PostgreSQL NOTIFY, sent in the revoke
 * transaction). With revocation marks, a cached valid key is also checked against them (one
 * Redis read), which closes the window before the notification arrives. Entries also expire, a
 * safety net for a missed notification; while the listening connection is down the cache is bypassed.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, CachedKey>();
  private listening = false;
  private stopListening?: () => Promise<void>;

  constructor(
    private readonly sql: Sql,
    private readonly options: { ttlMs?: number; unknownTtlMs?: number; maxEntries?: number; marks?: RevocationMarks } = {},
  ) {}

  async start(): Promise<void> {
    this.stopListening = await this.sql.listen(
      KEY_CHANGES_CHANNEL,
      (keyId) => this.forget(keyId),
      () => this.cache.clear(),
    );
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.listening = false;
    await this.stopListening?.();
  }

  /**
   * After a revocation committed here: this instance refuses the key at once, the others from
   * their next request on (the mark), without waiting for the notification.
   */
  async revoked(keyId: string): Promise<void> {
    this.forget(keyId);
    // Twice the longest a valid key stays cached: an entry filled just before the commit expires first.
    await this.options.marks?.mark(keyId, 2 * this.validTtlMs());
  }

  private validTtlMs(): number {
    return this.options.ttlMs ?? 60_000;
  }

  /** Drops a key, or every key of a workspace, from the cache (revoked, or limits changed). */
  forget(keyOrWorkspaceId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.key?.keyId === keyOrWorkspaceId || entry.key?.workspaceId === keyOrWorkspaceId) this.cache.delete(hash);
    }
  }

  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    const hash = hashApiKey(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (this.listening && cached && cached.expiresAt > now) {
      if (!cached.key || !this.options.marks) return cached.key;
      // Unreadable marks count as a mark: the database then decides.
      if (!(await this.options.marks.isMarked(cached.key.keyId).catch(() => true))) return cached.key;
    }
    const { rows } = await this.sql.query<{ id: string; workspace_id: string; rate_limit_per_minute: number; revoked_at: Date | null; max_concurrency: number }>(
      `SELECT k.id, k.workspace_id, k.rate_limit_per_minute, k.revoked_at, w.max_concurrency
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE k.key_hash = $1`,
      [hash],
    );
    const row = rows[0];
    const found = row && !row.revoked_at
      ? { keyId: row.id, workspaceId: row.workspace_id, rateLimitPerMinute: row.rate_limit_per_minute, maxConcurrency: row.max_concurrency }
      : null;
    if (this.cache.size >= (this.options.maxEntries ?? 100_000)) this.cache.clear();
    this.cache.set(hash, { key: found, expiresAt: now + (found ? this.validTtlMs() : (this.options.unknownTtlMs ?? 2_000)) });
    return found;
  }
}
