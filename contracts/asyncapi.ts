import { z } from 'zod';
import { EVENT_SCHEMAS, EVENT_SCHEMA_VERSION, type EventType } from './events';
import {
  BALANCE_MESSAGE_TYPE,
  BALANCE_MESSAGE_VERSION,
  CLOUDEVENTS,
  EVENT_ROUTES,
  HEADERS,
  PublishedEventEnvelope,
  TOPICS,
  TOPIC_CLEANUP_POLICY,
  WorkspaceBalanceMessage,
  cloudEventType,
  describeRoute,
  publishedEventSchema,
  toJsonSchema,
  type JsonSchema,
  type TopicKind,
} from './jsonschema';
import { API_VERSION } from './openapi';

/**
 * The AsyncAPI 3.0 description of every Kafka topic the relay writes: one channel per topic, one
 * message per event type, payloads and headers converted from the same zod schemas as the
 * committed JSON Schemas (here as draft-07, the dialect AsyncAPI schemas build on). Served at
 * GET /v1/asyncapi.json; docs/events.md is the prose around it.
 */

const KAFKA_BINDING_VERSION = '0.5.0';
/** The relay's defaults (services/relay/relay.ts): existing topics keep whatever they were created with. */
const DEFAULT_PARTITIONS = 3;

const CHANNEL_DESCRIPTIONS: Record<TopicKind, string> = {
  ledger: 'Workspaces, credits, limits, charges and refunds: the ledger topic alone rebuilds every balance. Key: workspace id.',
  lookups: 'One LookupCompleted per answered lookup. Key: workspace id.',
  profiles: 'Profiles fetched and definitive not-founds. Key: the entity (ProfileFetched) or the alias asked (ProfileNotFound).',
  keys: 'API keys created, renamed, attributed and revoked (never the key hash). Key: key id.',
  members: 'Workspace membership: invitations, accepted invitations, roles, removals, password changes and resets (never a token, the hash of a token or a password hash). Key: workspace id.',
  webhooks: "Watches' schedules (created, deleted, paused for credits, resumed) and webhook endpoints given up as failing. Key: workspace id.",
  other: 'Events of types this version of the contract does not know (written by a newer version), never dropped. Key: the stream.',
  balances:
    'Compacted: the latest balance of each workspace, key = workspace id. Read from the beginning, the last value of each key is the balance the admin API reports once the relay has caught up.',
};

/** Strings only, as Kafka headers reach consumers. */
const cloudEventHeaderFields = (type: z.ZodType<string>, source: z.ZodType<string>, subject: z.ZodType<string>) => ({
  ce_specversion: z.literal(CLOUDEVENTS.specVersion).describe('CloudEvents spec version'),
  ce_type: type,
  ce_source: source,
  ce_subject: subject,
  'content-type': z.literal(CLOUDEVENTS.contentType).describe('CloudEvents datacontenttype: the value is JSON'),
});

/** Headers of an event message: of one known type, or (null) of any type, as on the fallback topic. */
function eventHeaders(type: EventType | null) {
  const schemaVersion = type === null ? null : EVENT_SCHEMA_VERSION[type];
  return z.object({
    ...cloudEventHeaderFields(
      (type === null ? z.string().startsWith(CLOUDEVENTS.typePrefix) : z.literal(cloudEventType(type, schemaVersion))).describe(
        'CloudEvents type: com.lookup-api.<EventType>.v<schema_version> (no .v… when the event has no schema_version)',
      ),
      z.string().startsWith(CLOUDEVENTS.sourcePrefix).describe('CloudEvents source: /lookup-api/<stream category>, e.g. /lookup-api/workspace'),
      z.string().min(1).describe('CloudEvents subject: the stream of the event'),
    ),
    ce_id: z.string().min(3).describe('CloudEvents id: the event id, <stream>:<version> (same as event-id)'),
    ce_time: z.iso.datetime().describe('CloudEvents time: recorded_at of the event'),
    [HEADERS.eventId]: z.string().min(3).describe('The event id, <stream>:<version>: the de-duplication key'),
    [HEADERS.type]: (type === null ? z.string().min(1) : z.literal(type)).describe('The event type'),
    [HEADERS.schemaVersion]: (schemaVersion === null ? z.string().regex(/^[0-9]+$/).optional() : z.literal(String(schemaVersion))).describe(
      'schema_version of the event, as text (absent when the event has none)',
    ),
    [HEADERS.requestId]: z.string().optional().describe('The request that caused the event, when there was one'),
  });
}

const balanceHeaders = z.object({
  ...cloudEventHeaderFields(
    z.literal(cloudEventType(BALANCE_MESSAGE_TYPE, BALANCE_MESSAGE_VERSION)),
    z.literal(CLOUDEVENTS.balancesSource),
    z.string().startsWith('ws_').describe('The workspace id'),
  ),
  ce_id: z.string().min(3).describe('The event id of last_event_id'),
  ce_time: z.iso.datetime().describe('last_event_recorded_at'),
});

/** draft-07 without `$schema`: an AsyncAPI Schema Object. */
function schemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, 'draft-7');
  return rest;
}

function keyDescription(type: EventType): string {
  const route = EVENT_ROUTES[type];
  return route ? `data.${route.keyField} of the event (the stream when it is missing); murmur2-partitioned` : 'the stream';
}

const UNKNOWN_EVENT = 'UnknownEvent';

export function buildAsyncApiDocument(): Record<string, unknown> {
  const messages: Record<string, unknown> = {};
  const channelMessages: Record<TopicKind, string[]> = { ledger: [], lookups: [], profiles: [], keys: [], members: [], webhooks: [], other: [], balances: [] };

  for (const type of Object.keys(EVENT_SCHEMAS).sort() as EventType[]) {
    const route = EVENT_ROUTES[type];
    channelMessages[route ? route.topic : 'other'].push(type);
    messages[type] = {
      name: type,
      title: `${type} v${EVENT_SCHEMA_VERSION[type]}`,
      summary: describeRoute(type),
      contentType: CLOUDEVENTS.contentType,
      headers: schemaOf(eventHeaders(type)),
      payload: schemaOf(publishedEventSchema(type)),
      bindings: { kafka: { key: { type: 'string', description: keyDescription(type) }, bindingVersion: KAFKA_BINDING_VERSION } },
    };
  }
  channelMessages.other.push(UNKNOWN_EVENT);
  messages[UNKNOWN_EVENT] = {
    name: UNKNOWN_EVENT,
    title: 'An event of a type this contract does not know',
    summary: `Any event on ${TOPICS.other}: read type and schema_version before data.`,
    contentType: CLOUDEVENTS.contentType,
    headers: schemaOf(eventHeaders(null)),
    payload: schemaOf(PublishedEventEnvelope),
    bindings: { kafka: { key: { type: 'string', description: 'the stream of the event' }, bindingVersion: KAFKA_BINDING_VERSION } },
  };
  channelMessages.balances.push(BALANCE_MESSAGE_TYPE);
  messages[BALANCE_MESSAGE_TYPE] = {
    name: BALANCE_MESSAGE_TYPE,
    title: `${BALANCE_MESSAGE_TYPE} v${BALANCE_MESSAGE_VERSION}`,
    summary: 'The latest balance of one workspace (compacted topic)',
    contentType: CLOUDEVENTS.contentType,
    headers: schemaOf(balanceHeaders),
    payload: schemaOf(WorkspaceBalanceMessage),
    bindings: { kafka: { key: { type: 'string', description: 'the workspace id (ws_…)' }, bindingVersion: KAFKA_BINDING_VERSION } },
  };

  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  for (const kind of Object.keys(TOPICS) as TopicKind[]) {
    const compacted = TOPIC_CLEANUP_POLICY[kind] === 'compact';
    channels[kind] = {
      address: TOPICS[kind],
      title: TOPICS[kind],
      description: CHANNEL_DESCRIPTIONS[kind],
      messages: Object.fromEntries(channelMessages[kind].map((name) => [name, { $ref: `#/components/messages/${name}` }])),
      bindings: {
        kafka: {
          topic: TOPICS[kind],
          partitions: DEFAULT_PARTITIONS,
          topicConfiguration: compacted ? { 'cleanup.policy': ['compact'] } : { 'cleanup.policy': ['delete'], 'retention.ms': -1 },
          bindingVersion: KAFKA_BINDING_VERSION,
        },
      },
    };
    operations[`publish_${kind}`] = {
      action: 'send',
      title: `The relay publishes to ${TOPICS[kind]}`,
      channel: { $ref: `#/channels/${kind}` },
      messages: channelMessages[kind].map((name) => ({ $ref: `#/channels/${kind}/messages/${name}` })),
    };
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Company and Person Lookup API: event stream',
      version: API_VERSION,
      description:
        'Every event of the log (PostgreSQL, the source of truth), copied to Kafka by the relay for analytics consumers, at least once: drop duplicates by event id. ' +
        'Messages carry CloudEvents 1.0 attributes in binary mode (ce_* headers); the value is the event as JSON. Topic names here are without the optional prefix a deployment may add. ' +
        'A test key\'s calls and key carry data.mode = "test" (never charged, sandbox answers); live events carry no mode (absent means live).',
    },
    defaultContentType: CLOUDEVENTS.contentType,
    channels,
    operations,
    components: { messages },
  };
}
