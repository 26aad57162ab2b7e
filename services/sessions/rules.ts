/** The console session rules, pure: how long a session lives, and when it is dead. */

/** A session ends this long after sign-in, whatever happens. */
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** ...and after this long without a request. */
export const SESSION_IDLE_MS = 8 * 3600_000;
/** `last_seen_at` is written at most this often (not on every request). */
export const SESSION_TOUCH_EVERY_MS = 60_000;

export interface SessionTimes {
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

export function newSessionTimes(now: Date): SessionTimes {
  return { createdAt: now, lastSeenAt: now, expiresAt: new Date(now.getTime() + SESSION_MAX_MS) };
}

export type SessionState = 'valid' | 'expired' | 'idle' | 'superseded';

/**
 * A session is dead once expired, idle, or made with an older credential version than the
 * member's current one (a password change bumps it, whatever sign-in was still in flight).
 */
export function sessionState(s: SessionTimes & { credentialVersion: number }, now: Date, currentCredentialVersion: number): SessionState {
  if (s.credentialVersion !== currentCredentialVersion) return 'superseded';
  if (s.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (now.getTime() - s.lastSeenAt.getTime() >= SESSION_IDLE_MS) return 'idle';
  return 'valid';
}

export const sessionNeedsTouch = (s: SessionTimes, now: Date) => now.getTime() - s.lastSeenAt.getTime() >= SESSION_TOUCH_EVERY_MS;
