import { Parser } from '@asyncapi/parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { buildAsyncApiDocument } from '../../../contracts/asyncapi';
import { EVENT_SCHEMAS } from '../../../contracts/events';
import { TOPICS } from '../../../contracts/jsonschema';
import { toBalanceMessage } from '../../../services/relay/balances-topic';
import { toOutgoingMessage, topicNames } from '../../../services/relay/routing';
import { ALL_EVENT_TYPES, recorded } from '../relay/samples';

const document = buildAsyncApiDocument() as any;
const topics = topicNames();
// draft-07, the dialect of AsyncAPI schemas.
const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv);

describe('the AsyncAPI document of the event stream', () => {
  it('is valid AsyncAPI 3.0.0: the official parser reports no error', async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(document);
    const errors = diagnostics.filter((d) => d.severity === 0);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(parsed?.version()).toBe('3.0.0');
    expect(parsed?.channels().all().map((c) => c.address()).sort()).toEqual(Object.values(TOPICS).sort());
  });

  it('has a channel per topic and every event type as a message of the channel the relay routes it to', () => {
    expect(Object.values(document.channels).map((c: any) => c.address).sort()).toEqual(Object.values(TOPICS).sort());
    for (const type of Object.keys(EVENT_SCHEMAS)) {
      const topic = toOutgoingMessage(recorded(type as never), topics).topic;
      const [kind] = Object.entries(TOPICS).find(([, name]) => name === topic)!;
      expect(document.channels[kind].messages[type], type).toEqual({ $ref: `#/components/messages/${type}` });
      expect(document.components.messages[type].bindings.kafka.key.type).toBe('string');
    }
    expect(Object.keys(document.channels.balances.messages)).toEqual(['WorkspaceBalance']);
    expect(document.channels.balances.bindings.kafka.topicConfiguration['cleanup.policy']).toEqual(['compact']);
    expect(Object.keys(document.channels.other.messages)).toEqual(['UnknownEvent']);
  });

  it.each(ALL_EVENT_TYPES)('describes the value and headers the relay really publishes for %s', (type) => {
    const message = toOutgoingMessage(recorded(type), topics);
    const described = document.components.messages[type];
    const payload = ajv.compile(described.payload);
    const headers = ajv.compile(described.headers);
    expect(payload(JSON.parse(message.value)), ajv.errorsText(payload.errors)).toBe(true);
    expect(headers(message.headers), ajv.errorsText(headers.errors)).toBe(true);
    // And not another type's.
    const other = document.components.messages[type === 'LookupCharged' ? 'LookupRefunded' : 'LookupCharged'];
    expect(ajv.compile(other.headers)(message.headers)).toBe(false);
  });

  it('describes a balance message and an event of an unknown type as published', () => {
    const balance = toBalanceMessage('ws_01JTESTWORKSPACE0000000000', 12, recorded('CreditsGranted'), topics);
    const described = document.components.messages.WorkspaceBalance;
    expect(ajv.compile(described.payload)(JSON.parse(balance.value))).toBe(true);
    expect(ajv.compile(described.headers)(balance.headers)).toBe(true);

    const unknown = toOutgoingMessage(recorded('LimitsChanged', 3, { type: 'AliasesObserved', stream: 'company-1337', data: { a: 1 }, metadata: {} }), topics);
    expect(ajv.compile(document.components.messages.UnknownEvent.payload)(JSON.parse(unknown.value))).toBe(true);
    expect(ajv.compile(document.components.messages.UnknownEvent.headers)(unknown.headers)).toBe(true);
  });
});

describe('test keys in the AsyncAPI document and the JSON Schemas', () => {
  it.each(['ApiKeyCreated', 'LookupCharged', 'LookupRefunded', 'LookupCompleted'])('%s: data.mode is optional, live or test, default live', (type) => {
    const data = document.components.messages[type].payload.properties.data;
    expect(data.properties.mode).toMatchObject({ enum: ['live', 'test'], default: 'live' });
    expect(data.required).not.toContain('mode');
    const validate = ajv.compile(document.components.messages[type].payload);
    const published = toOutgoingMessage(recorded(type as never), topics);
    const value = JSON.parse(String(published.value));
    expect(validate({ ...value, data: { ...value.data, mode: 'test' } }), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...value, data: { ...value.data, mode: 'sandbox' } })).toBe(false);
  });
});
