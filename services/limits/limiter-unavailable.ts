import { DeadlineTicker } from '../common/deadline-ticker';

/**
 * Redis, which holds the shared rate limits, concurrency slots and revocation marks, did not
 * answer (down, unreachable, timed out). The HTTP layer answers 503 `service_unavailable` with
 * Retry-After: there is deliberately no in-process fallback, since N instances would then each
 * grant a key's full rate and workspace's full concurrency, and a revoked key could be served.
 */
export class LimiterUnavailableError extends Error {
  constructor(
    /** What was being done, e.g. `rate limit take`. */
    readonly operation: string,
    cause: unknown,
  ) {
    // The cause's own message follows in logs (pino appends the causes' messages).
    super(`${operation}: Redis did not answer`, { cause });
    this.name = 'LimiterUnavailableError';
  }
}

/**
 * The longest a Redis call may go unanswered: a connection that stops answering without closing
 * (lost packets, no RST) still fails the call. Kept here for every call, not by ioredis'
 * `commandTimeout`, a timer per command (DeadlineTicker says why).
 */
export const REDIS_CALL_TIMEOUT_MS = 2_000;

const unanswered = new DeadlineTicker<(err: Error) => void>(REDIS_CALL_TIMEOUT_MS, (fail) => fail(new Error('Command timed out')));

/** Runs one Redis call; any failure of it, or no answer within REDIS_CALL_TIMEOUT_MS, becomes a LimiterUnavailableError. */
export async function orLimiterUnavailable<T>(operation: string, redisCall: () => Promise<T>): Promise<T> {
  try {
    return await new Promise<T>((resolve, reject) => {
      unanswered.begin(reject);
      redisCall().then(
        (value) => {
          unanswered.end(reject);
          resolve(value);
        },
        (err: unknown) => {
          unanswered.end(reject);
          reject(err);
        },
      );
    });
  } catch (err) {
    throw new LimiterUnavailableError(operation, err);
  }
}
