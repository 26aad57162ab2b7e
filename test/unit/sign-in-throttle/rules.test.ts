import { describe, expect, it } from 'vitest';
import { endAttempt, LOCK_MS, startAttempt, type AttemptRecord } from '../../../services/sign-in-throttle/rules';

const now = new Date('2025-06-01T12:00:00Z');
const at = (ms: number) => new Date(now.getTime() + ms);

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
