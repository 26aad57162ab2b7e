/** The password reset's rules, pure: how long a link lives, how often one is sent, when it works. */

/** A reset link works for an hour after it was sent. */
export const PASSWORD_RESET_TTL_MS = 3600_000;
/** At most this many reset emails per member and hour: more asks are answered the same, and send nothing. */
export const PASSWORD_RESETS_PER_HOUR = 3;
/** Reset asks per client address and minute, members or not (past it: 429). */
export const PASSWORD_RESET_ASKS_PER_MINUTE = 10;

export interface PasswordReset {
  memberId: string;
  workspaceId: string;
  expiresAt: Date;
  usedAt: Date | null;
  /** Whether the member is still in the workspace. */
  memberActive: boolean;
}

export type ResetRefusal = 'reset_unknown' | 'reset_used' | 'reset_expired';

/** Given the resets sent to a member in the last hour, when one more is asked at `now`: its expiry, or nothing to send. */
export function decideResetRequest(sentInLastHour: number, now: Date): { send: true; expiresAt: Date } | { send: false } {
  if (sentInLastHour >= PASSWORD_RESETS_PER_HOUR) return { send: false };
  return { send: true, expiresAt: new Date(now.getTime() + PASSWORD_RESET_TTL_MS) };
}

/** A reset link followed at `now`: it works once, before it expires, for a member still in the workspace. */
export function decideResetUse(reset: PasswordReset | undefined, now: Date): { ok: true; reset: PasswordReset } | { ok: false; refusal: ResetRefusal } {
  if (!reset?.memberActive) return { ok: false, refusal: 'reset_unknown' };
  if (reset.usedAt) return { ok: false, refusal: 'reset_used' };
  if (reset.expiresAt.getTime() <= now.getTime()) return { ok: false, refusal: 'reset_expired' };
  return { ok: true, reset };
}
