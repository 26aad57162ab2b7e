import { WITHHELD_FIELDS, eventId } from '../../contracts/jsonschema';
import type { EventType } from '../../contracts/events';
import { WEBHOOK_SOURCE_EVENTS, webhookTypesOf, type WebhookEventType } from '../../contracts/webhooks';
import { newWebhookMessageId } from '../common/ids';
import type { TransactionExecutor } from '../eventstore/sql';
import type { SubscriptionHandler } from '../eventstore/subscription';
import type { RecordedEvent } from '../eventstore/types';

export const WEBHOOK_DISPATCH_SUBSCRIPTION = 'webhook-dispatch';

/**
 * Turns events of the log into webhook deliveries (contracts/webhooks.ts WEBHOOK_EVENT_TYPES): one
 * per endpoint of the event's workspace subscribed to its type, only to `webhook_endpoint_id` when
 * the event names one, never to `endpoint_id` (the endpoint the event is about). A checkpointed
 * subscription: the deliveries and the checkpoint commit together, and the unique
 * (endpoint, event) pair makes a second pass over an event add nothing.
 */
export const webhookDispatch: SubscriptionHandler = {
  name: WEBHOOK_DISPATCH_SUBSCRIPTION,
  eventTypes: WEBHOOK_SOURCE_EVENTS,
  async handle(tx, events) {
    for (const event of events) {
      for (const type of webhookTypesOf(event.type)) await dispatch(tx, event, type);
    }
  },
};

async function dispatch(tx: TransactionExecutor, event: RecordedEvent, type: WebhookEventType): Promise<void> {
  const data = (event.data ?? {}) as Record<string, unknown>;
  const workspaceId = data.workspace_id;
  if (typeof workspaceId !== 'string') return;
  const only = typeof data.webhook_endpoint_id === 'string' ? data.webhook_endpoint_id : null;
  const about = typeof data.endpoint_id === 'string' ? data.endpoint_id : null;
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM webhook_endpoints
      WHERE workspace_id = $1 AND deleted_at IS NULL AND event_types @> jsonb_build_array($2::text)
        AND ($3::text IS NULL OR id = $3) AND ($4::text IS NULL OR id <> $4)`,
    [workspaceId, type, only, about],
  );
  if (rows.length === 0) return;
  const withheld: readonly string[] = WITHHELD_FIELDS[event.type as EventType] ?? [];
  const payload = { type, timestamp: event.recordedAt.toISOString(), data: Object.fromEntries(Object.entries(data).filter(([field]) => !withheld.includes(field))) };
  const body = JSON.stringify(payload);
  for (const endpoint of rows) {
    await tx.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, event_type, source_event, body, state, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'pending', now())
       ON CONFLICT (endpoint_id, source_event) DO NOTHING`,
      [newWebhookMessageId(), endpoint.id, workspaceId, type, eventId(event.stream, event.version), body],
    );
  }
}
