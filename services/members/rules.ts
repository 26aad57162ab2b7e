import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The workspace console's rules, pure: who may change membership, invitations, the password
 * rule, sessions, CSRF and sign-in throttling. I/O (the log, tables, the clock) is the caller's.
 */

export const ROLES = ['owner', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** `operator` (the admin token) or a signed-in member. */
export type Actor = { kind: 'operator' } | { kind: 'member'; memberId: string; role: Role };
/** How an actor is written in the events' `actor` field. */
export const actorName = (actor: Actor) => (actor.kind === 'operator' ? 'operator' : actor.memberId);

export interface ActiveMember {
  memberId: string;
  email: string;
  role: Role;
}

export interface Invitation {
  invitationId: string;
  workspaceId: string;
  email: string;
  role: Role;
  expiresAt: Date;
  acceptedAt: Date | null;
  cancelledAt: Date | null;
}

export type Refusal =
  /** A `member` tried what only an owner may. */
  | 'not_owner'
  /** The workspace would be left without an owner. */
  | 'last_owner'
  | 'already_member'
  /** The email is an active member of another workspace (sign-in is by email). */
  | 'email_taken'
  | 'no_member'
  | 'invitation_unknown'
  | 'invitation_used'
  | 'invitation_expired'
  | 'invitation_cancelled';

export type Decision<T = void> = { ok: true; value: T } | { ok: false; refusal: Refusal };
const ok = <T>(value: T): Decision<T> => ({ ok: true, value });
const refuse = (refusal: Refusal): Decision<never> => ({ ok: false, refusal });

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const mayManageMembers = (actor: Actor) => actor.kind === 'operator' || actor.role === 'owner';

/**
 * Given the workspace's active members and whether the email is active elsewhere, when `actor`
 * invites `email` as `role`: the invitation's expiry, or why not.
 */
export function decideInvite(
  members: readonly ActiveMember[],
  actor: Actor,
  input: { email: string; role: Role; activeElsewhere: boolean },
  now: Date,
): Decision<{ email: string; expiresAt: Date }> {
  if (!mayManageMembers(actor)) return refuse('not_owner');
  const email = normalizeEmail(input.email);
  if (members.some((m) => m.email === email)) return refuse('already_member');
  if (input.activeElsewhere) return refuse('email_taken');
  return ok({ email, expiresAt: new Date(now.getTime() + INVITATION_TTL_MS) });
}

/** An invitation's link followed at `now`: it works once, before it expires, unless cancelled. */
export function decideAccept(
  invitation: Invitation | undefined,
  members: readonly ActiveMember[],
  activeElsewhere: boolean,
  now: Date,
): Decision<Invitation> {
  if (!invitation) return refuse('invitation_unknown');
  if (invitation.acceptedAt) return refuse('invitation_used');
  if (invitation.cancelledAt) return refuse('invitation_cancelled');
  if (invitation.expiresAt.getTime() <= now.getTime()) return refuse('invitation_expired');
  if (members.some((m) => m.email === invitation.email)) return refuse('already_member');
  if (activeElsewhere) return refuse('email_taken');
  return ok(invitation);
}

export function decideCancelInvitation(invitation: Invitation | undefined, actor: Actor): Decision {
  if (!mayManageMembers(actor)) return refuse('not_owner');
  if (!invitation) return refuse('invitation_unknown');
  if (invitation.acceptedAt) return refuse('invitation_used');
  if (invitation.cancelledAt) return refuse('invitation_cancelled');
  return ok(undefined);
}

const ownersAfter = (members: readonly ActiveMember[], memberId: string, role: Role | null) =>
  members.filter((m) => (m.memberId === memberId ? role === 'owner' : m.role === 'owner')).length;

/** A role change; `changed: false` when the member already has it (no event). */
export function decideRoleChange(members: readonly ActiveMember[], actor: Actor, memberId: string, role: Role): Decision<{ changed: boolean }> {
  if (!mayManageMembers(actor)) return refuse('not_owner');
  const member = members.find((m) => m.memberId === memberId);
  if (!member) return refuse('no_member');
  if (member.role === role) return ok({ changed: false });
  if (ownersAfter(members, memberId, role) === 0) return refuse('last_owner');
  return ok({ changed: true });
}

export function decideRemove(members: readonly ActiveMember[], actor: Actor, memberId: string): Decision {
  if (!mayManageMembers(actor)) return refuse('not_owner');
  if (!members.some((m) => m.memberId === memberId)) return refuse('no_member');
  if (ownersAfter(members, memberId, null) === 0) return refuse('last_owner');
  return ok(undefined);
}

// ---------- secrets: invitation tokens, session ids, CSRF tokens ----------

/** 256 random bits, URL-safe: unguessable, so its SHA-256 is all the server keeps. */
export const newSecret = () => randomBytes(32).toString('base64url');
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The CSRF token of a session: derived from its id, so it needs no storage and dies with the
 * session. The page reads it from GET /console/v1/session (another origin cannot read that
 * answer) and sends it back as `X-CSRF-Token`; a forged cross-site request cannot.
 */
export const csrfTokenOf = (sessionId: string) => createHash('sha256').update(`csrf:${sessionId}`).digest('base64url');

export function csrfTokenMatches(sessionId: string, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const expected = Buffer.from(csrfTokenOf(sessionId));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A browser names the page's origin in `Origin` on every cross-origin request and on same-origin
 * POST/PATCH/DELETE. A state-changing call is refused when that origin is not the one the request
 * was sent to (its Host): a page elsewhere cannot act with the member's cookie. No Origin (a
 * non-browser client, which has no victim's cookie) passes to the CSRF token check.
 */
export function originAllowed(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  if (origin === 'null' || host === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

// ---------- passwords ----------

export const PASSWORD_MIN_CHARS = 12;
/** Bounds the work one sign-in attempt can ask of the hash. */
export const PASSWORD_MAX_CHARS = 256;

/** Why a new password is refused, or null. Counted in characters (code points), not bytes. */
export function passwordProblem(password: string): string | null {
  const chars = [...password].length;
  if (chars < PASSWORD_MIN_CHARS) return `The password must be at least ${PASSWORD_MIN_CHARS} characters long.`;
  if (chars > PASSWORD_MAX_CHARS) return `The password must be at most ${PASSWORD_MAX_CHARS} characters long.`;
  if (password.trim() === '') return 'The password must not be only spaces.';
  return null;
}

// ---------- sessions ----------

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

export type SessionState = 'valid' | 'expired' | 'idle';

export function sessionState(s: SessionTimes, now: Date): SessionState {
  if (s.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (now.getTime() - s.lastSeenAt.getTime() >= SESSION_IDLE_MS) return 'idle';
  return 'valid';
}

export const sessionNeedsTouch = (s: SessionTimes, now: Date) => now.getTime() - s.lastSeenAt.getTime() >= SESSION_TOUCH_EVERY_MS;

// ---------- sign-in throttling (per email and client address) ----------

/** From this many failures on, each further attempt waits 1 s, 2 s, 4 s... after the last failure. */
export const SLOW_AFTER_FAILURES = 3;
/** This many failures lock the email for this address. */
export const LOCK_AFTER_FAILURES = 5;
export const LOCK_MS = 15 * 60_000;
/** Failures older than this are forgotten. */
export const FAILURE_MEMORY_MS = 3600_000;

export interface FailureRecord {
  failures: number;
  lastFailureAt: Date;
  lockedUntil: Date | null;
}

export type AttemptDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; locked: boolean };

/** Whether a sign-in attempt may check the password now; refused attempts do not count as failures. */
export function decideSignInAttempt(record: FailureRecord | undefined, now: Date): AttemptDecision {
  const current = live(record, now);
  if (!current) return { allowed: true };
  const t = now.getTime();
  if (current.lockedUntil && current.lockedUntil.getTime() > t) {
    return { allowed: false, locked: true, retryAfterSeconds: Math.ceil((current.lockedUntil.getTime() - t) / 1000) };
  }
  if (current.failures >= SLOW_AFTER_FAILURES) {
    const waitMs = 1000 * 2 ** (current.failures - SLOW_AFTER_FAILURES);
    const readyAt = current.lastFailureAt.getTime() + waitMs;
    if (readyAt > t) return { allowed: false, locked: false, retryAfterSeconds: Math.ceil((readyAt - t) / 1000) };
  }
  return { allowed: true };
}

/** The record after a wrong password at `now`. */
export function afterFailedSignIn(record: FailureRecord | undefined, now: Date): FailureRecord {
  const failures = (live(record, now)?.failures ?? 0) + 1;
  return { failures, lastFailureAt: now, lockedUntil: failures >= LOCK_AFTER_FAILURES ? new Date(now.getTime() + LOCK_MS) : null };
}

/** The record as it counts now: none once forgotten, or once a lock has run out (a fresh start). */
function live(record: FailureRecord | undefined, now: Date): FailureRecord | undefined {
  if (!record) return undefined;
  const t = now.getTime();
  if (record.lockedUntil && record.lockedUntil.getTime() <= t) return undefined;
  if (!record.lockedUntil && t - record.lastFailureAt.getTime() > FAILURE_MEMORY_MS) return undefined;
  return record;
}
