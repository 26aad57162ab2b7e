import { describe, expect, it } from 'vitest';
import { loadCommonPasswords } from '../../../services/members/common-passwords';
import {
  commonPasswordForm,
  csrfTokenMatches,
  csrfTokenOf,
  decideAccept,
  decideCancelInvitation,
  decideInvite,
  decideRemove,
  decideRoleChange,
  endAttempt,
  HASHING_CONCURRENCY,
  HASHING_PER_ADDRESS,
  HASHING_QUEUE,
  hashingAdmits,
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
  startAttempt,
  type ActiveMember,
  type Actor,
  type AttemptRecord,
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
    expect(decideInvite([], operator, { email: '  Ada@Example.COM ', role: 'owner' }, now)).toEqual({
      ok: true,
      value: { email: 'ada@example.com', expiresAt: new Date('2025-06-08T12:00:00Z') },
    });
  });
  it('given a member (not an owner), when they invite, then it is refused', () => {
    expect(decideInvite([ada, bob], asMember, { email: 'x@example.com', role: 'member' }, now)).toEqual({ ok: false, refusal: 'not_owner' });
  });
  it('given an owner, when they invite a current member of the workspace, then it is refused (other workspaces\' members are not looked at)', () => {
    expect(decideInvite([ada, bob], asOwner, { email: 'BOB@example.com', role: 'member' }, now)).toEqual({ ok: false, refusal: 'already_member' });
  });
});

describe('accepting an invitation', () => {
  it('given a pending invitation, when its link is followed before expiry, then it is accepted', () => {
    expect(decideAccept(invitation(), [ada], now)).toEqual({ ok: true, value: invitation() });
  });
  it('given an invitation already used, cancelled, expired or unknown, then it is refused', () => {
    expect(decideAccept(invitation({ acceptedAt: now }), [ada], now)).toEqual({ ok: false, refusal: 'invitation_used' });
    expect(decideAccept(invitation({ cancelledAt: now }), [ada], now)).toEqual({ ok: false, refusal: 'invitation_cancelled' });
    expect(decideAccept(invitation(), [ada], at(INVITATION_TTL_MS))).toEqual({ ok: false, refusal: 'invitation_expired' });
    expect(decideAccept(undefined, [ada], now)).toEqual({ ok: false, refusal: 'invitation_unknown' });
  });
  it('given the email joined this workspace meanwhile, then a second invitation cannot add it again', () => {
    expect(decideAccept(invitation({ email: 'bob@example.com' }), [ada, bob], now)).toEqual({ ok: false, refusal: 'already_member' });
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
  const none = new Set<string>();
  const kind = (password: string, common: ReadonlySet<string> = none) => passwordProblem(password, common)?.kind ?? null;
  it('need at least 12 characters, counted as characters, not bytes', () => {
    expect(passwordProblem('short', none)?.message).toMatch(/at least 12/);
    expect(kind('elevenchars')).toBe('too_short');
    expect(kind('twelve chars')).toBeNull();
    expect(kind('é'.repeat(11))).toBe('too_short');
    expect(kind('😀'.repeat(12))).toBeNull();
    expect(passwordProblem(' '.repeat(12), none)?.message).toMatch(/spaces/);
    expect(kind('x'.repeat(257))).toBe('too_long');
  });
  it('given a list of common passwords, when a new password is one of them in any case or with spaces around, then it is refused', () => {
    const common = new Set([commonPasswordForm('Password1234')]);
    expect(kind('password1234', common)).toBe('common');
    expect(kind('  PASSWORD1234 ', common)).toBe('common');
    expect(kind('password12345', common)).toBeNull();
  });
  it('given the shipped list, then the usual long-enough ones are in it and an ordinary passphrase is not', () => {
    const shipped = loadCommonPasswords();
    expect(shipped.size).toBeGreaterThan(500);
    for (const p of ['password1234', 'Qwerty123456', '123456789012', 'iloveyou1234', '1q2w3e4r5t6y', 'passwordpassword']) expect(kind(p, shipped), p).toBe('common');
    expect(kind('owner password 1234', shipped)).toBeNull();
    // Shorter ones are the length rule's: the list only needs those that pass it.
    for (const p of shipped) expect([...p].length).toBeGreaterThanOrEqual(12);
  });
});

describe('secrets, sessions and CSRF', () => {
  it('are 256-bit URL-safe random strings, all different', () => {
    const secrets = new Set(Array.from({ length: 100 }, newSecret));
    expect(secrets.size).toBe(100);
    for (const s of secrets) expect(s).toMatch(SECRET_PATTERN);
  });
  it('given a new session, then it is valid until idle for 8 h or 7 days old', () => {
    const t = { ...newSessionTimes(now), credentialVersion: 1 };
    expect(sessionState(t, at(SESSION_IDLE_MS - 1), 1)).toBe('valid');
    expect(sessionState(t, at(SESSION_IDLE_MS), 1)).toBe('idle');
    const active = { ...t, lastSeenAt: at(SESSION_MAX_MS - 1000) };
    expect(sessionState(active, at(SESSION_MAX_MS - 1), 1)).toBe('valid');
    expect(sessionState(active, at(SESSION_MAX_MS), 1)).toBe('expired');
  });
  it('given a session made with credential version 1, when the password has changed (version 2), then it is dead at once', () => {
    const t = { ...newSessionTimes(now), credentialVersion: 1 };
    expect(sessionState(t, at(1), 2)).toBe('superseded');
    expect(sessionState({ ...t, credentialVersion: 2 }, at(1), 2)).toBe('valid');
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

describe('password attempts (sign-in and the current password of a change)', () => {
  /** `n` attempts let through at `when`, still in flight. */
  const started = (n: number, when = now): AttemptRecord | undefined => {
    let record: AttemptRecord | undefined;
    for (let i = 0; i < n; i++) {
      const s = startAttempt(record, when);
      if (!s.allowed) throw new Error(`attempt ${i + 1} refused`);
      record = s.next;
    }
    return record;
  };
  /** `n` wrong passwords finished, the last one let through at `when`. */
  const failures = (n: number, when = now): AttemptRecord => ({ failures: n, inFlight: 0, lastFailureAt: when, lockedUntil: null });
  it('given fewer than 3 failures, then the next attempt may run at once, and counts before its password is checked', () => {
    expect(startAttempt(undefined, now)).toEqual({ allowed: true, next: { failures: 1, inFlight: 1, lastFailureAt: now, lockedUntil: null } });
    expect(startAttempt(failures(2), now)).toMatchObject({ allowed: true, next: { failures: 3, inFlight: 1 } });
  });
  it('given 3 then 4 failures, then the next attempt waits 1 s then 2 s after the last one', () => {
    expect(startAttempt(failures(3), at(500))).toEqual({ allowed: false, locked: false, retryAfterSeconds: 1 });
    expect(startAttempt(failures(3), at(1000)).allowed).toBe(true);
    expect(startAttempt(failures(4), at(1000))).toEqual({ allowed: false, locked: false, retryAfterSeconds: 1 });
    expect(startAttempt(failures(4), at(2000)).allowed).toBe(true);
  });
  it('given attempts arriving together, then the 4th waits although none of the first 3 has finished', () => {
    expect(startAttempt(started(3), now)).toEqual({ allowed: false, locked: false, retryAfterSeconds: 1 });
  });
  it('given 4 attempts, when the 5th is let through, then it locks for 15 minutes before its password is checked, then starts afresh', () => {
    const s = startAttempt(failures(4), at(2000));
    expect(s).toMatchObject({ allowed: true, next: { failures: 5, lockedUntil: at(2000 + LOCK_MS) } });
    const locked = endAttempt((s as { next: AttemptRecord }).next, 'wrong', now)!;
    expect(startAttempt(locked, at(62_000))).toEqual({ allowed: false, locked: true, retryAfterSeconds: 840 });
    expect(startAttempt(locked, at(2000 + LOCK_MS))).toMatchObject({ allowed: true, next: { failures: 1, inFlight: 1, lockedUntil: null } });
  });
  it('given failures an hour old, then they are forgotten', () => {
    expect(startAttempt(failures(4), at(3600_001))).toMatchObject({ allowed: true, next: { failures: 1 } });
  });
  it('given a 3rd attempt whose hash took 3 s, when it ends wrong, then the 4th waits 1 s from its end, not from its start', () => {
    const third = startAttempt(failures(2), now) as { next: AttemptRecord };
    const ended = endAttempt(third.next, 'wrong', at(3000))!;
    expect(ended.lastFailureAt).toEqual(at(3000));
    expect(startAttempt(ended, at(3500))).toEqual({ allowed: false, locked: false, retryAfterSeconds: 1 });
    expect(startAttempt(ended, at(4000)).allowed).toBe(true);
  });
  it('given a right password, then the finished failures are cleared and the lock its own attempt set is lifted', () => {
    const fifth = startAttempt(failures(4), at(2000)) as { next: AttemptRecord };
    expect(endAttempt(fifth.next, 'right', now)).toBeNull();
    expect(endAttempt(started(1)!, 'right', now)).toBeNull();
  });
  it('given other attempts in flight, when one has the right password, then those stay counted until they end', () => {
    const three = started(3)!;
    const afterRight = endAttempt(three, 'right', now)!;
    expect(afterRight).toMatchObject({ failures: 2, inFlight: 2 });
    expect(startAttempt(afterRight, now).allowed).toBe(true);
    const afterBoth = endAttempt(endAttempt(afterRight, 'wrong', now)!, 'wrong', now)!;
    expect(afterBoth).toMatchObject({ failures: 2, inFlight: 0 });
  });
  it('given an attempt that never ran its hash (too busy), then it is taken back', () => {
    expect(endAttempt(started(1)!, 'not_run', now)).toBeNull();
    const third = startAttempt(failures(2), now) as { next: AttemptRecord };
    expect(endAttempt(third.next, 'not_run', now)).toMatchObject({ failures: 2, inFlight: 0 });
  });
});

describe('hashing admission', () => {
  it('given room, then a hash is admitted; given the address at its share, or the instance full, then not', () => {
    expect(hashingAdmits({ total: 0, ofAddress: 0 })).toBe(true);
    expect(hashingAdmits({ total: 3, ofAddress: HASHING_PER_ADDRESS - 1 })).toBe(true);
    expect(hashingAdmits({ total: 3, ofAddress: HASHING_PER_ADDRESS })).toBe(false);
    expect(hashingAdmits({ total: HASHING_CONCURRENCY + HASHING_QUEUE - 1, ofAddress: 0 })).toBe(true);
    expect(hashingAdmits({ total: HASHING_CONCURRENCY + HASHING_QUEUE, ofAddress: 0 })).toBe(false);
  });
});
