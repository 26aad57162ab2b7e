import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The workspace console's membership rules, pure: who may change membership, invitations, the
 * password rule, secrets, CSRF and password hashing's bounds. Sessions (services/sessions) and
 * sign-in throttling (services/sign-in-throttle) have theirs. I/O (the log, tables, the clock) is the caller's.
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
 * Given the workspace's active members, when `actor` invites `email` as `role`: the invitation's
 * expiry, or why not. Only this workspace's members are looked at: an email is a member of each
 * workspace on its own (sign-in names the workspace), so nothing here depends on, or tells of,
 * another workspace.
 */
export function decideInvite(members: readonly ActiveMember[], actor: Actor, input: { email: string; role: Role }, now: Date): Decision<{ email: string; expiresAt: Date }> {
  if (!mayManageMembers(actor)) return refuse('not_owner');
  const email = normalizeEmail(input.email);
  if (members.some((m) => m.email === email)) return refuse('already_member');
  return ok({ email, expiresAt: new Date(now.getTime() + INVITATION_TTL_MS) });
}

/** An invitation's link followed at `now`: it works once, before it expires, unless cancelled. */
export function decideAccept(invitation: Invitation | undefined, members: readonly ActiveMember[], now: Date): Decision<Invitation> {
  if (!invitation) return refuse('invitation_unknown');
  if (invitation.acceptedAt) return refuse('invitation_used');
  if (invitation.cancelledAt) return refuse('invitation_cancelled');
  if (invitation.expiresAt.getTime() <= now.getTime()) return refuse('invitation_expired');
  if (members.some((m) => m.email === invitation.email)) return refuse('already_member');
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

export type PasswordProblem = { kind: 'too_short' | 'too_long' | 'blank' | 'common'; message: string };

/** How a password is looked up in the list of common ones: case and surrounding spaces ignored. */
export const commonPasswordForm = (password: string) => password.normalize('NFC').trim().toLowerCase();

/**
 * Why a new password is refused, or null. Length is counted in characters (code points), not
 * bytes; `common` holds the most used passwords in `commonPasswordForm` (services/members/common-passwords.txt).
 */
export function passwordProblem(password: string, common: ReadonlySet<string>): PasswordProblem | null {
  const chars = [...password].length;
  if (chars < PASSWORD_MIN_CHARS) return { kind: 'too_short', message: `The password must be at least ${PASSWORD_MIN_CHARS} characters long.` };
  if (chars > PASSWORD_MAX_CHARS) return { kind: 'too_long', message: `The password must be at most ${PASSWORD_MAX_CHARS} characters long.` };
  if (password.trim() === '') return { kind: 'blank', message: 'The password must not be only spaces.' };
  if (common.has(commonPasswordForm(password))) return { kind: 'common', message: 'This password is among the most commonly used ones: choose another.' };
  return null;
}

// ---------- hashing: bounded per client address and in total ----------

/** scrypt runs at most this many at a time in one instance (the machine's cores)... */
export const HASHING_CONCURRENCY = 2;
/** ...with at most this many more waiting... */
export const HASHING_QUEUE = 16;
/** ...and at most this many, running or waiting, for one client address; past either, 429. */
export const HASHING_PER_ADDRESS = 4;
export const HASHING_BUSY_RETRY_AFTER_SECONDS = 1;

export interface HashingLoad {
  total: number;
  ofAddress: number;
}

/** Given the hashes admitted (running or waiting) in total and for the address, whether one more is. */
export const hashingAdmits = (load: HashingLoad) => load.total < HASHING_CONCURRENCY + HASHING_QUEUE && load.ofAddress < HASHING_PER_ADDRESS;
