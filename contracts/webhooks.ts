import { z } from 'zod';
import type { EventType } from './events';
import { CompanyCacheRequest, ContentHash, DomainCacheRequest, idString, isoDateTime, PersonCacheRequest, RequestId } from './http';
import { text } from './text';

/**
 * Webhooks (Standard Webhooks, docs/api.md "Webhooks") and watches (docs/api.md "Watches"): the
 * event types a workspace can subscribe to and the bodies of their endpoints.
 */

/**
 * Every webhook event type, and the event of the log it is delivered from. The dispatcher
 * (services/webhooks/dispatcher.ts) turns each such event into one delivery per endpoint of the
 * event's `workspace_id` subscribed to the type (only `webhook_endpoint_id`'s, when the event names
 * one); the payload's `data` is the event's data. A new type is one entry here.
 */
export const WEBHOOK_EVENT_TYPES = {
  'profile.changed': {
    event: 'ProfileChanged',
    description: "A watched profile's content_hash changed on a refresh: before and after hashes, the changed top-level fields. Sent to the watch's endpoint.",
  },
  'balance.low': {
    event: 'BalanceLow',
    description: "A charge took the workspace's balance below its low-balance threshold: the balance after it, the threshold, the charge's request id. Once per crossing (a grant back to the threshold or above re-arms it), as the owners' email.",
  },
  'webhook_endpoint.failing': {
    event: 'WebhookEndpointFailing',
    description: "One of the workspace's endpoints gave up a delivery after retrying for the retry horizon (24 h). Sent to the workspace's other endpoints subscribed to it.",
  },
} as const satisfies Record<string, { event: EventType; description: string }>;
export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;
export const WEBHOOK_EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as [WebhookEventType, ...WebhookEventType[]];

/** The event types of the log some webhook type is delivered from. */
export const WEBHOOK_SOURCE_EVENTS: readonly EventType[] = [...new Set(WEBHOOK_EVENT_TYPE_NAMES.map((name) => WEBHOOK_EVENT_TYPES[name].event))];

/** The webhook types delivered from one event type of the log. */
export function webhookTypesOf(eventType: string): WebhookEventType[] {
  return WEBHOOK_EVENT_TYPE_NAMES.filter((name) => WEBHOOK_EVENT_TYPES[name].event === eventType);
}

/** Standard Webhooks' payload: `{type, timestamp, data}`; the body signed and sent. */
export const WebhookPayload = z
  .strictObject({
    type: z.enum(WEBHOOK_EVENT_TYPE_NAMES).meta({ description: 'The event type.' }),
    timestamp: isoDateTime().meta({ description: 'When the event was recorded.' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'The event\'s data (docs/api.md "Webhooks").' }),
  })
  .meta({ id: 'WebhookPayload', description: 'The body of every webhook request, signed over `webhook-id.webhook-timestamp.body`.' });

export const WEBHOOK_URL_MAX_CHARS = 2048;
export const WEBHOOK_DESCRIPTION_MAX_CHARS = 200;
const endpointIdParam = () => idString().meta({ description: 'The webhook endpoint (`whep_…`) of the key\'s workspace.' });

const EventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPE_NAMES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPE_NAMES.length)
  .meta({ description: `The event types sent to the endpoint: ${WEBHOOK_EVENT_TYPE_NAMES.join(', ')}.` });
const WebhookUrl = text({ max: WEBHOOK_URL_MAX_CHARS, kind: 'reference' }).meta({
  description: 'An `https://` (or `http://`) URL. Its host must resolve to public addresses only (unless the operator allows it): no private, loopback or link-local address.',
  example: 'https://example.com/webhooks/lookup',
});
const Description = text({ max: WEBHOOK_DESCRIPTION_MAX_CHARS, kind: 'line' }).meta({ description: 'A note for people, 1–200 characters.' });

export const WebhookEndpointPathParams = z.strictObject({ id: endpointIdParam() });
export const WebhookDeliveryPathParams = z.strictObject({ id: endpointIdParam(), delivery_id: idString().meta({ description: 'The delivery (`msg_…`, its `webhook-id`).' }) });
export const WatchPathParams = z.strictObject({ id: idString().meta({ description: 'The watch (`wat_…`) of the key\'s workspace.' }) });

export const WebhookEndpointCreateRequest = z.strictObject({
  url: WebhookUrl,
  event_types: EventTypes,
  description: Description.optional(),
});

export const WebhookEndpointPatchRequest = z
  .strictObject({
    url: WebhookUrl.optional(),
    event_types: EventTypes.optional(),
    description: Description.nullable().optional().meta({ description: 'A note for people; null removes it.' }),
    enabled: z.boolean().optional().meta({ description: 'False: nothing is sent to it (deliveries still recorded as pending are sent once it is enabled again).' }),
  });

const WebhookEndpointState = z
  .enum(['active', 'failing', 'disabled'])
  .meta({ description: '`active`; `failing`: a delivery was given up after the retry horizon (a later success makes it `active` again); `disabled` by PATCH `enabled: false`.' });

export const WebhookEndpoint = z
  .strictObject({
    id: z.string().regex(/^whep_/).meta({ description: 'The endpoint id.' }),
    url: z.string().meta({ description: 'Where deliveries are POSTed.' }),
    event_types: z.array(z.enum(WEBHOOK_EVENT_TYPE_NAMES)).meta({ description: 'The event types sent there.' }),
    description: z.string().nullable().meta({ description: 'A note for people, or null.' }),
    state: WebhookEndpointState,
    failing_since: isoDateTime().nullable().meta({ description: 'Since when a delivery was given up (state `failing`); null otherwise.' }),
    previous_secret_expires_at: isoDateTime().nullable().meta({ description: 'While set, deliveries are signed with the previous secret too (rotation overlap).' }),
    created_at: isoDateTime().meta({ description: 'When it was registered.' }),
  })
  .meta({ id: 'WebhookEndpoint', description: 'A webhook endpoint of the workspace (never its secret).' });

const Meta = z.strictObject({ request_id: RequestId }).meta({ description: 'About the call: its request id. Free.' });

export const WebhookEndpointResponse = z.strictObject({ data: WebhookEndpoint, meta: Meta }).meta({ id: 'WebhookEndpointResponse' });
export const WebhookEndpointWithSecretResponse = z
  .strictObject({
    data: WebhookEndpoint.extend({
      secret: z.string().regex(/^whsec_/).meta({ description: 'The signing secret (`whsec_` + base64): shown only in this answer.' }),
    }).meta({ description: 'The endpoint, with its signing secret.' }),
    meta: Meta,
  })
  .meta({ id: 'WebhookEndpointWithSecretResponse' });
export const WebhookEndpointListResponse = z.strictObject({ data: z.array(WebhookEndpoint).meta({ description: 'The endpoints, oldest first.' }), meta: Meta }).meta({ id: 'WebhookEndpointListResponse' });
export const WebhookEndpointDeletedResponse = z
  .strictObject({
    data: z
      .strictObject({
        id: z.string().meta({ description: 'The endpoint deleted.' }),
        deleted: z.literal(true).meta({ description: 'Always true.' }),
        deleted_watches: z.array(z.string()).meta({ description: 'The watches that delivered to it, deleted with it (oldest first; each gets `WatchDeleted` with reason `webhook_endpoint_deleted`): nothing is refreshed or charged for them any more.' }),
      })
      .meta({ description: 'What was deleted.' }),
    meta: Meta,
  })
  .meta({ id: 'WebhookEndpointDeletedResponse' });

export const WebhookAttempt = z
  .strictObject({
    attempt: z.int().positive().meta({ description: '1, 2, 3… within the delivery.' }),
    started_at: isoDateTime().meta({ description: 'When the attempt began.' }),
    status: z.enum(['succeeded', 'failed', 'refused']).meta({ description: '`succeeded`: a 2xx; `failed`: another status, a timeout or a connection error; `refused`: the address policy refused the URL.' }),
    response_status: z.int().nullable().meta({ description: 'The HTTP status answered; null when none was.' }),
    latency_ms: z.int().nonnegative().meta({ description: 'Milliseconds until the answer\'s status arrived (or the attempt failed).' }),
    error: z.string().nullable().meta({ description: 'Why it failed; null when it succeeded.' }),
  })
  .meta({ id: 'WebhookAttempt', description: 'One attempt of a delivery.' });

export const WebhookDelivery = z
  .strictObject({
    id: z.string().regex(/^msg_/).meta({ description: 'The `webhook-id` header: the same on every attempt and re-send.' }),
    endpoint_id: z.string().meta({ description: 'The endpoint it goes to.' }),
    event_type: z.enum(WEBHOOK_EVENT_TYPE_NAMES).meta({ description: 'The event type.' }),
    state: z.enum(['pending', 'delivered', 'failed']).meta({ description: '`pending` (due at `next_attempt_at`), `delivered` (a 2xx), `failed` (given up after the retry horizon).' }),
    created_at: isoDateTime().meta({ description: 'When the event was turned into this delivery.' }),
    next_attempt_at: isoDateTime().nullable().meta({ description: 'When the next attempt is due; null unless pending.' }),
    payload: WebhookPayload,
    attempts: z.array(WebhookAttempt).meta({ description: 'Every attempt so far, oldest first.' }),
  })
  .meta({ id: 'WebhookDelivery', description: 'One message to one endpoint, with its attempts.' });

export const WebhookDeliveryListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'At most this many, newest first (1–100, default 20).' }),
});
export const WebhookDeliveryListResponse = z.strictObject({ data: z.array(WebhookDelivery).meta({ description: 'The deliveries, newest first.' }), meta: Meta }).meta({ id: 'WebhookDeliveryListResponse' });
export const WebhookDeliveryResponse = z.strictObject({ data: WebhookDelivery, meta: Meta }).meta({ id: 'WebhookDeliveryResponse' });

// ---------- watches ----------

export const WATCH_INTERVALS = { '1d': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type WatchInterval = keyof typeof WATCH_INTERVALS;
const Every = z.enum(Object.keys(WATCH_INTERVALS) as [WatchInterval, ...WatchInterval[]]).meta({ description: 'How often the reference is refreshed: `1d`, `7d` or `30d`.' });

/** What can be watched: a profile lookup, with the body its endpoint takes (without `max_age`). */
const WatchedEndpointId = () => idString().meta({ description: 'The endpoint of the workspace that gets `profile.changed`.' });
export const WatchCreateRequest = z.discriminatedUnion('operation', [
  z.strictObject({ operation: z.literal('company').meta({ description: 'A company by reference.' }), body: CompanyCacheRequest.meta({ description: 'As for POST /v1/company, without `max_age`.' }), every: Every, webhook_endpoint_id: WatchedEndpointId() }),
  z.strictObject({ operation: z.literal('domain').meta({ description: 'A company by website domain.' }), body: DomainCacheRequest.meta({ description: 'As for POST /v1/domain, without `max_age`.' }), every: Every, webhook_endpoint_id: WatchedEndpointId() }),
  z.strictObject({ operation: z.literal('person').meta({ description: 'A person by profile URL or name.' }), body: PersonCacheRequest.meta({ description: 'As for POST /v1/person, without `max_age`.' }), every: Every, webhook_endpoint_id: WatchedEndpointId() }),
]);
export type WatchCreateRequest = z.output<typeof WatchCreateRequest>;
/** The operations a watch repeats, each with the one body field its reference goes in (the console's form). */
export const WATCHED_OPERATIONS = WatchCreateRequest.options.map((o) => ({ operation: o.shape.operation.value, referenceField: Object.keys(o.shape.body.shape)[0]! }));

export const Watch = z
  .strictObject({
    id: z.string().regex(/^wat_/).meta({ description: 'The watch id.' }),
    operation: z.enum(['company', 'domain', 'person']).meta({ description: 'The lookup the watch repeats.' }),
    body: z.record(z.string(), z.string()).meta({ description: 'The lookup\'s body as given.' }),
    every: Every,
    webhook_endpoint_id: z.string().meta({ description: 'Where `profile.changed` goes.' }),
    state: z.enum(['active', 'paused']).meta({ description: '`paused` while the workspace cannot pay a refresh.' }),
    paused_reason: z.enum(['insufficient_credits']).nullable().meta({ description: '`insufficient_credits`: the balance is below the price of a refresh; resumed by itself once it is not.' }),
    next_run_at: isoDateTime().meta({ description: 'When the next scheduled refresh is due.' }),
    last_run_at: isoDateTime().nullable().meta({ description: 'When it was last refreshed; null before the first refresh.' }),
    last_request_id: z.string().nullable().meta({ description: 'The request id of the last refresh (its ledger and usage rows carry it).' }),
    content_hash: ContentHash.nullable().meta({ description: 'The hash of the profile as last seen.' }),
    created_at: isoDateTime().meta({ description: 'When it was created.' }),
  })
  .meta({ id: 'Watch', description: 'A watch of the workspace.' });

export const WatchResponse = z.strictObject({ data: Watch, meta: Meta }).meta({ id: 'WatchResponse' });
export const WatchListResponse = z.strictObject({ data: z.array(Watch).meta({ description: 'The watches, oldest first.' }), meta: Meta }).meta({ id: 'WatchListResponse' });
export const WatchDeletedResponse = z.strictObject({ data: z.strictObject({ id: z.string().meta({ description: 'The watch deleted.' }), deleted: z.literal(true).meta({ description: 'Always true.' }) }).meta({ description: 'What was deleted.' }), meta: Meta }).meta({ id: 'WatchDeletedResponse' });
export const WatchRunResponse = z
  .strictObject({
    data: Watch,
    meta: Meta.extend({
      refresh_request_id: RequestId.meta({ description: 'The request id the refresh was charged under.' }),
      changed: z.boolean().meta({ description: 'True when the content_hash changed (a `profile.changed` webhook follows).' }),
      credits_charged: z.int().nonnegative().meta({ description: 'What the refresh cost (equals X-Credits-Charged).' }),
      credits_remaining: z.int().nonnegative().meta({ description: 'The workspace balance after it (equals X-Credits-Remaining).' }),
    }).meta({ description: 'About the call and the refresh it made.' }),
  })
  .meta({ id: 'WatchRunResponse' });
