import type { EventData } from '../../contracts/events';
import type { Sql } from '../eventstore/sql';
import type { CachedEntry } from './decider';

/** Every alias whose cache row a commit changed is announced here (cacheProjection, inline.ts). */
export const CACHE_CHANGES_CHANNEL = 'cache_index_changes';

export const DEFAULT_CACHE_INDEX_MAX_ENTRIES = 10_000;

/** The cache aliases an event rewrites: what the cache projection announces, and what an instance drops. */
export function cacheAliasesChangedBy(event: { type: string; data: unknown }): string[] {
  if (event.type === 'ProfileFetched') return (event.data as EventData<'ProfileFetched'>).aliases;
  if (event.type === 'ProfileNotFound') return [(event.data as EventData<'ProfileNotFound'>).alias];
  return [];
}

/**
 * The cache index (alias → entry) served from process memory, so a cache hit reads no SQL.
 *
 * It may hold a copy older than the database's for a moment (another instance refreshed the entry
 * and its notification is on its way), so a copy is only ever answered from when it alone already
 * satisfies the caller (`usable`: its own fetched_at within the asked max_age); anything else is
 * read from the database, as is everything while the listening connection is down. An answer is
 * thus never older than the caller allowed, whichever instance refreshed the entry.
 *
 * Bounded: least recently used entries go first past `maxEntries`. Aliases with no row are not
 * kept (the next lookup of one is a live fetch anyway).
 */
export class CacheIndexMemory {
  /** Map order is recency: a hit moves its entry to the end, eviction takes from the front. */
  private readonly entries = new Map<string, CachedEntry>();
  private listening = false;
  /** Bumped by every invalidation: a database read that raced one is not kept. */
  private invalidations = 0;
  private stopListening?: () => Promise<void>;

  constructor(
    private readonly sql: Sql,
    private readonly maxEntries = DEFAULT_CACHE_INDEX_MAX_ENTRIES,
  ) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 0) throw new RangeError(`maxEntries must be an integer >= 0, got ${maxEntries}`);
  }

  async start(): Promise<void> {
    this.stopListening = await this.sql.listen(
      CACHE_CHANGES_CHANNEL,
      (alias) => this.forget(alias),
      // Back: changes may have been missed meanwhile, so nothing kept before is trusted.
      () => {
        this.clear();
        this.listening = true;
      },
      () => {
        this.listening = false;
        this.clear();
      },
    );
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.clear();
    await this.stopListening?.();
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry of `alias`: the kept copy when `usable` accepts it, else the database's. */
  async read(
    alias: string,
    usable: (entry: CachedEntry) => boolean,
    readFromDatabase: (alias: string) => Promise<CachedEntry | undefined>,
  ): Promise<CachedEntry | undefined> {
    const kept = this.listening ? this.entries.get(alias) : undefined;
    if (kept && usable(kept)) {
      this.entries.delete(alias);
      this.entries.set(alias, kept);
      return kept;
    }
    const before = this.invalidations;
    const entry = await readFromDatabase(alias);
    if (entry && this.listening && this.invalidations === before && this.maxEntries > 0) this.keep(alias, entry);
    return entry;
  }

  /**
   * This instance's own commits: their aliases are dropped at once, before the answers that follow
   * them go out, rather than when their NOTIFY comes back (a HIT right after a REFRESH made here
   * would otherwise be answered from the copy the REFRESH replaced).
   */
  forgetChangedBy(committed: readonly { type: string; data: unknown }[]): void {
    for (const event of committed) for (const alias of cacheAliasesChangedBy(event)) this.forget(alias);
  }

  forget(alias: string): void {
    this.invalidations++;
    this.entries.delete(alias);
  }

  private clear(): void {
    this.invalidations++;
    this.entries.clear();
  }

  private keep(alias: string, entry: CachedEntry): void {
    this.entries.delete(alias);
    this.entries.set(alias, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
