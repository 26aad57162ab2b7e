import { newEvent, streams } from '../../contracts/events';
import type { Logger } from '../common/log';
import { startPollLoop, type PollLoop } from '../common/poll-loop';
import type { EventStore } from '../eventstore/event-store';
import { recordWebhookAttempt } from '../metrics/metrics';
import type { AllowedHosts } from './address-policy';
import { postWebhook, type AttemptOutcome } from './outbound';
import { nextAttemptAt, type RetryPolicy } from './retry-schedule';
import { signedHeaders } from './signing';
import { storableError } from './webhook-store';

/** Deliveries one instance claims per pass. */
const CLAIM_BATCH = 20;
/** A claimed delivery whose instance died is due again this long after its request's timeout. */
const LEASE_MARGIN_MS = 30_000;

interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  workspace_id: string;
  body: string;
  attempts: number;
  first_try_at: Date | string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_valid: boolean;
}

/** The WEBHOOK_* settings a worker sends by (services/config/config.ts reads them). */
export interface DeliverySettings {
  allowedHosts: AllowedHosts;
  timeoutMs: number;
  retry: RetryPolicy;
  pollMs: number;
}

export interface DeliveryWorkerOptions {
  settings: DeliverySettings;
  logger: Logger;
  now?: () => Date;
  random?: () => number;
}

/**
 * Sends due webhook deliveries, at least once, from any number of instances: a pass claims due
 * rows with `FOR UPDATE SKIP LOCKED` and moves them past a lease in the same statement, so two
 * instances never hold one delivery at once and a delivery whose instance died is due again once
 * its lease lapses (at least once). Each attempt is recorded; a failure is retried by the retry
 * schedule, and given up past its horizon: then the endpoint is marked failing and the workspace
 * told (WebhookEndpointFailing, keyed by the workspace on Kafka, also a `webhook_endpoint.failing` webhook).
 */
export class WebhookDeliveryWorker {
  private loop: PollLoop | undefined;
  private readonly now: () => Date;
  private readonly random: () => number;

  constructor(
    private readonly store: EventStore,
    private readonly options: DeliveryWorkerOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? Math.random;
  }

  start(): void {
    this.loop = startPollLoop({ pass: () => this.runOnce(), everyMs: this.options.settings.pollMs, logger: this.options.logger, failed: 'webhook delivery pass failed; the next pass retries' });
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** One pass: claim what is due, send each, record each. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    // A batch under one lease is safe here, unlike watches and emails (claim-one-by-one.ts): its
    // attempts run at once, each cut at the timeout the lease is sized by, so none waits its turn.
    const claimed = await this.claim();
    // Settled, not all: one attempt's unexpected throw (its record's transaction, say) neither ends
    // the pass while the others run on unobserved nor hides theirs. Its lease lapses; it is retried.
    const settled = await Promise.allSettled(claimed.map((delivery) => this.attempt(delivery)));
    settled.forEach((result, i) => {
      if (result.status === 'rejected') {
        const delivery = claimed[i]!;
        this.options.logger.warn({ err: result.reason, delivery_id: delivery.id, endpoint_id: delivery.endpoint_id, attempt: delivery.attempts }, 'webhook attempt failed unexpectedly; retried once its lease lapses');
      }
    });
    return claimed.length;
  }

  private async claim(): Promise<ClaimedDelivery[]> {
    const leaseMs = this.options.settings.timeoutMs + LEASE_MARGIN_MS;
    const now = this.now();
    const { rows } = await this.store.sql.query<ClaimedDelivery>(
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.state = 'pending' AND d.next_attempt_at <= $1::timestamptz AND e.enabled AND e.deleted_at IS NULL
          ORDER BY d.next_attempt_at
          LIMIT $2
          FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries d
          SET next_attempt_at = $1::timestamptz + $3::bigint * interval '1 millisecond', attempts = d.attempts + 1,
              first_try_at = coalesce(d.first_try_at, $1::timestamptz)
         FROM due, webhook_endpoints e
        WHERE d.id = due.id AND e.id = d.endpoint_id
        RETURNING d.id, d.endpoint_id, d.workspace_id, d.body, d.attempts, d.first_try_at, e.url, e.secret, e.previous_secret,
                  coalesce(e.previous_secret_expires_at > $1::timestamptz, false) AS previous_valid`,
      [now.toISOString(), CLAIM_BATCH, leaseMs],
    );
    return rows;
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const startedAt = this.now();
    const secrets = delivery.previous_valid && delivery.previous_secret ? [delivery.secret, delivery.previous_secret] : [delivery.secret];
    const outcome = await postWebhook({
      url: delivery.url,
      headers: signedHeaders(secrets, delivery.id, startedAt, delivery.body),
      body: delivery.body,
      timeoutMs: this.options.settings.timeoutMs,
      allowed: this.options.settings.allowedHosts,
    });
    recordWebhookAttempt(outcome.status, outcome.latencyMs / 1000);
    const next = outcome.status === 'succeeded' ? null : nextAttemptAt(new Date(delivery.first_try_at), delivery.attempts, this.now(), this.options.settings.retry, this.random);
    await this.record(delivery, startedAt, outcome, next);
    const fields = { delivery_id: delivery.id, endpoint_id: delivery.endpoint_id, attempt: delivery.attempts, status: outcome.status, response_status: outcome.responseStatus, latency_ms: outcome.latencyMs };
    if (outcome.status === 'succeeded') this.options.logger.info(fields, 'webhook delivered');
    else if (next === 'give_up') this.options.logger.warn({ ...fields, error: outcome.error }, 'webhook delivery given up after the retry horizon; endpoint marked failing');
    else this.options.logger.warn({ ...fields, error: outcome.error, next_attempt_at: next?.toISOString() }, 'webhook attempt failed; retried later');
  }

  /**
   * The attempt and what follows, in one transaction. Conditional on the delivery still being at
   * this attempt: a re-send or another claim after a lapsed lease decides instead.
   */
  private async record(delivery: ClaimedDelivery, startedAt: Date, outcome: AttemptOutcome, next: Date | 'give_up' | null): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.sql.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status, response_status, latency_ms, error)
         VALUES ($1, $2, $3::timestamptz, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [delivery.id, delivery.attempts, startedAt.toISOString(), outcome.status, outcome.responseStatus, outcome.latencyMs, storableError(outcome.error)],
      );
      if (next === null) {
        await tx.sql.query("UPDATE webhook_deliveries SET state = 'delivered', next_attempt_at = NULL WHERE id = $1 AND attempts = $2", [delivery.id, delivery.attempts]);
        await tx.sql.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1', [delivery.endpoint_id]);
        return;
      }
      if (next !== 'give_up') {
        await tx.sql.query("UPDATE webhook_deliveries SET next_attempt_at = $3::timestamptz WHERE id = $1 AND attempts = $2 AND state = 'pending'", [delivery.id, delivery.attempts, next.toISOString()]);
        return;
      }
      const { rowCount } = await tx.sql.query("UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL WHERE id = $1 AND attempts = $2 AND state = 'pending'", [delivery.id, delivery.attempts]);
      if (rowCount === 0) return;
      await tx.sql.query('UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $2::timestamptz) WHERE id = $1', [delivery.endpoint_id, this.now().toISOString()]);
      await tx.append(streams.webhookEndpoint(delivery.endpoint_id), [
        newEvent('WebhookEndpointFailing', {
          workspace_id: delivery.workspace_id,
          endpoint_id: delivery.endpoint_id,
          url: delivery.url,
          delivery_id: delivery.id,
          attempts: delivery.attempts,
          last_error: storableError(outcome.error),
        }),
      ]);
    });
  }
}
