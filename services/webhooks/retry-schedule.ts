import { backoffDelayMs } from '../common/backoff';

/** How a delivery is retried (WEBHOOK_RETRY_* settings; docs/api.md "Webhooks"). */
export interface RetryPolicy {
  /** The wait after the first failed attempt; each further failure doubles it (with jitter). */
  initialMs: number;
  /** The longest single wait. */
  maxMs: number;
  /** No attempt starts later than this after the first one: then the delivery is given up. */
  horizonMs: number;
}

/**
 * When the next attempt of a delivery is due after `failures` failed attempts, its first tried at
 * `firstTryAt`: exponential backoff with jitter (half fixed, half random), or `give_up` once the
 * next attempt would fall past the horizon.
 */
export function nextAttemptAt(firstTryAt: Date, failures: number, now: Date, policy: RetryPolicy, random: () => number = Math.random): Date | 'give_up' {
  const next = new Date(now.getTime() + backoffDelayMs(failures, { initialMs: policy.initialMs, maxMs: policy.maxMs }, random));
  return next.getTime() - firstTryAt.getTime() > policy.horizonMs ? 'give_up' : next;
}
