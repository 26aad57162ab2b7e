import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LimiterUnavailableError, orLimiterUnavailable, REDIS_CALL_TIMEOUT_MS } from '../../../services/limits/limiter-unavailable';

describe('orLimiterUnavailable', () => {
  // For the whole file: the deadlines' one interval starts with the first call and is kept.
  beforeAll(() => vi.useFakeTimers());
  afterAll(() => vi.useRealTimers());

  it('given a Redis call that answers, then its answer', async () => {
    expect(await orLimiterUnavailable('admission', async () => 'OK')).toBe('OK');
  });

  it('given a Redis call that fails, then LimiterUnavailableError naming the operation, the failure as its cause', async () => {
    const failed = await orLimiterUnavailable('admission', () => Promise.reject(new Error('ECONNREFUSED'))).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LimiterUnavailableError);
    expect(failed).toMatchObject({ operation: 'admission', cause: { message: 'ECONNREFUSED' } });
  });

  it('given a Redis call left unanswered (a frozen server), then it fails as LimiterUnavailableError once REDIS_CALL_TIMEOUT_MS has passed, not before', async () => {
    const outcome = orLimiterUnavailable('rate limit take', () => new Promise<never>(() => {})).catch((e: unknown) => e);
    let settled = false;
    void outcome.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(REDIS_CALL_TIMEOUT_MS - 10);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(REDIS_CALL_TIMEOUT_MS / 5);
    expect(await outcome).toMatchObject({ name: 'LimiterUnavailableError', operation: 'rate limit take', cause: { message: 'Command timed out' } });
  });
});
