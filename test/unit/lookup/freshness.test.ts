import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ageSeconds, cacheDecision } from '../../../services/lookup/freshness';

const NOW = new Date('2025-06-01T12:00:00.000Z');
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);
const THIRTY_DAYS = 2_592_000;

describe('cacheDecision', () => {
  it('given nothing cached, when any max_age is asked, then it is a MISS', () => {
    for (const maxAge of [0, 1, THIRTY_DAYS, 315_360_000]) {
      expect(cacheDecision(undefined, maxAge, NOW)).toBe('MISS');
    }
  });

  it('given a copy younger than max_age, when looked up, then it is a HIT', () => {
    expect(cacheDecision({ fetchedAt: secondsAgo(60) }, 3600, NOW)).toBe('HIT');
  });

  it('given a copy exactly max_age old, when looked up, then it is still a HIT (age <= max_age)', () => {
    expect(cacheDecision({ fetchedAt: secondsAgo(3600) }, 3600, NOW)).toBe('HIT');
  });

  it('given a copy one second older than max_age, when looked up, then it is a REFRESH', () => {
    expect(cacheDecision({ fetchedAt: secondsAgo(3601) }, 3600, NOW)).toBe('REFRESH');
  });

  it('given a copy fetched this very instant, when max_age is 0, then it is fetched live: REFRESH', () => {
    expect(cacheDecision({ fetchedAt: NOW }, 0, NOW)).toBe('REFRESH');
  });

  it('given the default max_age of 30 days, when the copy is 29 days old, then it is a HIT; at 31 days a REFRESH', () => {
    expect(cacheDecision({ fetchedAt: secondsAgo(29 * 86400) }, THIRTY_DAYS, NOW)).toBe('HIT');
    expect(cacheDecision({ fetchedAt: secondsAgo(31 * 86400) }, THIRTY_DAYS, NOW)).toBe('REFRESH');
  });

  it('given a copy stamped slightly in the future (clock skew), when looked up, then its age counts as 0: HIT', () => {
    expect(cacheDecision({ fetchedAt: new Date(NOW.getTime() + 5000) }, 10, NOW)).toBe('HIT');
  });

  it('property: HIT exactly when cached, max_age > 0 and whole-second age <= max_age', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400_000_000 }), fc.integer({ min: 0, max: 315_360_000 }), (ageMs, maxAge) => {
        const decision = cacheDecision({ fetchedAt: new Date(NOW.getTime() - ageMs) }, maxAge, NOW);
        const expected = maxAge > 0 && Math.floor(ageMs / 1000) <= maxAge ? 'HIT' : 'REFRESH';
        expect(decision).toBe(expected);
      }),
    );
  });
});

describe('ageSeconds', () => {
  it('given a fetch 90.9 seconds ago, then the age is 90 whole seconds', () => {
    expect(ageSeconds(new Date(NOW.getTime() - 90_900), NOW)).toBe(90);
  });

  it('given a fetch this instant, then the age is 0', () => {
    expect(ageSeconds(NOW, NOW)).toBe(0);
  });

  it('given a fetch stamped in the future, then the age is 0, never negative', () => {
    expect(ageSeconds(new Date(NOW.getTime() + 10_000), NOW)).toBe(0);
  });
});
