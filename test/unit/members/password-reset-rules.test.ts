import { describe, expect, it } from 'vitest';
import { decideResetRequest, decideResetUse, PASSWORD_RESET_TTL_MS, PASSWORD_RESETS_PER_HOUR, type PasswordReset } from '../../../services/members/password-reset-rules';

const now = new Date('2030-01-01T12:00:00Z');
const reset = (over: Partial<PasswordReset> = {}): PasswordReset => ({
  memberId: 'mem_1', workspaceId: 'ws_1', expiresAt: new Date(now.getTime() + 60_000), usedAt: null, memberActive: true, ...over,
});

describe('decideResetRequest', () => {
  it('given no recent reset, when a member asks, then a link is sent that expires in an hour', () => {
    expect(decideResetRequest(0, now)).toEqual({ send: true, expiresAt: new Date(now.getTime() + PASSWORD_RESET_TTL_MS) });
  });
  it(`given ${PASSWORD_RESETS_PER_HOUR} resets sent this hour, when one more is asked, then nothing is sent`, () => {
    expect(decideResetRequest(PASSWORD_RESETS_PER_HOUR - 1, now).send).toBe(true);
    expect(decideResetRequest(PASSWORD_RESETS_PER_HOUR, now)).toEqual({ send: false });
  });
});

describe('decideResetUse', () => {
  it('given an unused link within its hour, when followed, then it works', () => {
    expect(decideResetUse(reset(), now)).toEqual({ ok: true, reset: reset() });
  });
  it('given no such link, or a member since removed, when followed, then it is unknown', () => {
    expect(decideResetUse(undefined, now)).toEqual({ ok: false, refusal: 'reset_unknown' });
    expect(decideResetUse(reset({ memberActive: false }), now)).toEqual({ ok: false, refusal: 'reset_unknown' });
  });
  it('given a used link, when followed again, then it is refused as used', () => {
    expect(decideResetUse(reset({ usedAt: now }), now)).toEqual({ ok: false, refusal: 'reset_used' });
  });
  it('given a link at or past its expiry, when followed, then it is refused as expired', () => {
    expect(decideResetUse(reset({ expiresAt: now }), now)).toEqual({ ok: false, refusal: 'reset_expired' });
  });
});
