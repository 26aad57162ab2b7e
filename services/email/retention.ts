/**
 * How long a message stays in `email_outbox` once it is done (sent, or given up), its body already
 * dropped: long enough to look into a complaint ("I never got the invitation"), not forever.
 * EMAIL_OUTBOX_RETENTION_MS (services/config/config.ts) overrides it.
 */
export const DEFAULT_OUTBOX_RETENTION_MS = 30 * 86_400_000;

/** How often each instance's sender deletes what is past retention (any instance may: a DELETE twice is harmless). */
export const PURGE_EVERY_MS = 3_600_000;

/** Messages done before this are deleted. */
export function purgeCutoff(now: Date, retentionMs: number): Date {
  return new Date(now.getTime() - retentionMs);
}
