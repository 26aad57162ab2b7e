import { backgroundLogger, everyNthError, type Logger } from '../common/log';
import type { Sql } from '../eventstore/sql';
import { LimiterUnavailableError } from '../limits/limiter-unavailable';
import type { RateDecision } from '../limits/rate-limiter';
import { hashApiKey } from './key-material';

/** Channel on which key changes are announced to every instance sharing the database. */
export const KEY_CHANGES_CHANNEL = 'api_key_changes';

export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  rateLimitPerMinute: number;
  maxConcurrency: number;
}

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
  /** Where the mark lives, for a rate limiter that checks it in the same round trip (Redis key). */
  storageKey?(keyId: string): string;
}

/** Takes the key's rate-limit token unless its mark (at `markKey`) exists. */
export type TakeUnlessMarked = (key: AuthenticatedKey, markKey: string) => Promise<RateDecision | 'marked'>;

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
  private readonly marksUnreadable: (err: unknown) => void;

  constructor(
    private readonly sql: Sql,
    private readonly options: { ttlMs?: number; unknownTtlMs?: number; maxEntries?: number; marks?: RevocationMarks; logger?: Logger } = {},
  ) {
    this.marksUnreadable = everyNthError(options.logger ?? backgroundLogger(), 'revocation marks unreadable; cached keys are checked in the database');
  }

  async start(): Promise<void> {
    this.stopListening = await this.sql.listen(
      KEY_CHANGES_CHANNEL,
      (keyId) => this.forget(keyId),
      // Back: revocations may have been missed meanwhile, so nothing cached before is trusted.
      () => {
        this.cache.clear();
        this.listening = true;
      },
      () => {
        this.listening = false;
      },
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
    await this.options.marks?.mark(keyId, this.markLifetimeMs());
  }

  /**
   * Marks are a cache of what PostgreSQL holds: every key revoked within a mark's lifetime is
   * marked again for what is left of it. Run on every connection to Redis, so a Redis that came
   * back empty, a replica promoted before a mark reached it, or marks renamed by an upgrade (their
   * hash tags) lose nothing. Returns how many keys were marked.
   */
  async restoreMarks(): Promise<number> {
    const marks = this.options.marks;
    if (!marks) return 0;
    // The database's clock for both ends, as for the revocation itself.
    const { rows } = await this.sql.query<{ id: string; ms_left: string | number }>(
      `SELECT id, $1::bigint - floor(extract(epoch FROM now() - revoked_at) * 1000)::bigint AS ms_left
         FROM api_keys WHERE revoked_at > now() - $1::bigint * interval '1 millisecond'`,
      [this.markLifetimeMs()],
    );
    await Promise.all(rows.map((row) => marks.mark(row.id, Number(row.ms_left))));
    return rows.length;
  }

  private validTtlMs(): number {
    return this.options.ttlMs ?? 60_000;
  }

  /** Twice the longest a valid key stays cached: an entry filled just before the revoke's commit expires first. */
  private markLifetimeMs(): number {
    return 2 * this.validTtlMs();
  }

  /** Drops a key, or every key of a workspace, from the cache (revoked, or limits changed). */
  forget(keyOrWorkspaceId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.key?.keyId === keyOrWorkspaceId || entry.key?.workspaceId === keyOrWorkspaceId) this.cache.delete(hash);
    }
  }

  /**
   * Whether `authenticate(key)` answers from this process's cache, valid or not, without a
   * database query (short of a revocation mark on a cached valid key, one query at most).
   */
  isCached(key: string): boolean {
    const cached = this.cache.get(hashApiKey(key));
    return this.listening && cached !== undefined && cached.expiresAt > Date.now();
  }

  /**
   * The steady-state fast path: a cached valid key checked against its revocation mark and
   * charged its rate-limit token in ONE Redis round trip. Undefined when it does not apply (key
   * not cached, no marks, marked, Redis unreadable): the caller then authenticates and takes as
   * usual, which also answers every failure as before.
   */
  async admitCached(key: string, takeUnlessMarked: TakeUnlessMarked): Promise<{ key: AuthenticatedKey; decision: RateDecision } | undefined> {
    const markKey = this.options.marks?.storageKey;
    if (!markKey || !this.listening) return undefined;
    const cached = this.cache.get(hashApiKey(key));
    if (!cached?.key || cached.expiresAt <= Date.now()) return undefined;
    try {
      const decision = await takeUnlessMarked(cached.key, markKey(cached.key.keyId));
      return decision === 'marked' ? undefined : { key: cached.key, decision };
    } catch (err) {
      if (err instanceof LimiterUnavailableError) return undefined;
      throw err;
    }
  }

  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    const hash = hashApiKey(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (this.listening && cached && cached.expiresAt > now) {
      if (!cached.key || !this.options.marks) return cached.key;
      // Unreadable marks count as a mark: the database then decides.
      const marked = await this.options.marks.isMarked(cached.key.keyId).catch((err: unknown) => {
        this.marksUnreadable(err);
        return true;
      });
      if (!marked) return cached.key;
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
