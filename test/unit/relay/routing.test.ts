import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HEADERS, TOPICS } from '../../../contracts/jsonschema';
import {
  byTopic,
  chunkBySize,
  messageBytes,
  publishedValue,
  toOutgoingMessage,
  topicNames,
  type OutgoingMessage,
} from '../../../services/relay/routing';
import { backoffDelayMs } from '../../../services/common/backoff';
import { ALL_EVENT_TYPES, SAMPLE_DATA, recorded } from './samples';

const topics = topicNames();

describe('topic names', () => {
  it('are the contract names without a prefix, and all carry the prefix when given', () => {
    expect(topics).toEqual({
      ledger: 'lookup.ledger.v1',
      lookups: 'lookup.lookups.v1',
      profiles: 'lookup.profiles.v1',
      keys: 'lookup.keys.v1',
      members: 'lookup.members.v1',
      webhooks: 'lookup.webhooks.v1',
      other: 'lookup.other.v1',
      balances: 'lookup.balances.v1',
    });
    expect(Object.values(topicNames('run42.'))).toEqual(Object.values(TOPICS).map((t) => `run42.${t}`));
  });
});

describe('routing an event to a topic and key', () => {
  const ws = 'ws_01JTESTWORKSPACE0000000000';
  const cases: [string, string, string][] = [
    ['WorkspaceCreated', 'lookup.ledger.v1', ws],
    ['CreditsGranted', 'lookup.ledger.v1', ws],
    ['LimitsChanged', 'lookup.ledger.v1', ws],
    ['LookupCharged', 'lookup.ledger.v1', ws],
    ['LookupRefunded', 'lookup.ledger.v1', ws],
    ['LowBalanceThresholdChanged', 'lookup.ledger.v1', ws],
    ['BalanceLow', 'lookup.ledger.v1', ws],
    ['LookupCompleted', 'lookup.lookups.v1', ws],
    ['ProfileFetched', 'lookup.profiles.v1', 'company:1337'],
    ['ProfileNotFound', 'lookup.profiles.v1', 'company:nobody'],
    ['ApiKeyCreated', 'lookup.keys.v1', 'key_01JTESTKEY000000000000000'],
    ['ApiKeyRevoked', 'lookup.keys.v1', 'key_01JTESTKEY000000000000000'],
    ['ApiKeyRenamed', 'lookup.keys.v1', 'key_01JTESTKEY000000000000000'],
    ['ApiKeyCreatedBy', 'lookup.keys.v1', 'key_01JTESTKEY000000000000000'],
    ['ProfileChanged', 'lookup.profiles.v1', 'company:1337'],
    ...(['WatchCreated', 'WatchDeleted', 'WatchPaused', 'WatchResumed', 'WebhookEndpointFailing'] as const).map((type) => [type, 'lookup.webhooks.v1', ws] as [string, string, string]),
    ...(['MemberInvited', 'InvitationCancelled', 'InvitationAccepted', 'MemberRoleChanged', 'MemberRemoved', 'PasswordChanged', 'PasswordResetRequested', 'PasswordResetCompleted'] as const).map(
      (type) => [type, 'lookup.members.v1', 'ws_01JTESTWORKSPACE0000000000'] as [string, string, string],
    ),
  ];
  it.each(cases)('%s goes to %s with key %s', (type, topic, key) => {
    const message = toOutgoingMessage(recorded(type as never), topics);
    expect(message.topic).toBe(topic);
    expect(message.key).toBe(key);
  });

  it('covers every event type of the contract (a new type needs a topic decision here)', () => {
    const routed = new Set(cases.map(([type]) => type));
    expect(ALL_EVENT_TYPES.filter((t) => !routed.has(t))).toEqual([]);
    for (const type of ALL_EVENT_TYPES) expect(toOutgoingMessage(recorded(type), topics).topic).not.toBe(topics.other);
  });

  it('keeps every event of one stream on one key, so the stream stays in order', () => {
    for (const type of ALL_EVENT_TYPES) {
      const sample = SAMPLE_DATA[type]!;
      const sameStream = ALL_EVENT_TYPES.filter((t) => SAMPLE_DATA[t]!.stream === sample.stream);
      const keys = new Set(sameStream.map((t) => toOutgoingMessage(recorded(t), topics).key));
      expect(keys.size, `stream ${sample.stream}`).toBe(1);
    }
  });

  it('sends an unknown type to the fallback topic, keyed by its stream, data untouched', () => {
    const event = recorded('LimitsChanged', 7, { type: 'AliasesObserved', stream: 'company-1337', data: { aliases: ['x'] }, metadata: {} });
    const message = toOutgoingMessage(event, topicNames('p.'));
    expect(message).toMatchObject({ topic: 'p.lookup.other.v1', key: 'company-1337' });
    expect(JSON.parse(message.value)).toMatchObject({ type: 'AliasesObserved', data: { aliases: ['x'] }, schema_version: null, event_id: 'company-1337:7' });
    expect(message.headers).toEqual({
      [HEADERS.eventId]: 'company-1337:7',
      [HEADERS.type]: 'AliasesObserved',
      ce_specversion: '1.0',
      ce_id: 'company-1337:7',
      ce_type: 'com.lookup-api.AliasesObserved',
      ce_source: '/lookup-api/company',
      ce_subject: 'company-1337',
      ce_time: JSON.parse(message.value).recorded_at,
      'content-type': 'application/json',
    });
  });

  it('falls back to the stream as key when the key field is missing', () => {
    const event = recorded('CreditsGranted', 2, { data: { amount: 5 } });
    expect(toOutgoingMessage(event, topics)).toMatchObject({ topic: topics.ledger, key: 'workspace-ws_01JTESTWORKSPACE0000000000' });
  });
});

describe('the message value and headers', () => {
  it('is the event as JSON with its stable id', () => {
    const event = recorded('LookupCharged', 3);
    const message = toOutgoingMessage(event, topics);
    expect(JSON.parse(message.value)).toEqual({
      event_id: `${event.stream}:3`,
      position: event.position,
      stream: event.stream,
      version: 3,
      type: 'LookupCharged',
      schema_version: 1,
      data: event.data,
      metadata: event.metadata,
      recorded_at: '2025-01-02T03:04:06.789Z',
    });
    expect(message.headers).toEqual({
      'event-id': `${event.stream}:3`,
      type: 'LookupCharged',
      'schema-version': '1',
      'request-id': 'req_01JTESTREQUEST00000000000',
      ce_specversion: '1.0',
      ce_id: `${event.stream}:3`,
      ce_type: 'com.lookup-api.LookupCharged.v1',
      ce_source: '/lookup-api/workspace',
      ce_subject: event.stream,
      ce_time: '2025-01-02T03:04:06.789Z',
      'content-type': 'application/json',
    });
  });

  it('encodes a stream category that is not a plain word, so ce_source stays a URI reference', () => {
    const event = recorded('LimitsChanged', 1, { type: 'Odd', stream: 'a b?c', data: {}, metadata: {} });
    expect(toOutgoingMessage(event, topics).headers.ce_source).toBe('/lookup-api/a%20b%3Fc');
  });

  it('has no request-id header when no request caused the event', () => {
    expect(toOutgoingMessage(recorded('WorkspaceCreated'), topics).headers).not.toHaveProperty('request-id');
  });

  it('never carries the key hash, in the value or anywhere else', () => {
    const event = recorded('ApiKeyCreated');
    const message = toOutgoingMessage(event, topics);
    expect(JSON.parse(message.value).data).not.toHaveProperty('key_hash');
    expect(JSON.stringify(message)).not.toContain('a'.repeat(64));
    expect(JSON.parse(message.value).data).toMatchObject({ key_id: 'key_01JTESTKEY000000000000000', prefix: 'lk_live_abcd' });
    // The recorded event itself is not modified.
    expect(event.data).toHaveProperty('key_hash');
  });

  it('gives the same message for the same event every time (re-sends are recognisable)', () => {
    const event = recorded('LookupRefunded', 9);
    expect(toOutgoingMessage(event, topics)).toEqual(toOutgoingMessage(structuredClone(event), topics));
    expect(publishedValue(event).event_id).toBe(`${event.stream}:9`);
  });
});

const arbitraryMessage: fc.Arbitrary<OutgoingMessage> = fc.record({
  topic: fc.constantFrom('a', 'b', 'c'),
  key: fc.string({ maxLength: 10 }),
  value: fc.string({ maxLength: 400 }),
  headers: fc.constant({ 'event-id': 'x:1' }),
});

describe('splitting a batch into produce requests', () => {
  it('keeps every message, in order, and each request under the limit unless a message alone exceeds it', () => {
    fc.assert(
      fc.property(fc.array(arbitraryMessage, { maxLength: 60 }), fc.integer({ min: 50, max: 3000 }), (messages, maxBytes) => {
        const chunks = chunkBySize(messages, maxBytes);
        expect(chunks.flat()).toEqual(messages);
        for (const chunk of chunks) {
          expect(chunk.length).toBeGreaterThan(0);
          const bytes = chunk.reduce((sum, m) => sum + messageBytes(m), 0);
          if (chunk.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes);
        }
      }),
    );
  });

  it('groups by topic without reordering the messages of a topic', () => {
    fc.assert(
      fc.property(fc.array(arbitraryMessage, { maxLength: 60 }), (messages) => {
        const groups = byTopic(messages);
        expect(new Set(groups.map((g) => g.topic)).size).toBe(groups.length);
        for (const { topic, messages: sent } of groups) {
          expect(sent).toEqual(messages.filter((m) => m.topic === topic).map(({ key, value, headers }) => ({ key, value, headers })));
        }
      }),
    );
  });
});

describe('backoff after failures', () => {
  it('is zero before any failure, grows exponentially between half and all of its ceiling, and stops at the cap', () => {
    expect(backoffDelayMs(0)).toBe(0);
    const low = () => 0;
    const high = () => 1;
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, { initialMs: 100, maxMs: 10_000 }, high))).toEqual([100, 200, 400, 800]);
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, { initialMs: 100, maxMs: 10_000 }, low))).toEqual([50, 100, 200, 400]);
    expect(backoffDelayMs(50, { initialMs: 100, maxMs: 10_000 }, high)).toBe(10_000);
    expect(backoffDelayMs(5000, { initialMs: 100, maxMs: 10_000 }, low)).toBe(5_000);
  });
});
