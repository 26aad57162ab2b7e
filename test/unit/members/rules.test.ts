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
  HASHING_CONCURRENCY,
  HASHING_PER_ADDRESS,
  HASHING_QUEUE,
  hashingAdmits,
  INVITATION_TTL_MS,
  newSecret,
  originAllowed,
  passwordProblem,
  SECRET_PATTERN,
  type ActiveMember,
  type Actor,
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

describe('secrets and CSRF', () => {
  it('are 256-bit URL-safe random strings, all different', () => {
    const secrets = new Set(Array.from({ length: 100 }, newSecret));
    expect(secrets.size).toBe(100);
    for (const s of secrets) expect(s).toMatch(SECRET_PATTERN);
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

describe('hashing admission', () => {
  it('given room, then a hash is admitted; given the address at its share, or the instance full, then not', () => {
    expect(hashingAdmits({ total: 0, ofAddress: 0 })).toBe(true);
    expect(hashingAdmits({ total: 3, ofAddress: HASHING_PER_ADDRESS - 1 })).toBe(true);
    expect(hashingAdmits({ total: 3, ofAddress: HASHING_PER_ADDRESS })).toBe(false);
    expect(hashingAdmits({ total: HASHING_CONCURRENCY + HASHING_QUEUE - 1, ofAddress: 0 })).toBe(true);
    expect(hashingAdmits({ total: HASHING_CONCURRENCY + HASHING_QUEUE, ofAddress: 0 })).toBe(false);
  });
});
