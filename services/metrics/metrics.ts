import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { WatchDeletedReason } from '../../contracts/events';

/**
 * The Prometheus metrics of the process (GET /metrics, METRICS_PORT). One registry per process:
 * the call sites are one line each and need nothing handed to them. Names are the contract of
 * the Grafana dashboard (infra/grafana/lookup-api.json; a unit test checks every name it uses).
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });
// Gauges named like counters (`promtool check metrics` refuses them); the same figures stay
// exported per type as nodejs_active_{handles,requests,resources} (sum them for the total).
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);

const PREFIX = 'lookup_api_';
/** Seconds, from a cache hit (a few ms) to a live fetch at SOURCE_TIMEOUT_MS. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequestDuration = new Histogram({
  name: `${PREFIX}http_request_duration_seconds`,
  help: 'HTTP requests by route pattern (unmatched: no route), method and status, in seconds',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** The refusals that protect the service: load shedding, rate limits, concurrency slots. */
const REFUSALS = { no_capacity: 'shed', rate_limited: 'rate_limited', concurrency_limited: 'concurrency_limited' } as const;
export const requestsRefused = new Counter({
  name: `${PREFIX}requests_refused_total`,
  help: 'Requests refused before any work: shed (no_capacity), rate_limited, concurrency_limited',
  labelNames: ['reason'] as const,
  registers: [registry],
});

/** The console's password checks (sign-in, a password change's current password) by how they ended. */
export const emailsSent = new Counter({
  name: `${PREFIX}emails_total`,
  help: 'Emails of the outbox by kind (invitation, password_reset, balance_low) and outcome (sent; retry: an attempt failed, tried again later; given_up)',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});

export const emailsPurged = new Counter({
  name: `${PREFIX}emails_purged_total`,
  help: 'Sent and given-up emails deleted from the outbox table past their retention (EMAIL_OUTBOX_RETENTION_MS)',
  registers: [registry],
});

export const consolePasswordChecks = new Counter({
  name: `${PREFIX}console_password_checks_total`,
  help: 'Console password checks: check (sign_in, password) and outcome (right, wrong; slowed, locked: refused by the throttle; busy: refused by the hashing queue)',
  labelNames: ['check', 'outcome'] as const,
  registers: [registry],
});

export const lookupsCompleted = new Counter({
  name: `${PREFIX}lookups_total`,
  help: 'Lookups recorded by this instance (LookupCompleted events), by operation, cache status (NONE: not served) and outcome (success, not_found or the error code)',
  labelNames: ['operation', 'cache_status', 'outcome'] as const,
  registers: [registry],
});

export const batchItems = new Counter({
  name: `${PREFIX}batch_items_total`,
  help: 'Items of POST /v1/batch answered by this instance, by operation and the status its single call would have had',
  labelNames: ['operation', 'status'] as const,
  registers: [registry],
});

export const testKeyLookups = new Counter({
  name: `${PREFIX}test_key_lookups_total`,
  help: 'Test keys\' lookups recorded by this instance (LookupCompleted events with mode test: sandbox answers, never charged), by operation and outcome; they are not in lookups_total',
  labelNames: ['operation', 'outcome'] as const,
  registers: [registry],
});

export const creditsCharged = new Counter({
  name: `${PREFIX}credits_charged_total`,
  help: 'Credits charged by this instance (LookupCharged events), by operation',
  labelNames: ['operation'] as const,
  registers: [registry],
});

export const creditsRefunded = new Counter({
  name: `${PREFIX}credits_refunded_total`,
  help: 'Credits refunded by this instance (LookupRefunded events), by operation',
  labelNames: ['operation'] as const,
  registers: [registry],
});

export const failuresAfterCharge = new Counter({
  name: `${PREFIX}lookup_failures_after_charge_total`,
  help: 'Charged lookups that failed on the service\'s side (no outage), by operation and refund: in_answer (refunded before the answer) or failed (left to the sweeper)',
  labelNames: ['operation', 'refund'] as const,
  registers: [registry],
});

export const liveFetchDuration = new Histogram({
  name: `${PREFIX}live_fetch_duration_seconds`,
  help: 'Live fetches from the source, by call and result (found, not_found, unresolvable_id, failure), in seconds',
  labelNames: ['call', 'result'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const liveFetchFailures = new Counter({
  name: `${PREFIX}live_fetch_failures_total`,
  help: 'Live fetches that failed, by error code (timeout, upstream_error, parse_error, blocked, source_rate_limited, internal_error)',
  labelNames: ['code'] as const,
  registers: [registry],
});

export const writerBatchSize = new Histogram({
  name: `${PREFIX}writer_batch_size`,
  help: 'Jobs per group commit of the batching writer',
  buckets: [1, 2, 4, 8, 16, 32, 64],
  registers: [registry],
});

export const writerCommitDuration = new Histogram({
  name: `${PREFIX}writer_commit_duration_seconds`,
  help: 'Group commits of the batching writer, from BEGIN to COMMIT, in seconds',
  labelNames: ['result'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [registry],
});

export const writerQueueDepth = new Gauge({
  name: `${PREFIX}writer_queue_depth`,
  help: 'Jobs waiting for the next group commit',
  registers: [registry],
});

export const chargesFoldedFromEvents = new Counter({
  name: `${PREFIX}writer_charges_folded_from_events_total`,
  help: 'Charges with no charges row (settled in their own transaction: cache hits) whose state a refund or void decision read from their events',
  registers: [registry],
});

export const writerOptimisticBatches = new Counter({
  name: `${PREFIX}writer_optimistic_batches_total`,
  help: 'Group commits decided from the workspace rows the writer last committed, in one round trip; result: committed, or moved (a row had changed: decided again from the locked rows)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const idempotencyBatchSize = new Histogram({
  name: `${PREFIX}idempotency_batch_size`,
  help: 'Calls per group-committed statement of the Idempotency-Key store (claim, complete)',
  labelNames: ['statement'] as const,
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  registers: [registry],
});

/** Read at scrape time from every source registered by a running server (registerLagSource). */
const lagSources = new Map<string, () => Promise<number>>();
// Registered, and read only through the registry.
new Gauge({
  name: `${PREFIX}subscription_lag_events`,
  help: 'Events committed to the log and not yet processed, per subscription (usage projection, Kafka relay)',
  labelNames: ['subscription'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    await Promise.all(
      [...lagSources].map(async ([subscription, read]) => {
        // A database away leaves the gauge out of this scrape rather than failing the scrape; the
        // error itself was counted where the query failed (services/eventstore/sql-pg.ts).
        const lag = await read().catch(() => undefined);
        if (lag !== undefined) this.set({ subscription }, lag);
      }),
    );
  },
});

/** Read at scrape time from every key authenticator of the process (registerKeySetSize). */
const keySetSizes = new Set<() => number>();
// Registered, and read only through the registry.
new Gauge({
  name: `${PREFIX}key_set_size`,
  help: 'Key fingerprints this instance holds to refuse unknown API keys without a database read',
  registers: [registry],
  collect() {
    let total = 0;
    for (const read of keySetSizes) total += read();
    this.set(total);
  },
});

export const keySetMisses = new Counter({
  name: `${PREFIX}key_set_misses_total`,
  help: 'API keys not in the key set and not cached, by outcome: unknown (refused without a database read), created_meanwhile (in the set once the barrier came back), unsure (set being rebuilt or barrier lost: checked in the database)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const keySetBarriers = new Counter({
  name: `${PREFIX}key_set_barriers_total`,
  help: 'NOTIFY round trips sent to make sure the key set holds every key committed so far (shared by the misses waiting on them)',
  registers: [registry],
});

export const keySetRebuilds = new Counter({
  name: `${PREFIX}key_set_rebuilds_total`,
  help: 'Loads of the key set from the database, by result (at start and after each lost LISTEN connection)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const relayPublishErrors = new Counter({
  name: `${PREFIX}relay_publish_errors_total`,
  help: 'Failed attempts of the Kafka relay to publish a batch',
  registers: [registry],
});

export const databaseErrors = new Counter({
  name: `${PREFIX}database_errors_total`,
  help: 'Database errors, by SQLSTATE or `unavailable` (unreachable, connection lost)',
  labelNames: ['code'] as const,
  registers: [registry],
});

const statementTimeouts = new Counter({
  name: `${PREFIX}database_statement_timeouts_total`,
  help: 'Statements left unanswered past DATABASE_QUERY_TIMEOUT_MS: their connections were closed (a frozen or cut-off database)',
  registers: [registry],
});

export const databaseHostSearches = new Counter({
  name: `${PREFIX}database_host_searches_total`,
  help: 'Searches for the database host to use (DATABASE_URL host list): same (the host before), moved (another one), none (no host fit)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const redisErrors = new Counter({
  name: `${PREFIX}redis_errors_total`,
  help: 'Errors of the Redis connection (each failed connect or lost connection)',
  registers: [registry],
});

export const admissionSlots = new Counter({
  name: `${PREFIX}admission_slots_total`,
  help: 'Concurrency slots asked for in the admission script of a single lookup: granted there, or none free (asked again before the lookup)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const slotReleaseBatchSize = new Histogram({
  name: `${PREFIX}slot_release_batch_size`,
  help: 'Concurrency slots released by one ZREM (the releases of one event-loop turn, per workspace)',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  registers: [registry],
});

export const revocationMarksRestored = new Counter({
  name: `${PREFIX}revocation_marks_restored_total`,
  help: 'Revocation marks written back to Redis from the database on (re)connecting to it',
  registers: [registry],
});

export const auditsRunning = new Gauge({
  name: `${PREFIX}audits_running`,
  help: 'Audits of the whole log running on this instance (POST /admin/v1/audit and audit jobs)',
  registers: [registry],
});

export const auditDuration = new Histogram({
  name: `${PREFIX}audit_duration_seconds`,
  help: 'Audits of the whole log by outcome (ok, mismatches, failed), in seconds',
  labelNames: ['outcome'] as const,
  buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800],
  registers: [registry],
});
// Every outcome exported from the start, at 0: an alert on increase() then sees the first failure too.
for (const outcome of ['ok', 'mismatches', 'failed'] as const) auditDuration.zero({ outcome });

export const auditEventsPerSecond = new Gauge({
  name: `${PREFIX}audit_events_per_second`,
  help: 'Events per second of the last audit that finished on this instance (events read over its whole duration)',
  registers: [registry],
});

export const auditJobsAbandoned = new Counter({
  name: `${PREFIX}audit_jobs_abandoned_total`,
  help: 'Audit jobs this instance found dead (their instance wrote no heartbeat for AUDIT_HEARTBEAT_TIMEOUT_MS) and failed',
  registers: [registry],
});

export const auditJobHeartbeatFailures = new Counter({
  name: `${PREFIX}audit_job_heartbeat_failures_total`,
  help: 'Heartbeats of this instance\'s running audit job that could not be written (the database away)',
  registers: [registry],
});

export const webhookAttempts = new Histogram({
  name: `${PREFIX}webhook_attempt_duration_seconds`,
  help: 'Webhook delivery attempts of this instance by status (succeeded, failed, refused by the address policy), until the answer\'s headers',
  labelNames: ['status'],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const watchRefreshes = new Counter({
  name: `${PREFIX}watch_refreshes_total`,
  help: 'Watch refreshes run by this instance, by outcome (unchanged, changed, failed, paused)',
  labelNames: ['outcome'],
  registers: [registry],
});

export const watchesDeleted = new Counter({
  name: `${PREFIX}watches_deleted_total`,
  help: 'Watches deleted, by reason (watch_deleted: its own DELETE; webhook_endpoint_deleted: with the endpoint it delivered to)',
  labelNames: ['reason'],
  registers: [registry],
});

// ---------------------------------------------------------------- the call sites' functions

export function recordWebhookAttempt(status: 'succeeded' | 'failed' | 'refused', seconds: number): void {
  webhookAttempts.observe({ status }, seconds);
}

export function recordWatchesDeleted(reason: WatchDeletedReason, count: number): void {
  if (count > 0) watchesDeleted.inc({ reason }, count);
}

export function recordWatchRefresh(outcome: 'unchanged' | 'changed' | 'failed' | 'paused'): void {
  watchRefreshes.inc({ outcome });
}

/** One HTTP answer: its route pattern (null: no route matched), method, status and duration. */
export function recordHttpRequest(method: string, route: string | undefined, status: number, seconds: number, errorCode?: string): void {
  httpRequestDuration.observe({ method, route: route ?? 'unmatched', status: String(status) }, seconds);
  const refusal = errorCode === undefined ? undefined : REFUSALS[errorCode as keyof typeof REFUSALS];
  if (refusal) requestsRefused.inc({ reason: refusal });
}

/** The `outcome` label of a completed lookup: success, not_found, or the error's code. */
function lookupOutcomeLabel(completed: { outcome?: string; error_code?: string | null }): string {
  return completed.outcome === 'error' ? (completed.error_code ?? 'error') : (completed.outcome ?? 'unknown');
}

/**
 * Events this instance committed: the lookups and the money, counted from the log itself (so
 * they match the ledger to the credit, refunds by the sweeper and the retrier included).
 */
export function recordCommittedEvents(events: readonly { type: string; data: unknown }[]): void {
  for (const event of events) {
    const data = event.data as { operation?: string; credits?: number; cache_status?: string | null; outcome?: string; error_code?: string | null; mode?: string };
    if (data.mode === 'test') {
      // Kept apart: the live figures (and the alerts on them) count live calls only.
      if (event.type === 'LookupCompleted') testKeyLookups.inc({ operation: data.operation, outcome: lookupOutcomeLabel(data) });
    } else if (event.type === 'LookupCharged') creditsCharged.inc({ operation: data.operation }, data.credits ?? 0);
    else if (event.type === 'LookupRefunded') creditsRefunded.inc({ operation: data.operation }, data.credits ?? 0);
    else if (event.type === 'LookupCompleted') {
      lookupsCompleted.inc({ operation: data.operation, cache_status: data.cache_status ?? 'NONE', outcome: lookupOutcomeLabel(data) });
    }
  }
}

/** One item of a batch call answered. */
export function recordBatchItem(operation: string, status: number): void {
  batchItems.inc({ operation, status: String(status) });
}

/** A charged lookup failed after its charge for a reason other than an outage. */
export function recordFailureAfterCharge(operation: string, refund: 'in_answer' | 'failed'): void {
  failuresAfterCharge.inc({ operation, refund });
}

/** One live fetch; `failureCode` set when it failed. */
export function recordLiveFetch(call: string, result: string, seconds: number, failureCode?: string): void {
  liveFetchDuration.observe({ call, result }, seconds);
  if (failureCode !== undefined) liveFetchFailures.inc({ code: failureCode });
}

/** A group commit of `size` jobs starts, `stillQueued` left waiting: returns the timing of its transaction. */
export function startWriterBatch(size: number, stillQueued: number): <T>(commit: Promise<T>) => Promise<T> {
  writerBatchSize.observe(size);
  writerQueueDepth.set(stillQueued);
  const end = writerCommitDuration.startTimer();
  return (commit) =>
    commit.then(
      (value) => {
        end({ result: 'committed' });
        return value;
      },
      (err: unknown) => {
        end({ result: 'failed' });
        throw err;
      },
    );
}

/** An audit starts: returns its end, given its report (null: it failed or was stopped). */
export function startAuditMetrics(): (report: { ok: boolean; events: number } | null) => void {
  auditsRunning.inc();
  const started = performance.now();
  return (report) => {
    auditsRunning.dec();
    const seconds = (performance.now() - started) / 1000;
    auditDuration.observe({ outcome: report === null ? 'failed' : report.ok ? 'ok' : 'mismatches' }, seconds);
    if (report !== null && seconds > 0) auditEventsPerSecond.set(Math.round(report.events / seconds));
  };
}

/** The lag of a subscription, read at each scrape; returns the unregistering. */
export function registerLagSource(subscription: string, eventsBehind: () => Promise<number>): () => void {
  lagSources.set(subscription, eventsBehind);
  return () => {
    if (lagSources.get(subscription) === eventsBehind) lagSources.delete(subscription);
  };
}

/** The size of a key set, read at each scrape; returns the unregistering. */
export function registerKeySetSize(size: () => number): () => void {
  keySetSizes.add(size);
  return () => void keySetSizes.delete(size);
}

/** `code`: an SQLSTATE, `unavailable` or `other` (services/eventstore/sql-pg.ts classifies). */
export function recordDatabaseError(code: string): void {
  databaseErrors.inc({ code });
}

export function recordStatementTimeout(): void {
  statementTimeouts.inc();
}

export function recordDatabaseHostSearch(outcome: 'same' | 'moved' | 'none'): void {
  databaseHostSearches.inc({ outcome });
}

export function recordRedisError(): void {
  redisErrors.inc();
}

export function recordAdmissionSlot(outcome: 'granted' | 'none_free'): void {
  admissionSlots.inc({ outcome });
}

export function recordSlotReleaseBatch(size: number): void {
  slotReleaseBatchSize.observe(size);
}

export function recordRevocationMarksRestored(count: number): void {
  revocationMarksRestored.inc(count);
}

export function recordRelayPublishError(): void {
  relayPublishErrors.inc();
}

/** The text exposition of every metric, and its content type. */
export async function scrape(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
