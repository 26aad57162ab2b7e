/**
 * Pure cache-freshness rules (docs/api.md "Request fields", `max_age`): a cached copy at most `max_age` seconds
 * old is served (HIT); `max_age` 0 always fetches live; otherwise a live fetch is a MISS when
 * nothing was cached and a REFRESH when an older copy was.
 */

export type CacheDecision = 'HIT' | 'MISS' | 'REFRESH';

/** Whole seconds since `fetchedAt`, never negative (a clock skew between instances must not show as a negative Age). */
export function ageSeconds(fetchedAt: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - fetchedAt.getTime()) / 1000));
}

export function cacheDecision(entry: { fetchedAt: Date } | undefined, maxAgeSeconds: number, now: Date): CacheDecision {
  if (entry === undefined) return 'MISS';
  if (maxAgeSeconds <= 0) return 'REFRESH';
  return ageSeconds(entry.fetchedAt, now) <= maxAgeSeconds ? 'HIT' : 'REFRESH';
}
