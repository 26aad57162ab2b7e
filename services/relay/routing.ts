import { EVENT_SCHEMAS, type EventType } from '../../contracts/events';
import {
  CLOUDEVENTS,
  EVENT_ROUTES,
  HEADERS,
  TOPICS,
  TOPIC_CLEANUP_POLICY,
  WITHHELD_FIELDS,
  cloudEventType,
  eventId,
  streamCategory,
  type PublishedEvent,
  type TopicKind,
} from '../../contracts/jsonschema';
import type { RecordedEvent } from '../eventstore/types';
import { cloudEventHeaders } from './cloudevents';

/** How one event of the log becomes one Kafka message. Pure: no broker, no database. */

export type TopicNames = Record<TopicKind, string>;

/** The topic names, each behind `prefix` (tests use a unique prefix per run; production none). */
export function topicNames(prefix = ''): TopicNames {
  return Object.fromEntries(Object.entries(TOPICS).map(([kind, name]) => [kind, `${prefix}${name}`])) as TopicNames;
}

/**
 * Config of a topic the relay creates. Event topics: `retention.ms` (default -1, kept forever).
 * The balances topic is compacted: Kafka keeps at least the newest value of every key.
 */
export function topicConfigEntries(kind: TopicKind, retentionMs = -1): { name: string; value: string }[] {
  const entries = [{ name: 'retention.ms', value: String(retentionMs) }];
  if (TOPIC_CLEANUP_POLICY[kind] === 'compact') entries.push({ name: 'cleanup.policy', value: 'compact' });
  return entries;
}

export interface OutgoingMessage {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

const isKnownType = (type: string): type is EventType => Object.hasOwn(EVENT_SCHEMAS, type);

export function publishedValue(event: RecordedEvent): PublishedEvent {
  const withheld = isKnownType(event.type) ? (WITHHELD_FIELDS[event.type] ?? []) : [];
  let data = event.data;
  if (withheld.length > 0 && data !== null && typeof data === 'object') {
    data = Object.fromEntries(Object.entries(data).filter(([field]) => !withheld.includes(field)));
  }
  const schemaVersion = event.metadata.schema_version;
  return {
    event_id: eventId(event.stream, event.version),
    position: event.position,
    stream: event.stream,
    version: event.version,
    type: event.type,
    schema_version: typeof schemaVersion === 'number' ? schemaVersion : null,
    data,
    metadata: event.metadata,
    recorded_at: event.recordedAt.toISOString(),
  };
}

/**
 * Topic and key. Every event of one stream gets the same key (the stream's workspace, key, entity
 * or alias), so a consumer reads a stream's events in log order. Without the key field, the
 * stream name is the key: same guarantee.
 */
export function routeOf(event: Pick<RecordedEvent, 'type' | 'data' | 'stream'>, topics: TopicNames): { topic: string; key: string } {
  const route = isKnownType(event.type) ? EVENT_ROUTES[event.type] : undefined;
  if (!route) return { topic: topics.other, key: event.stream };
  const key = (event.data as Record<string, unknown> | null)?.[route.keyField];
  return { topic: topics[route.topic], key: typeof key === 'string' && key !== '' ? key : event.stream };
}

/** CloudEvents attributes of an event: id = event id, subject = stream, time = recorded_at. */
export function eventCloudEventHeaders(value: PublishedEvent): Record<string, string> {
  return cloudEventHeaders({
    id: value.event_id,
    type: cloudEventType(value.type, value.schema_version),
    source: `${CLOUDEVENTS.sourcePrefix}${encodeURIComponent(streamCategory(value.stream))}`,
    subject: value.stream,
    time: value.recorded_at,
  });
}

export function toOutgoingMessage(event: RecordedEvent, topics: TopicNames): OutgoingMessage {
  const value = publishedValue(event);
  const headers: Record<string, string> = {
    ...eventCloudEventHeaders(value),
    [HEADERS.eventId]: value.event_id,
    [HEADERS.type]: value.type,
  };
  if (value.schema_version !== null) headers[HEADERS.schemaVersion] = String(value.schema_version);
  const requestId = event.metadata.request_id;
  if (typeof requestId === 'string' && requestId !== '') headers[HEADERS.requestId] = requestId;
  return { ...routeOf(event, topics), value: JSON.stringify(value), headers };
}

/** Rough wire size: what counts against the broker's per-batch limit (message.max.bytes, ~1 MB). */
export function messageBytes(message: OutgoingMessage): number {
  let size = Buffer.byteLength(message.key) + Buffer.byteLength(message.value) + 70;
  for (const [name, value] of Object.entries(message.headers)) size += Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
  return size;
}

/**
 * Splits messages, in order, into consecutive sends of at most `maxBytes` each (a message larger
 * than that goes alone). Sent one after another, they keep the log order on every partition.
 */
export function chunkBySize(messages: OutgoingMessage[], maxBytes: number): OutgoingMessage[][] {
  const chunks: OutgoingMessage[][] = [];
  let current: OutgoingMessage[] = [];
  let currentBytes = 0;
  for (const message of messages) {
    const size = messageBytes(message);
    if (current.length > 0 && currentBytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(message);
    currentBytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** kafkajs `sendBatch` input: messages grouped by topic, each group in the original order. */
export function byTopic(messages: OutgoingMessage[]): { topic: string; messages: { key: string; value: string; headers: Record<string, string> }[] }[] {
  const groups = new Map<string, { key: string; value: string; headers: Record<string, string> }[]>();
  for (const { topic, key, value, headers } of messages) {
    let group = groups.get(topic);
    if (!group) groups.set(topic, (group = []));
    group.push({ key, value, headers });
  }
  return [...groups].map(([topic, msgs]) => ({ topic, messages: msgs }));
}
