import { backoffDelayMs } from '../common/backoff';

/**
 * When a failed send is tried again: exponential backoff with jitter from 30 s, capped at an hour,
 * for 24 attempts (about a day); after that the message is given up (logged and counted).
 */
export const MAX_SEND_ATTEMPTS = 24;
const BACKOFF = { initialMs: 30_000, maxMs: 3600_000 };

export type AfterFailure = { kind: 'retry'; at: Date } | { kind: 'give_up' };

/** Given the attempts made so far (this one included), when the last one failed at `now`. */
export function afterFailedSend(attempts: number, now: Date, random: () => number = Math.random): AfterFailure {
  if (attempts >= MAX_SEND_ATTEMPTS) return { kind: 'give_up' };
  return { kind: 'retry', at: new Date(now.getTime() + backoffDelayMs(attempts, BACKOFF, random)) };
}
