/**
 * Token bucket arithmetic shared by every rate-limiter adapter (the Redis Lua script mirrors it
 * line by line). Capacity = perMinute tokens, refilled continuously and evenly over 60 s.
 *
 * Levels are kept as integers in "token units": one token = 60 000 units and every elapsed
 * millisecond adds `perMinute` units. Integer arithmetic keeps JavaScript and Lua (doubles, exact
 * below 2^53) bit-for-bit identical with no rounding drift.
 */
export const UNITS_PER_TOKEN = 60_000;

export interface BucketState {
  /** Token units in the bucket after the last request. */
  level: number;
  /** Time of the last request, milliseconds. */
  atMs: number;
}

export interface BucketDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  state: BucketState;
  /** Milliseconds until the bucket is full again; past that, a missing bucket means the same. */
  fullInMs: number;
}

export function assertPerMinute(perMinute: number): void {
  if (!Number.isSafeInteger(perMinute) || perMinute < 1 || perMinute > 1_000_000_000) {
    throw new RangeError(`perMinute must be an integer from 1 to 1e9, got ${perMinute}`);
  }
}

/** ceil(a / b) for non-negative integers, exact. */
function ceilDiv(a: number, b: number): number {
  return Math.floor((a + b - 1) / b);
}

/** One request against the bucket at `nowMs`; `previous` undefined means a full bucket. */
export function takeToken(previous: BucketState | undefined, nowMs: number, perMinute: number): BucketDecision {
  return takeTokens(previous, nowMs, perMinute, 1);
}

/**
 * Up to `wanted` tokens at once, as many whole ones as the bucket holds (`granted`): a batch call
 * costs one per item, and the items past the bucket are refused alone. `allowed` when every one
 * was granted; `retryAfterSeconds` then 0, else the wait until one more token is back.
 */
export function takeTokens(previous: BucketState | undefined, nowMs: number, perMinute: number, wanted: number): BucketDecision & { granted: number } {
  assertPerMinute(perMinute);
  assertWanted(wanted);
  const capacity = perMinute * UNITS_PER_TOKEN;
  let level = capacity;
  if (previous) {
    // A clock that stepped backwards refills nothing rather than draining.
    const elapsed = Math.max(0, nowMs - previous.atMs);
    level = Math.min(capacity, previous.level + elapsed * perMinute);
  }
  const granted = Math.min(wanted, Math.floor(level / UNITS_PER_TOKEN));
  level -= granted * UNITS_PER_TOKEN;
  const allowed = granted === wanted;
  const fullInMs = ceilDiv(capacity - level, perMinute);
  return {
    allowed,
    granted,
    limit: perMinute,
    remaining: Math.floor(level / UNITS_PER_TOKEN),
    resetSeconds: ceilDiv(capacity - level, perMinute * 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, ceilDiv(UNITS_PER_TOKEN - level, perMinute * 1000)),
    state: { level, atMs: nowMs },
    fullInMs,
  };
}

/** Tokens asked for at once: 1 to 1000 (a batch's items). */
export function assertWanted(wanted: number): void {
  if (!Number.isSafeInteger(wanted) || wanted < 1 || wanted > 1000) throw new RangeError(`wanted must be an integer from 1 to 1000, got ${wanted}`);
}

/** Whether a stored bucket has refilled completely by `nowMs` (so it can be forgotten). */
export function isFull(state: BucketState, nowMs: number, perMinute: number): boolean {
  return state.level + Math.max(0, nowMs - state.atMs) * perMinute >= perMinute * UNITS_PER_TOKEN;
}
