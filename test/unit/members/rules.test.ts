import { describe, expect, it } from 'vitest';
import { isActiveEmailConflict } from '../../../services/members/members';
import {
  afterFailedSignIn,
  csrfTokenMatches,
  csrfTokenOf,
  decideAccept,
  decideCancelInvitation,
  decideInvite,
  decideRemove,
  decideRoleChange,
  decideSignInAttempt,
  INVITATION_TTL_MS,
  LOCK_MS,
  newSecret,
  newSessionTimes,
  originAllowed,
  passwordProblem,
  SECRET_PATTERN,
  SESSION_IDLE_MS,
  SESSION_MAX_MS,
  sessionNeedsTouch,
  sessionState,
  type ActiveMember,
  type Actor,
  type FailureRecord,
  type Invitation,
} from '../../../services/members/rules';

const now = new Date('2025-06-01T12:00:00Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const operator: Actor = { kind: 'operator' };
const ada: ActiveMember = { memberId: 'mem_ada', email: 'ada@example.com', role: 'owner' };
const bob: ActiveMember = { memberId: 'mem_bob', email: 'bob@example.com', role: 'member' };
const asOwner: Actor = { kind: 'member', memberId: 'mem_ada', role: 'owner' };
const asMember: Actor = { kind: 'member', memberId: 'mem_bob', role: 'member' };

const invitation = (over: Partial<Invitation> = {}): Invitation => ({
  invitationId: 'inv_1',
  workspaceId: 'ws_1',
  email: 'carol@example.com',
  role: 'member',
  expiresAt: at(INVITATION_TTL_MS),
  acceptedAt: null,
  cancelledAt: null,
  ...over,
});

describe('inviting', () => {
  it('given an empty workspace, when the operator invites, then the email is normalised and the link lasts 7 days', () => {
    expect(decideInvite([], operator, { email: '  Ada@Example.COM ', role: 'owner', activeElsewhere: false }, now)).toEqual({
      ok: true,
      value: { email: 'ada@example.com', expiresAt: new Date('2025-06-08T12:00:00Z') },
    });
  });
  it('given a member (not an owner), when they invite, then it is refused', () => {
    expect(decideInvite([ada, bob], asMember, { email: 'x@example.com', role: 'member', activeElsewhere: false }, now)).toEqual({ ok: false, refusal: 'not_owner' });
  });
  it('given an owner, when they invite a current member or someone of another workspace, then it is refused', () => {
    expect(decideInvite([ada, bob], asOwner, { email: 'BOB@example.com', role: 'member', activeElsewhere: false }, now)).toEqual({ ok: false, refusal: 'already_member' });
    expect(decideInvite([ada], asOwner, { email: 'eve@example.com', role: 'member', activeElsewhere: true }, now)).toEqual({ ok: false, refusal: 'email_taken' });
  });
});

describe('accepting an invitation', () => {
  it('given a pending invitation, when its link is followed before expiry, then it is accepted', () => {
    expect(decideAccept(invitation(), [ada], false, now)).toEqual({ ok: true, value: invitation() });
  });
  it('given an invitation already used, cancelled, expired or unknown, then it is refused', () => {
    expect(decideAccept(invitation({ acceptedAt: now }), [ada], false, now)).toEqual({ ok: false, refusal: 'invitation_used' });
    expect(decideAccept(invitation({ cancelledAt: now }), [ada], false, now)).toEqual({ ok: false, refusal: 'invitation_cancelled' });
    expect(decideAccept(invitation(), [ada], false, at(INVITATION_TTL_MS))).toEqual({ ok: false, refusal: 'invitation_expired' });
    expect(decideAccept(undefined, [ada], false, now)).toEqual({ ok: false, refusal: 'invitation_unknown' });
  });
  it('given the email joined meanwhile (here or elsewhere), then a second invitation cannot add it again', () => {
    expect(decideAccept(invitation({ email: 'bob@example.com' }), [ada, bob], false, now)).toEqual({ ok: false, refusal: 'already_member' });
    expect(decideAccept(invitation(), [ada], true, now)).toEqual({ ok: false, refusal: 'email_taken' });
  });
  it('given a pending invitation, only an owner or the operator may cancel it', () => {
    expect(decideCancelInvitation(invitation(), asMember)).toEqual({ ok: false, refusal: 'not_owner' });
    expect(decideCancelInvitation(invitation(), asOwner)).toEqual({ ok: true, value: undefined });
    expect(decideCancelInvitation(invitation({ acceptedAt: now }), operator)).toEqual({ ok: false, refusal: 'invitation_used' });
  });
});

describe('roles and removal', () => {
  it('given two owners, when one is demoted, then it is allowed; given one, then the last owner stays', () => {
    const carol: ActiveMember = { memberId: 'mem_carol', email: 'carol@example.com', role: 'owner' };
    expect(decideRoleChange([ada, carol], asOwner, 'mem_carol', 'member')).toEqual({ ok: true, value: { changed: true } });
    expect(decideRoleChange([ada, bob], asOwner, 'mem_ada', 'member')).toEqual({ ok: false, refusal: 'last_owner' });
  });
  it('given a member already in the role, then nothing changes (no event)', () => {
    expect(decideRoleChange([ada, bob], asOwner, 'mem_bob', 'member')).toEqual({ ok: true, value: { changed: false } });
  });
  it('given a member of another workspace or no one, then the id is unknown here', () => {
    expect(decideRoleChange([ada, bob], asOwner, 'mem_elsewhere', 'owner')).toEqual({ ok: false, refusal: 'no_member' });
    expect(decideRemove([ada, bob], asOwner, 'mem_elsewhere')).toEqual({ ok: false, refusal: 'no_member' });
  });
  it('given a member, when they try to promote themselves or remove someone, then it is refused', () => {
    expect(decideRoleChange([ada, bob], asMember, 'mem_bob', 'owner')).toEqual({ ok: false, refusal: 'not_owner' });
    expect(decideRemove([ada, bob], asMember, 'mem_ada')).toEqual({ ok: false, refusal: 'not_owner' });
  });
  it('given the only owner, when removed, then refused; a member can be removed', () => {
    expect(decideRemove([ada, bob], operator, 'mem_ada')).toEqual({ ok: false, refusal: 'last_owner' });
    expect(decideRemove([ada, bob], asOwner, 'mem_bob')).toEqual({ ok: true, value: undefined });
  });
});

describe('passwords', () => {
  it('need at least 12 characters, counted as characters, not bytes', () => {
    expect(passwordProblem('short')).toMatch(/at least 12/);
    expect(passwordProblem('elevenchars')).toMatch(/at least 12/);
    expect(passwordProblem('twelve chars')).toBeNull();
    expect(passwordProblem('é'.repeat(11))).toMatch(/at least 12/);
    expect(passwordProblem('😀'.repeat(12))).toBeNull();
    expect(passwordProblem(' '.repeat(12))).toMatch(/spaces/);
    expect(passwordProblem('x'.repeat(257))).toMatch(/at most/);
  });
});

describe('secrets, sessions and CSRF', () => {
  it('are 256-bit URL-safe random strings, all different', () => {
    const secrets = new Set(Array.from({ length: 100 }, newSecret));
    expect(secrets.size).toBe(100);
    for (const s of secrets) expect(s).toMatch(SECRET_PATTERN);
  });
  it('given a new session, then it is valid until idle for 8 h or 7 days old', () => {
    const t = newSessionTimes(now);
    expect(sessionState(t, at(SESSION_IDLE_MS - 1))).toBe('valid');
    expect(sessionState(t, at(SESSION_IDLE_MS))).toBe('idle');
    const active = { ...t, lastSeenAt: at(SESSION_MAX_MS - 1000) };
    expect(sessionState(active, at(SESSION_MAX_MS - 1))).toBe('valid');
    expect(sessionState(active, at(SESSION_MAX_MS))).toBe('expired');
  });
  it('writes last_seen_at at most once a minute', () => {
    const t = newSessionTimes(now);
    expect(sessionNeedsTouch(t, at(59_999))).toBe(false);
    expect(sessionNeedsTouch(t, at(60_000))).toBe(true);
  });
  it('given a session, then only its own CSRF token matches', () => {
    const a = newSecret();
    const b = newSecret();
    expect(csrfTokenMatches(a, csrfTokenOf(a))).toBe(true);
    expect(csrfTokenMatches(a, csrfTokenOf(b))).toBe(false);
    expect(csrfTokenMatches(a, undefined)).toBe(false);
    expect(csrfTokenMatches(a, '')).toBe(false);
    expect(csrfTokenOf(a)).not.toContain(a);
  });
  it('allows a state change from the page\'s own origin, or with no Origin, and refuses another or `null`', () => {
    expect(originAllowed('http://127.0.0.1:3000', '127.0.0.1:3000')).toBe(true);
    expect(originAllowed('https://Console.Example.com', 'console.example.com')).toBe(true);
    expect(originAllowed(undefined, '127.0.0.1:3000')).toBe(true);
    expect(originAllowed('http://evil.example', '127.0.0.1:3000')).toBe(false);
    expect(originAllowed('http://127.0.0.1:4000', '127.0.0.1:3000')).toBe(false);
    expect(originAllowed('null', '127.0.0.1:3000')).toBe(false);
    expect(originAllowed('not a url', '127.0.0.1:3000')).toBe(false);
  });
});

describe('sign-in throttling', () => {
  const failures = (n: number, start = now): FailureRecord | undefined => {
    let record: FailureRecord | undefined;
    for (let i = 0; i < n; i++) record = afterFailedSignIn(record, start);
    return record;
  };
  it('given fewer than 3 failures, then the next attempt may run at once', () => {
    expect(decideSignInAttempt(undefined, now)).toEqual({ allowed: true });
    expect(decideSignInAttempt(failures(2), now)).toEqual({ allowed: true });
  });
  it('given 3 then 4 failures, then the next attempt waits 1 s then 2 s after the last one', () => {
    expect(decideSignInAttempt(failures(3), at(500))).toEqual({ allowed: false, locked: false, retryAfterSeconds: 1 });
    expect(decideSignInAttempt(failures(3), at(1000))).toEqual({ allowed: true });
    expect(decideSignInAttempt(failures(4), at(1000))).toEqual({ allowed: false, locked: false, retryAfterSeconds: 1 });
    expect(decideSignInAttempt(failures(4), at(2000))).toEqual({ allowed: true });
  });
  it('given 5 failures, then the email is locked for 15 minutes for this address, then starts afresh', () => {
    const locked = failures(5)!;
    expect(locked.lockedUntil).toEqual(at(LOCK_MS));
    expect(decideSignInAttempt(locked, at(60_000))).toEqual({ allowed: false, locked: true, retryAfterSeconds: 840 });
    expect(decideSignInAttempt(locked, at(LOCK_MS))).toEqual({ allowed: true });
    expect(afterFailedSignIn(locked, at(LOCK_MS)).failures).toBe(1);
  });
  it('given failures an hour old, then they are forgotten', () => {
    expect(decideSignInAttempt(failures(4), at(3600_001))).toEqual({ allowed: true });
    expect(afterFailedSignIn(failures(4), at(3600_001)).failures).toBe(1);
  });
});

describe('isActiveEmailConflict', () => {
  it('given the unique violation of members_active_email (pg names the constraint, PGlite the message), then it is the email_taken refusal', () => {
    expect(isActiveEmailConflict({ code: '23505', constraint: 'members_active_email' })).toBe(true);
    expect(isActiveEmailConflict({ code: '23505', message: 'duplicate key value violates unique constraint "members_active_email"' })).toBe(true);
  });

  it('given any other error, then it is not', () => {
    expect(isActiveEmailConflict({ code: '23505', constraint: 'invitations_token_hash_key' })).toBe(false);
    expect(isActiveEmailConflict({ code: '57P01', message: 'members_active_email' })).toBe(false);
    expect(isActiveEmailConflict(new Error('boom'))).toBe(false);
    expect(isActiveEmailConflict(undefined)).toBe(false);
  });
});
