/**
 * Throttling of password checks, pure: sign-in per workspace, email and address; a password
 * change per member.
 */

/** From this many attempts on, each further one waits 1 s, 2 s, 4 s... after the last one. */
export const SLOW_AFTER_FAILURES = 3;
/** The attempt that brings the count to this many locks the subject. */
export const LOCK_AFTER_FAILURES = 5;
export const LOCK_MS = 15 * 60_000;
/** Failures older than this are forgotten. */
export const FAILURE_MEMORY_MS = 3600_000;

/**
 * Attempts at a password of one subject. An attempt counts as a failure from the moment it is let
 * through, before the hash runs, so attempts arriving together are counted one after another
 * (each decision sees the ones before it) however many instances take them. `inFlight` of them
 * have not finished: a right password clears only the finished ones.
 */
export interface AttemptRecord {
  failures: number;
  inFlight: number;
  /** When the last attempt was let through, or the last wrong one ended, whichever is later. */
  lastFailureAt: Date;
  lockedUntil: Date | null;
}

export type AttemptStart = { allowed: true; next: AttemptRecord } | { allowed: false; retryAfterSeconds: number; locked: boolean };

/** Given the subject's record, when an attempt arrives at `now`: refused (not counted), or let through and counted. */
export function startAttempt(record: AttemptRecord | undefined, now: Date): AttemptStart {
  const current = live(record, now);
  const t = now.getTime();
  if (current?.lockedUntil && current.lockedUntil.getTime() > t) {
    return { allowed: false, locked: true, retryAfterSeconds: Math.ceil((current.lockedUntil.getTime() - t) / 1000) };
  }
  if (current && current.failures >= SLOW_AFTER_FAILURES) {
    const readyAt = current.lastFailureAt.getTime() + 1000 * 2 ** (current.failures - SLOW_AFTER_FAILURES);
    if (readyAt > t) return { allowed: false, locked: false, retryAfterSeconds: Math.ceil((readyAt - t) / 1000) };
  }
  const failures = (current?.failures ?? 0) + 1;
  const inFlight = (current?.inFlight ?? 0) + 1;
  return { allowed: true, next: { failures, inFlight, lastFailureAt: now, lockedUntil: failures >= LOCK_AFTER_FAILURES ? new Date(t + LOCK_MS) : null } };
}

/**
 * How an attempt that was let through ended at `now`: `wrong` stays counted, and the next wait
 * runs from its end (however long the hash took); `right` clears the finished attempts (those
 * still in flight stay counted until they end); `not_run` (the hash was never asked, e.g. too
 * busy) is taken back. The record after it, or null when nothing is left to keep.
 */
export function endAttempt(record: AttemptRecord, outcome: 'wrong' | 'right' | 'not_run', now: Date): AttemptRecord | null {
  const inFlight = Math.max(0, record.inFlight - 1);
  const failures = outcome === 'wrong' ? record.failures : outcome === 'right' ? inFlight : Math.max(0, record.failures - 1);
  if (failures === 0 && inFlight === 0) return null;
  const lastFailureAt = outcome === 'wrong' && now.getTime() > record.lastFailureAt.getTime() ? now : record.lastFailureAt;
  return { failures, inFlight, lastFailureAt, lockedUntil: failures >= LOCK_AFTER_FAILURES ? record.lockedUntil : null };
}

/** The record as it counts now: none once forgotten, or once a lock has run out (a fresh start). */
function live(record: AttemptRecord | undefined, now: Date): AttemptRecord | undefined {
  if (!record) return undefined;
  const t = now.getTime();
  if (record.lockedUntil && record.lockedUntil.getTime() <= t) return undefined;
  if (!record.lockedUntil && t - record.lastFailureAt.getTime() > FAILURE_MEMORY_MS) return undefined;
  return record;
}
