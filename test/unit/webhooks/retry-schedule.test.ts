import { describe, expect, it } from 'vitest';
import { nextAttemptAt, type RetryPolicy } from '../../../services/webhooks/retry-schedule';

const HOUR = 3_600_000;
const policy: RetryPolicy = { initialMs: 5_000, maxMs: HOUR, horizonMs: 24 * HOUR };
const first = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(first.getTime() + ms);

describe('webhook retry schedule', () => {
  it('given one failure, when the jitter is lowest, then the next attempt is half the initial wait later', () => {
    expect(nextAttemptAt(first, 1, first, policy, () => 0)).toEqual(at(2_500));
  });

  it('given more failures, then the waits double up to the cap, jitter within [half, whole]', () => {
    const waits = [1, 2, 3, 4, 15].map((failures) => (nextAttemptAt(first, failures, first, policy, () => 1) as Date).getTime() - first.getTime());
    expect(waits).toEqual([5_000, 10_000, 20_000, 40_000, HOUR]);
    const jittered = (nextAttemptAt(first, 3, first, policy, () => 0.5) as Date).getTime() - first.getTime();
    expect(jittered).toBe(15_000);
  });

  it('given an attempt that would start past the 24 h horizon, then the delivery is given up', () => {
    expect(nextAttemptAt(first, 20, at(23.5 * HOUR), policy, () => 1)).toBe('give_up');
    expect(nextAttemptAt(first, 20, at(22 * HOUR), policy, () => 1)).toEqual(at(23 * HOUR));
  });

  it('given any number of failures, then the next attempt is never before now nor past the horizon', () => {
    for (let failures = 1; failures < 40; failures++) {
      const now = at(failures * HOUR * 0.6);
      const next = nextAttemptAt(first, failures, now, policy, Math.random);
      if (next === 'give_up') continue;
      expect(next.getTime()).toBeGreaterThanOrEqual(now.getTime());
      expect(next.getTime() - first.getTime()).toBeLessThanOrEqual(policy.horizonMs);
    }
  });
});
