import type { SqlExecutor } from '../eventstore/sql';
import { readCheckpoint } from '../eventstore/subscription';
import type { EventStore } from '../eventstore/event-store';

/**
 * Readiness (GET /v1/health/ready): can this instance do its work now? Liveness (GET /v1/health)
 * stays a cheap "the process answers"; a load balancer takes an instance out of rotation on a
 * failing readiness, an orchestrator restarts one on a failing liveness.
 */
export interface CheckResult {
  ok: boolean;
  /** Why it failed, for the operator reading the answer. */
  message?: string;
  /** For a lag check: events behind the head of the log. */
  lagEvents?: number;
}

export interface ReadinessCheck {
  /** The key in the answer's `checks`: database, redis, usage_projection, relay. */
  readonly name: string;
  run(): Promise<CheckResult>;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | 'fail'>;
  lagEvents: Record<string, number>;
  failures: { check: string; message: string }[];
}

/** A check with no answer by then fails: a probe must not hang on a dependency that does. */
const CHECK_TIMEOUT_MS = 2_000;
/** Counting events behind stops here: past any sensible bound, and the count stays cheap. */
export const LAG_COUNT_CAP = 1_000_000;

/** Every check at once; each failure named with its reason. */
export async function runReadiness(checks: readonly ReadinessCheck[], timeoutMs = CHECK_TIMEOUT_MS): Promise<Readiness> {
  const results = await Promise.all(checks.map((check) => withTimeout(check, timeoutMs)));
  const readiness: Readiness = { ready: true, checks: {}, lagEvents: {}, failures: [] };
  for (const [i, check] of checks.entries()) {
    const result = results[i]!;
    readiness.checks[check.name] = result.ok ? 'ok' : 'fail';
    if (result.lagEvents !== undefined) readiness.lagEvents[check.name] = result.lagEvents;
    if (!result.ok) {
      readiness.ready = false;
      readiness.failures.push({ check: check.name, message: result.message ?? 'failed' });
    }
  }
  return readiness;
}

async function withTimeout(check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, message: `no answer within ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    return await Promise.race([
      check.run().catch((err: unknown): CheckResult => ({ ok: false, message: err instanceof Error ? err.message : String(err) })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database answers and takes writes: not a standby, not read-only (default_transaction_read_only). */
export function databaseWritable(sql: SqlExecutor): ReadinessCheck {
  return {
    name: 'database',
    async run() {
      const { rows } = await sql.query<{ in_recovery: boolean; read_only: string }>(
        "SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only",
      );
      const row = rows[0];
      if (row?.in_recovery) return { ok: false, message: 'the database is a standby in recovery: read-only' };
      if (row?.read_only !== 'off') return { ok: false, message: 'the database is read-only (transaction_read_only = on)' };
      return { ok: true };
    },
  };
}

/** Redis answers PING (only when REDIS_URL is set: limits live there and nowhere else). */
export function redisReachable(ping: () => Promise<unknown>): ReadinessCheck {
  return {
    name: 'redis',
    async run() {
      await ping();
      return { ok: true };
    },
  };
}

/** A checkpointed subscription is at most `maxEvents` behind the head of the log. */
export function lagWithin(name: string, eventsBehind: () => Promise<number>, maxEvents: number): ReadinessCheck {
  return {
    name,
    async run() {
      const lagEvents = await eventsBehind();
      if (lagEvents > maxEvents) return { ok: false, lagEvents, message: `${lagEvents} events behind the log, more than READY_MAX_LAG_EVENTS (${maxEvents})` };
      return { ok: true, lagEvents };
    },
  };
}

/**
 * Events committed after the subscription's checkpoint, counted up to LAG_COUNT_CAP. Like the
 * subscription's own reading, only events older than every transaction still running count:
 * one a batch could not yet take is not lag.
 */
export async function eventsBehind(store: EventStore, subscription: string): Promise<number> {
  const checkpoint = await readCheckpoint(store, subscription);
  const { rows } = await store.sql.query<{ behind: number }>(
    `SELECT count(*)::int AS behind FROM (
       SELECT 1 FROM events
        WHERE (events.transaction_id, events.position) > ($1::xid8, $2::bigint)
          AND events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        LIMIT $3) AS pending`,
    [checkpoint.transactionId, checkpoint.position, LAG_COUNT_CAP],
  );
  return Number(rows[0]?.behind ?? 0);
}
