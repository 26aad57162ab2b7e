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

/** Runs one Redis call; any failure of it becomes a LimiterUnavailableError. */
export async function orLimiterUnavailable<T>(operation: string, redisCall: () => Promise<T>): Promise<T> {
  try {
    return await redisCall();
  } catch (err) {
    throw new LimiterUnavailableError(operation, err);
  }
}
