import { z } from 'zod';
import { EVENT_SCHEMAS, EVENT_SCHEMA_VERSION, type EventType } from './events';

/**
 * The event stream as analytics consumers see it on Kafka: topics, the message value (an envelope
 * around each event of the log), and JSON Schemas generated from the zod schemas of `events.ts`.
 * docs/events.md explains keys, ordering and de-duplication.
 */

export const TOPICS = {
  ledger: 'lookup.ledger.v1',
  lookups: 'lookup.lookups.v1',
  profiles: 'lookup.profiles.v1',
  keys: 'lookup.keys.v1',
  members: 'lookup.members.v1',
  /** Watches' schedules and webhook endpoints' health, key = workspace id. */
  webhooks: 'lookup.webhooks.v1',
  /** Events this contract does not know (written by a newer version): published, never dropped. */
  other: 'lookup.other.v1',
  /**
   * Not events: the latest balance of each workspace, key = workspace id, on a compacted topic, so
   * a consumer that starts late learns every balance without replaying the ledger.
   */
  balances: 'lookup.balances.v1',
} as const;
export type TopicKind = keyof typeof TOPICS;
/** Topics that carry events of the log (every topic but the compacted balances). */
export type EventTopicKind = Exclude<TopicKind, 'balances'>;

/** Kafka `cleanup.policy` of each topic: events are kept (delete after retention.ms, default never), balances compacted. */
export const TOPIC_CLEANUP_POLICY: Record<TopicKind, 'delete' | 'compact'> = {
  ledger: 'delete',
  lookups: 'delete',
  profiles: 'delete',
  keys: 'delete',
  members: 'delete',
  webhooks: 'delete',
  other: 'delete',
  balances: 'compact',
};

/** Where each event type goes and which data field is its message key. */
export const EVENT_ROUTES: Partial<Record<EventType, { topic: Exclude<EventTopicKind, 'other'>; keyField: string }>> = {
  WorkspaceCreated: { topic: 'ledger', keyField: 'workspace_id' },
  CreditsGranted: { topic: 'ledger', keyField: 'workspace_id' },
  LimitsChanged: { topic: 'ledger', keyField: 'workspace_id' },
  LookupCharged: { topic: 'ledger', keyField: 'workspace_id' },
  LookupRefunded: { topic: 'ledger', keyField: 'workspace_id' },
  LowBalanceThresholdChanged: { topic: 'ledger', keyField: 'workspace_id' },
  BalanceLow: { topic: 'ledger', keyField: 'workspace_id' },
  LookupCompleted: { topic: 'lookups', keyField: 'workspace_id' },
  ProfileFetched: { topic: 'profiles', keyField: 'entity' },
  ProfileNotFound: { topic: 'profiles', keyField: 'alias' },
  ApiKeyCreated: { topic: 'keys', keyField: 'key_id' },
  ApiKeyRevoked: { topic: 'keys', keyField: 'key_id' },
  ApiKeyRenamed: { topic: 'keys', keyField: 'key_id' },
  ApiKeyCreatedBy: { topic: 'keys', keyField: 'key_id' },
  MemberInvited: { topic: 'members', keyField: 'workspace_id' },
  InvitationCancelled: { topic: 'members', keyField: 'workspace_id' },
  InvitationAccepted: { topic: 'members', keyField: 'workspace_id' },
  MemberRoleChanged: { topic: 'members', keyField: 'workspace_id' },
  MemberRemoved: { topic: 'members', keyField: 'workspace_id' },
  PasswordChanged: { topic: 'members', keyField: 'workspace_id' },
  PasswordResetRequested: { topic: 'members', keyField: 'workspace_id' },
  PasswordResetCompleted: { topic: 'members', keyField: 'workspace_id' },
  ProfileChanged: { topic: 'profiles', keyField: 'entity' },
  WatchCreated: { topic: 'webhooks', keyField: 'workspace_id' },
  WatchDeleted: { topic: 'webhooks', keyField: 'workspace_id' },
  WatchPaused: { topic: 'webhooks', keyField: 'workspace_id' },
  WatchResumed: { topic: 'webhooks', keyField: 'workspace_id' },
  WebhookEndpointFailing: { topic: 'webhooks', keyField: 'workspace_id' },
};

/**
 * Fields of the log that never leave it. `key_hash` is the SHA-256 of a live secret: whoever reads
 * the topic could test guessed keys against it offline, and no analysis needs it.
 */
export const WITHHELD_FIELDS: Partial<Record<EventType, readonly string[]>> = {
  ApiKeyCreated: ['key_hash'],
  // Single-use and useless without the link, but nothing downstream needs it either.
  MemberInvited: ['token_hash'],
  PasswordResetRequested: ['token_hash'],
  PasswordResetCompleted: ['token_hash'],
};

/** The `data` of an event as published: the log's schema minus the withheld fields. */
export function publishedDataSchema(type: EventType): z.ZodObject {
  const schema: z.ZodObject = EVENT_SCHEMAS[type];
  const withheld = WITHHELD_FIELDS[type] ?? [];
  if (withheld.length === 0) return schema;
  const mask: Record<string, true> & Record<number, never> = {};
  for (const field of withheld) mask[field] = true;
  return schema.omit(mask);
}

/** Stable id of an event, the same on every re-publication: consumers drop duplicates by it. */
export function eventId(stream: string, version: number): string {
  return `${stream}:${version}`;
}

export const PublishedEventEnvelope = z.object({
  event_id: z.string().min(3).describe('`<stream>:<version>`, unique and stable: the de-duplication key'),
  position: z.number().int().positive().describe('Insert position in the log (unique; not a total order across transactions)'),
  stream: z.string().min(1),
  version: z.number().int().positive().describe('1, 2, 3… within the stream'),
  type: z.string().min(1),
  schema_version: z.number().int().positive().nullable().describe('Version of the schema of `type` the event was written with'),
  data: z.unknown(),
  metadata: z.looseObject({ request_id: z.string().optional(), schema_version: z.number().int().optional() }),
  recorded_at: z.iso.datetime().describe('Start of the transaction that wrote the event (UTC)'),
});
export type PublishedEvent = z.infer<typeof PublishedEventEnvelope>;

/** The full message value of one known event type, `data` included. */
export function publishedEventSchema(type: EventType) {
  return PublishedEventEnvelope.extend({
    type: z.literal(type),
    schema_version: z.literal(EVENT_SCHEMA_VERSION[type]),
    data: publishedDataSchema(type),
  });
}

/** Kafka headers of every event message (all strings), besides the CloudEvents ones. */
export const HEADERS = {
  eventId: 'event-id',
  type: 'type',
  schemaVersion: 'schema-version',
  /** Only when a request caused the event. */
  requestId: 'request-id',
} as const;

/**
 * CloudEvents 1.0 in Kafka binary mode: the attributes are `ce_`-prefixed headers, the value stays
 * the message value above (datacontenttype → the `content-type` header).
 */
export const CLOUDEVENTS = {
  specVersion: '1.0',
  contentType: 'application/json',
  /** `ce_source` of an event: the category of its stream (`workspace`, `apikey`, `company`…). */
  sourcePrefix: '/lookup-api/',
  /** `ce_source` of a balance message. */
  balancesSource: '/lookup-api/balances',
  /** `ce_type` = `com.lookup-api.<EventType>.v<schema_version>` (without `.v…` when the event has none). */
  typePrefix: 'com.lookup-api.',
} as const;

/** The category of a stream: what comes before its first `-` (`workspace-ws_…` → `workspace`). */
export function streamCategory(stream: string): string {
  const dash = stream.indexOf('-');
  return dash > 0 ? stream.slice(0, dash) : stream;
}

export function cloudEventType(type: string, schemaVersion: number | null): string {
  return `${CLOUDEVENTS.typePrefix}${type}${schemaVersion === null ? '' : `.v${schemaVersion}`}`;
}

export const BALANCE_MESSAGE_TYPE = 'WorkspaceBalance';
export const BALANCE_MESSAGE_VERSION = 1;

/**
 * The value of a message on the compacted balances topic. `balance` is the workspace's balance as
 * the service had it when the relay published the ledger event `last_event_id`: it includes that
 * event and every earlier one (it may already include later ones, which the ledger topic carries
 * next). Once the relay has caught up, the last value of each key is exactly the admin API's balance.
 */
export const WorkspaceBalanceMessage = z.object({
  workspace_id: z.string().startsWith('ws_'),
  balance: z.number().int().describe('Credits (exact integer)'),
  last_event_id: z.string().min(3).describe('Event id of the newest ledger event of this workspace published with this balance'),
  last_event_position: z.number().int().positive().describe('Its position in the log'),
  last_event_recorded_at: z.iso.datetime().describe('Its recorded_at'),
});
export type WorkspaceBalanceMessage = z.infer<typeof WorkspaceBalanceMessage>;

export type JsonSchema = Record<string, unknown>;

/** zod → JSON Schema; draft 2020-12 for the committed files, draft-07 where AsyncAPI needs it. */
export function toJsonSchema(schema: z.ZodType, target: 'draft-2020-12' | 'draft-7' = 'draft-2020-12'): JsonSchema {
  return z.toJSONSchema(schema, {
    target,
    io: 'output',
    override: (ctx) => {
      // zod marks `startsWith` with a format of its own; the `pattern` beside it says the same in
      // standard JSON Schema, and validators reject formats they do not know.
      if (ctx.jsonSchema.format === 'starts_with') delete ctx.jsonSchema.format;
    },
  }) as JsonSchema;
}

export function describeRoute(type: EventType): string {
  const route = EVENT_ROUTES[type];
  const where = route ? `topic ${TOPICS[route.topic]}, key = data.${route.keyField}` : `topic ${TOPICS.other}, key = stream`;
  const withheld = WITHHELD_FIELDS[type];
  return `${type} v${EVENT_SCHEMA_VERSION[type]} on ${where}.${withheld ? ` Not published: ${withheld.join(', ')}.` : ''}`;
}

/**
 * One JSON Schema per file name: `<EventType>.json` for each known event (the whole message value),
 * `envelope.json` for any message, whatever its type (what the fallback topic carries), and
 * `WorkspaceBalance.json` for the compacted balances topic.
 */
export function eventJsonSchemas(): Record<string, JsonSchema> {
  const files: Record<string, JsonSchema> = {
    'envelope.json': {
      ...toJsonSchema(PublishedEventEnvelope),
      title: 'Event envelope',
      description: 'The value of every message on the lookup.* topics: one event of the log as JSON.',
    },
  };
  for (const type of Object.keys(EVENT_SCHEMAS).sort() as EventType[]) {
    files[`${type}.json`] = { ...toJsonSchema(publishedEventSchema(type)), title: type, description: describeRoute(type) };
  }
  files[`${BALANCE_MESSAGE_TYPE}.json`] = {
    ...toJsonSchema(WorkspaceBalanceMessage),
    title: BALANCE_MESSAGE_TYPE,
    description: `v${BALANCE_MESSAGE_VERSION} on topic ${TOPICS.balances} (compacted), key = workspace_id: the latest balance of each workspace.`,
  };
  return files;
}
