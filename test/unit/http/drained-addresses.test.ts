import { describe, expect, it } from 'vitest';
import { DrainedAddresses } from '../../../services/http/admission/drained-addresses';
import type { RateDecision } from '../../../services/limits/rate-limiter';

const allowed = (remaining: number): RateDecision => ({ allowed: true, limit: 120, remaining, resetSeconds: 30, retryAfterSeconds: 0 });
const refused = (resetSeconds = 60, retryAfterSeconds = 1): RateDecision => ({ allowed: false, limit: 120, remaining: 0, resetSeconds, retryAfterSeconds });

function clocked() {
  let now = 1_000_000;
  const drained = new DrainedAddresses({ now: () => now, maxEntries: 3 });
  return { drained, advance: (ms: number) => (now += ms) };
}

describe('addresses whose per-IP bucket ran dry', () => {
  it('given only allowed takes, then the address is not listed', () => {
    const { drained } = clocked();
    drained.noteTake('10.0.0.1', allowed(5));
    drained.noteTake('10.0.0.1', allowed(0));
    expect(drained.has('10.0.0.1')).toBe(false);
  });

  it('given a refused take, then the address is listed until its bucket would be full again', () => {
    const { drained, advance } = clocked();
    drained.noteTake('10.0.0.1', refused(60));
    expect(drained.has('10.0.0.1')).toBe(true);
    expect(drained.has('10.0.0.2')).toBe(false);
    advance(59_999);
    expect(drained.has('10.0.0.1')).toBe(true);
    advance(1);
    expect(drained.has('10.0.0.1')).toBe(false);
  });

  it('given a listed address, when a take is allowed at its last token, then it stays listed', () => {
    const { drained } = clocked();
    drained.noteTake('10.0.0.1', refused());
    drained.noteTake('10.0.0.1', allowed(0));
    expect(drained.has('10.0.0.1')).toBe(true);
  });

  it('given a listed address, when a take leaves tokens to spare, then it is no longer listed', () => {
    const { drained } = clocked();
    drained.noteTake('10.0.0.1', refused());
    drained.noteTake('10.0.0.1', allowed(1));
    expect(drained.has('10.0.0.1')).toBe(false);
  });

  it('given a refusal with reset 0, then the address is still listed for at least a second', () => {
    const { drained, advance } = clocked();
    drained.noteTake('10.0.0.1', refused(0, 0));
    advance(999);
    expect(drained.has('10.0.0.1')).toBe(true);
  });

  it('given more drained addresses than it holds, then it starts over rather than grow', () => {
    const { drained } = clocked();
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) drained.noteTake(a, refused());
    drained.noteTake('10.0.0.4', refused());
    expect(['10.0.0.1', '10.0.0.2', '10.0.0.3'].some((a) => drained.has(a))).toBe(false);
    expect(drained.has('10.0.0.4')).toBe(true);
  });
});
