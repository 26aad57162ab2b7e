import { backgroundLogger, everyNthError, type Logger } from '../common/log';
import { NotificationBarrier } from '../eventstore/notification-barrier';
import type { Sql } from '../eventstore/sql';
import { LimiterUnavailableError } from '../limits/limiter-unavailable';
import { keySetBarriers, keySetMisses, keySetRebuilds, registerKeySetSize } from '../metrics/metrics';
import { KeyFingerprintSet } from './key-fingerprint-set';
import type { KeyMode } from '../../contracts/events';
import { hashApiKey, modeOfKey } from './key-material';

/**
 * Channel on which key changes are announced to every instance sharing the database: a key or
 * workspace id (revoked, limits changed: dropped from the caches), `+<key hash>` (a key created),
 * or a barrier token (see NotificationBarrier).
 */
export const KEY_CHANGES_CHANNEL = 'api_key_changes';
/** The payload announcing a key created with this hash. */
export const keyCreatedPayload = (keyHash: string) => `+${keyHash}`;

/**
 * What the key set says of a key before any database read: `listed` (cached, or in the set: ask
 * `authenticate`), `unlisted` (certainly no key: refused without a read), `unsure` (the set is
 * being rebuilt or could not be confirmed current: only the database can tell).
 */
export type Screening = 'listed' | 'unlisted' | 'unsure';

/** A barrier at most this often: misses in between wait for the next one. */
const BARRIER_MIN_INTERVAL_MS = 20;
/** A barrier not back by then, or a set still loading, leaves the key `unsure`. */
const KEY_SET_WAIT_MS = 2_000;
const LOAD_PAGE_SIZE = 10_000;
const RELOAD_RETRY_MS = { initial: 250, max: 5_000 };

export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  rateLimitPerMinute: number;
  maxConcurrency: number;
  /** `test` for a test key (`lk_test_…`): its calls go to the sandbox and cost nothing (key-mode.ts). */
  mode: KeyMode;
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

/** Takes the key's rate-limit token (and what goes with it) unless its mark (at `markKey`) exists. */
export type AdmitUnlessMarked<T> = (key: AuthenticatedKey, markKey: string) => Promise<T | 'marked'>;

/**
 * Key checks without a database round trip in steady state: answers are cached in process and
 * dropped the moment any instance revokes a key (PostgreSQL NOTIFY, sent in the revoke
 * transaction). With revocation marks, a cached valid key is also checked against them (one
 * Redis read), which closes the window before the notification arrives. Entries also expire, a
 * safety net for a missed notification; while the listening connection is down the cache is bypassed.
 *
 * The key set (docs/adr/0013-key-set-screens-unknown-keys.md): the fingerprint of every key, loaded
 * at start and after each reconnection, and grown by the creation notifications, so a made-up key
 * is refused without a database read (`screen`). A key missing from it is refused only once a
 * barrier has shown that every key committed before the request has been notified here.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, CachedKey>();
  private listening = false;
  private stopListening?: () => Promise<void>;
  private readonly marksUnreadable: (err: unknown) => void;
  private readonly barrierLate: (err: unknown) => void;
  private readonly log: Logger;
  /** What `screen` answers "listed" from. */
  private keySet = new KeyFingerprintSet();
  /** Being loaded (at start, after a loss): it gets every notification too, and replaces `keySet` once loaded. */
  private nextKeySet?: KeyFingerprintSet;
  /** The set holds every key committed up to the notifications delivered so far. */
  private keySetCurrent = false;
  /** Settles when the set is current again. */
  private keySetReady = settlable();
  /** Bumped by every (re)connection and loss: a load of an older one does not make the set current. */
  private generation = 0;
  private readonly barrier: NotificationBarrier;
  private unregisterSize?: () => void;

  constructor(
    private readonly sql: Sql,
    private readonly options: { ttlMs?: number; unknownTtlMs?: number; maxEntries?: number; marks?: RevocationMarks; logger?: Logger; barrierMinIntervalMs?: number } = {},
  ) {
    this.log = options.logger ?? backgroundLogger();
    this.marksUnreadable = everyNthError(this.log, 'revocation marks unreadable; cached keys are checked in the database');
    this.barrierLate = everyNthError(this.log, 'key set barrier not back in time; unknown keys are checked in the database', { channel: KEY_CHANGES_CHANNEL });
    this.barrier = new NotificationBarrier(
      async (token) => {
        keySetBarriers.inc();
        await sql.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, token]);
      },
      { minIntervalMs: options.barrierMinIntervalMs ?? BARRIER_MIN_INTERVAL_MS, timeoutMs: KEY_SET_WAIT_MS },
    );
  }

  async start(): Promise<void> {
    // Before LISTEN: the load below misses no key, since any committed later is notified into it.
    this.nextKeySet = new KeyFingerprintSet();
    this.stopListening = await this.sql.listen(
      KEY_CHANGES_CHANNEL,
      (payload) => this.notified(payload),
      // Back: revocations and creations may have been missed meanwhile, so nothing kept before is trusted.
      () => {
        this.cache.clear();
        this.listening = true;
        void this.reloadKeySet();
      },
      () => {
        this.listening = false;
        this.keySetLost();
      },
    );
    this.listening = true;
    this.unregisterSize = registerKeySetSize(() => this.keySet.size);
    try {
      await this.loadKeySet(++this.generation);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.keySetLost();
    this.unregisterSize?.();
    await this.stopListening?.();
  }

  private notified(payload: string): void {
    if (this.barrier.echoed(payload) || NotificationBarrier.isToken(payload)) return;
    if (payload.startsWith('+')) {
      this.keySet.add(payload.slice(1));
      this.nextKeySet?.add(payload.slice(1));
    } else this.forget(payload);
  }

  /**
   * Whether `key` can be a key, from this process's memory and at most one barrier shared with
   * every other miss meanwhile: never a read of a table. Rejects when the database is unreachable.
   */
  async screen(key: string): Promise<Screening> {
    const hash = hashApiKey(key);
    if (this.cachedEntry(hash) || this.keySet.has(hash)) return 'listed';
    if (!this.keySetCurrent && this.listening) await waitAtMost(this.keySetReady.promise, KEY_SET_WAIT_MS);
    if (!this.keySetCurrent) return this.missed('unsure');
    if (this.keySet.has(hash)) return 'listed';
    const passed = await this.barrier.pass();
    if (this.keySet.has(hash)) return this.missed('created_meanwhile');
    if (!passed || !this.keySetCurrent) {
      if (!passed) this.barrierLate(new Error(`no barrier back on ${KEY_CHANGES_CHANNEL} within ${KEY_SET_WAIT_MS} ms`));
      return this.missed('unsure');
    }
    return this.missed('unlisted');
  }

  private missed(outcome: Screening | 'created_meanwhile'): Screening {
    keySetMisses.inc({ outcome: outcome === 'unlisted' ? 'unknown' : outcome });
    return outcome === 'created_meanwhile' ? 'listed' : outcome;
  }

  /** From here notifications may be missed: a fresh set starts, filled by those after the reconnection and a load. */
  private keySetLost(): void {
    this.generation++;
    if (this.keySetCurrent) this.keySetReady = settlable();
    this.keySetCurrent = false;
    this.nextKeySet = new KeyFingerprintSet();
  }

  /** After a reconnection: loads until it succeeds or the connection is lost again. */
  private async reloadKeySet(): Promise<void> {
    const generation = this.generation;
    for (let attempt = 1; generation === this.generation; attempt++) {
      try {
        await this.loadKeySet(generation);
        return;
      } catch (err) {
        if (attempt === 1 || attempt % 20 === 0) this.log.warn({ err, attempts: attempt }, 'loading the key set failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, Math.min(RELOAD_RETRY_MS.max, RELOAD_RETRY_MS.initial * 2 ** (attempt - 1))).unref());
      }
    }
  }

  /** Fills the next set (revoked keys drop out) from the table, in pages of its unique index, then answers from it. */
  private async loadKeySet(generation: number): Promise<void> {
    const set = this.nextKeySet;
    if (!set) return;
    try {
      let after = '';
      for (;;) {
        const page = await this.sql.queryArrays<[string]>(
          'SELECT key_hash FROM api_keys WHERE key_hash > $1 AND revoked_at IS NULL ORDER BY key_hash LIMIT $2',
          [after, LOAD_PAGE_SIZE],
        );
        for (const [hash] of page) set.add(hash);
        if (page.length < LOAD_PAGE_SIZE) break;
        after = page[page.length - 1]![0];
      }
    } catch (err) {
      keySetRebuilds.inc({ result: 'failed' });
      throw err;
    }
    keySetRebuilds.inc({ result: 'loaded' });
    if (generation !== this.generation || !this.listening) return;
    this.keySet = set;
    this.nextKeySet = undefined;
    this.keySetCurrent = true;
    this.keySetReady.resolve();
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
    return this.cachedEntry(hashApiKey(key)) !== undefined;
  }

  private cachedEntry(hash: string): CachedKey | undefined {
    const cached = this.cache.get(hash);
    return this.listening && cached !== undefined && cached.expiresAt > Date.now() ? cached : undefined;
  }

  /**
   * The steady-state fast path: a cached valid key checked against its revocation mark and
   * charged its rate-limit token in ONE Redis round trip. Undefined when it does not apply (key
   * not cached, no marks, marked, Redis unreadable): the caller then authenticates and takes as
   * usual, which also answers every failure as before.
   */
  async admitCached<T>(key: string, admitUnlessMarked: AdmitUnlessMarked<T>): Promise<{ key: AuthenticatedKey; admitted: T } | undefined> {
    const markKey = this.options.marks?.storageKey;
    if (!markKey || !this.listening) return undefined;
    const cached = this.cache.get(hashApiKey(key));
    if (!cached?.key || cached.expiresAt <= Date.now()) return undefined;
    try {
      const admitted = await admitUnlessMarked(cached.key, markKey(cached.key.keyId));
      return admitted === 'marked' ? undefined : { key: cached.key, admitted };
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
    const { rows } = await this.sql.query<{ id: string; workspace_id: string; rate_limit_per_minute: number; revoked_at: Date | null; max_concurrency: number; mode: KeyMode }>(
      `SELECT k.id, k.workspace_id, k.rate_limit_per_minute, k.revoked_at, w.max_concurrency, k.mode
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE k.key_hash = $1`,
      [hash],
    );
    const row = rows[0];
    // The prefix names the mode and the row records it: a key whose two disagree is no key (never
    // made by createKey), so a live row is never spent by a test-looking key or the other way round.
    const found = row && !row.revoked_at && row.mode === modeOfKey(key)
      ? { keyId: row.id, workspaceId: row.workspace_id, rateLimitPerMinute: row.rate_limit_per_minute, maxConcurrency: row.max_concurrency, mode: row.mode }
      : null;
    if (this.cache.size >= (this.options.maxEntries ?? 100_000)) this.cache.clear();
    this.cache.set(hash, { key: found, expiresAt: now + (found ? this.validTtlMs() : (this.options.unknownTtlMs ?? 2_000)) });
    return found;
  }
}

/** A promise and its resolve. */
function settlable(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** `promise`, or `ms` elapsed, whichever comes first. */
async function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()))]);
  clearTimeout(timer);
}
