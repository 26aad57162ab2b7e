import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineTicker } from '../../../services/common/deadline-ticker';

describe('DeadlineTicker', () => {
  let ticker: DeadlineTicker<string>;
  let expired: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    expired = [];
    // A bound of 1 s: ticks of 50 ms.
    ticker = new DeadlineTicker<string>(1_000, (key) => expired.push(key));
  });
  afterEach(() => {
    ticker.stop();
    vi.useRealTimers();
  });

  it('given a call begun just before a tick, when it goes unanswered, then it expires once, past the bound and within two ticks of it', async () => {
    ticker.begin('first'); // starts the ticking at 0
    await vi.advanceTimersByTimeAsync(49);
    ticker.begin('late'); // counted from the tick that began at 0, one ms before the next
    await vi.advanceTimersByTimeAsync(999);
    // 'late' has waited 999 ms, 'first' 1,048 ms: within the bound's two ticks, so either may go on.
    expect(expired).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(expired).toEqual(['first', 'late']);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(expired).toEqual(['first', 'late']);
  });

  it('given calls that end within the bound, then none expires', async () => {
    for (const key of ['a', 'b', 'c']) {
      ticker.begin(key);
      await vi.advanceTimersByTimeAsync(950);
      ticker.end(key);
    }
    await vi.advanceTimersByTimeAsync(5_000);
    expect(expired).toEqual([]);
  });

  it('given a call ended after it expired, then nothing else happens', async () => {
    ticker.begin('slow');
    await vi.advanceTimersByTimeAsync(1_200);
    ticker.end('slow');
    ticker.end('slow');
    expect(expired).toEqual(['slow']);
  });
});
