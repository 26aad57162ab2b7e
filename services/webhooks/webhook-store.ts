import { toStorableExcerpt } from '../../contracts/text';
import type { WebhookEventType } from '../../contracts/webhooks';
import { newWebhookEndpointId } from '../common/ids';
import type { SqlExecutor } from '../eventstore/sql';
import { newWebhookSecret } from './signing';

/** An endpoint as the API shows it (never its secrets). */
export interface WebhookEndpointView {
  id: string;
  url: string;
  event_types: WebhookEventType[];
  description: string | null;
  state: 'active' | 'failing' | 'disabled';
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
}

export interface AttemptView {
  attempt: number;
  started_at: string;
  status: 'succeeded' | 'failed' | 'refused';
  response_status: number | null;
  latency_ms: number;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  endpoint_id: string;
  event_type: WebhookEventType;
  state: 'pending' | 'delivered' | 'failed';
  created_at: string;
  next_attempt_at: string | null;
  payload: { type: WebhookEventType; timestamp: string; data: Record<string, unknown> };
  attempts: AttemptView[];
}

/** Why an endpoint is failing: the delivery it gave up and its last attempt. */
export interface FailingReason {
  delivery_id: string;
  attempts: number;
  last_attempt_at: string | null;
  response_status: number | null;
  error: string | null;
}

interface EndpointRow {
  id: string;
  url: string;
  event_types: WebhookEventType[];
  description: string | null;
  enabled: boolean;
  failing_since: Date | string | null;
  previous_secret_expires_at: Date | string | null;
  previous_valid: boolean;
  created_at: Date | string;
}

const ENDPOINT_COLUMNS = `id, url, event_types, description, enabled, failing_since, created_at,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at,
  coalesce(previous_secret_expires_at > now(), false) AS previous_valid`;

const iso = (v: Date | string) => new Date(v).toISOString();
const isoOrNull = (v: Date | string | null) => (v === null ? null : iso(v));

function endpointView(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types,
    description: row.description,
    state: !row.enabled ? 'disabled' : row.failing_since !== null ? 'failing' : 'active',
    failing_since: isoOrNull(row.failing_since),
    previous_secret_expires_at: isoOrNull(row.previous_secret_expires_at),
    created_at: iso(row.created_at),
  };
}

/**
 * Webhook endpoints, deliveries and attempts in PostgreSQL (migration 013). Every read and write
 * is scoped by the workspace: another workspace's endpoint is no endpoint.
 */
export class WebhookStore {
  constructor(private readonly sql: SqlExecutor) {}

  async create(workspaceId: string, input: { url: string; event_types: WebhookEventType[]; description?: string }): Promise<WebhookEndpointView & { secret: string }> {
    const secret = newWebhookSecret();
    const { rows } = await this.sql.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, workspace_id, url, event_types, description, secret)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6) RETURNING ${ENDPOINT_COLUMNS}`,
      [newWebhookEndpointId(), workspaceId, input.url, JSON.stringify(input.event_types), input.description ?? null, secret],
    );
    return { ...endpointView(rows[0]!), secret };
  }

  async list(workspaceId: string): Promise<WebhookEndpointView[]> {
    const { rows } = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
      [workspaceId],
    );
    return rows.map(endpointView);
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpointView | undefined> {
    const { rows } = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL`,
      [id, workspaceId],
    );
    return rows[0] && endpointView(rows[0]);
  }

  async update(
    workspaceId: string,
    id: string,
    patch: { url?: string; event_types?: WebhookEventType[]; description?: string | null; enabled?: boolean },
  ): Promise<WebhookEndpointView | undefined> {
    const { rows } = await this.sql.query<EndpointRow>(
      `UPDATE webhook_endpoints SET
         url = coalesce($3, url),
         event_types = coalesce($4::jsonb, event_types),
         description = CASE WHEN $5::boolean THEN $6 ELSE description END,
         enabled = coalesce($7, enabled)
       WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
       RETURNING ${ENDPOINT_COLUMNS}`,
      [
        id,
        workspaceId,
        patch.url ?? null,
        patch.event_types ? JSON.stringify(patch.event_types) : null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.enabled ?? null,
      ],
    );
    return rows[0] && endpointView(rows[0]);
  }

  /** Deleted endpoints keep their rows (deliveries refer to them) but receive nothing more. */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.sql.query(
      'UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL',
      [id, workspaceId],
    );
    if (rowCount > 0) await this.sql.query("UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL WHERE endpoint_id = $1 AND state = 'pending'", [id]);
    return rowCount > 0;
  }

  /** A new secret; the current one becomes the previous, still signed with for `overlapMs`. */
  async rotateSecret(workspaceId: string, id: string, overlapMs: number): Promise<(WebhookEndpointView & { secret: string }) | undefined> {
    const secret = newWebhookSecret();
    const { rows } = await this.sql.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret = secret, secret = $3,
              previous_secret_expires_at = now() + $4::bigint * interval '1 millisecond'
        WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
        RETURNING ${ENDPOINT_COLUMNS}`,
      [id, workspaceId, secret, overlapMs],
    );
    return rows[0] && { ...endpointView(rows[0]), secret };
  }

  /** The newest deliveries of an endpoint, each with its attempts. */
  async deliveries(endpointId: string, limit: number, deliveryId?: string): Promise<DeliveryView[]> {
    const { rows } = await this.sql.query<{
      id: string;
      endpoint_id: string;
      event_type: WebhookEventType;
      state: DeliveryView['state'];
      created_at: Date | string;
      next_attempt_at: Date | string | null;
      body: string;
      attempts: { attempt: number; started_at: string; status: AttemptView['status']; response_status: number | null; latency_ms: number; error: string | null }[] | null;
    }>(
      `SELECT d.id, d.endpoint_id, d.event_type, d.state, d.created_at, d.next_attempt_at, d.body,
              (SELECT json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status', a.status,
                        'response_status', a.response_status, 'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
                 FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts
         FROM webhook_deliveries d
        WHERE d.endpoint_id = $1 AND ($3::text IS NULL OR d.id = $3)
        ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
      [endpointId, limit, deliveryId ?? null],
    );
    return rows.map((row) => ({
      id: row.id,
      endpoint_id: row.endpoint_id,
      event_type: row.event_type,
      state: row.state,
      created_at: iso(row.created_at),
      next_attempt_at: isoOrNull(row.next_attempt_at),
      payload: JSON.parse(row.body) as DeliveryView['payload'],
      attempts: (row.attempts ?? []).map((a) => ({ ...a, started_at: iso(a.started_at) })),
    }));
  }

  /**
   * Why each failing endpoint of the workspace fails, by endpoint id: its newest delivery given
   * up (state `failed`), with how many attempts it made and what the last one got.
   */
  async failingReasons(workspaceId: string): Promise<Map<string, FailingReason>> {
    const { rows } = await this.sql.query<{
      endpoint_id: string;
      delivery_id: string;
      attempts: number;
      last_attempt_at: Date | string | null;
      response_status: number | null;
      error: string | null;
    }>(
      `SELECT DISTINCT ON (d.endpoint_id) d.endpoint_id, d.id AS delivery_id,
              (SELECT count(*)::int FROM webhook_attempts c WHERE c.delivery_id = d.id) AS attempts,
              a.started_at AS last_attempt_at, a.response_status, a.error
         FROM webhook_endpoints e
         JOIN webhook_deliveries d ON d.endpoint_id = e.id AND d.state = 'failed'
         LEFT JOIN LATERAL (SELECT started_at, response_status, error FROM webhook_attempts
                             WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT 1) a ON true
        WHERE e.workspace_id = $1 AND e.deleted_at IS NULL AND e.failing_since IS NOT NULL
        ORDER BY d.endpoint_id, a.started_at DESC NULLS LAST, d.created_at DESC`,
      [workspaceId],
    );
    return new Map(
      rows.map((row) => [
        row.endpoint_id,
        { delivery_id: row.delivery_id, attempts: row.attempts, last_attempt_at: isoOrNull(row.last_attempt_at), response_status: row.response_status, error: row.error },
      ]),
    );
  }

  /**
   * Sends a delivery again, with its `webhook-id`, whatever its state: due now, its retry
   * horizon from its next attempt. Undefined when the endpoint has no such delivery.
   */
  async resend(endpointId: string, deliveryId: string): Promise<DeliveryView | undefined> {
    const { rowCount } = await this.sql.query(
      `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now(), first_try_at = NULL
        WHERE id = $1 AND endpoint_id = $2`,
      [deliveryId, endpointId],
    );
    if (rowCount === 0) return undefined;
    return (await this.deliveries(endpointId, 1, deliveryId))[0];
  }
}

const ERROR_MAX_CHARS = 500;

/** An attempt's error text, made storable (it may quote a host name or a socket error). */
export function storableError(error: string | null): string | null {
  return error === null ? null : toStorableExcerpt(error, ERROR_MAX_CHARS);
}
