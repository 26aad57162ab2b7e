import { CloudEvent, Kafka, type CloudEventV1, type KafkaMessage } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { toBalanceMessage } from '../../../services/relay/balances-topic';
import { toOutgoingMessage, topicNames, type OutgoingMessage } from '../../../services/relay/routing';
import { ALL_EVENT_TYPES, recorded } from './samples';

const topics = topicNames();

/** What a consumer using the cloudevents SDK reads from a message (the SDK's reader does not validate). */
function readWithSdk(message: OutgoingMessage): CloudEventV1<unknown> {
  const received: KafkaMessage<string> = { key: message.key, value: message.value, headers: message.headers, body: message.value };
  const read = Kafka.toEvent(received);
  return Array.isArray(read) ? read[0]! : read;
}

/** The SDK's strict validation (throws a ValidationError on any attribute out of the spec). */
const strictly = (event: CloudEventV1<unknown>) => new CloudEvent<unknown>({ ...event }, true);

/** The headers the SDK's own Kafka binding gives for the same attributes (unset ones and its extra ce_datacontenttype left out). */
function sdkBinaryHeaders(event: CloudEventV1<unknown>): Record<string, string> {
  const strict = strictly({ ...event, data: undefined });
  return Object.fromEntries(
    Object.entries(Kafka.binary(strict).headers).filter(([name, value]) => typeof value === 'string' && name !== 'ce_datacontenttype' && name !== 'ce_partitionkey'),
  ) as Record<string, string>;
}

const messages: [string, OutgoingMessage][] = [
  ...ALL_EVENT_TYPES.map((type): [string, OutgoingMessage] => [type, toOutgoingMessage(recorded(type, 2), topics)]),
  ['an unknown type', toOutgoingMessage(recorded('LimitsChanged', 3, { type: 'AliasesObserved', stream: 'company-1337-aliases', data: {}, metadata: {} }), topics)],
  ['a balance', toBalanceMessage('ws_01JTESTWORKSPACE0000000000', 9, recorded('CreditsGranted', 4), topics)],
];

describe('CloudEvents binary mode, held to the cloudevents SDK', () => {
  it.each(messages)('%s: the SDK reads a valid CloudEvent 1.0 whose data is the message value', (_name, message) => {
    const event = strictly(readWithSdk(message));
    expect(event.specversion).toBe('1.0');
    expect(event.id).toBe(message.headers.ce_id);
    expect(event.datacontenttype).toBe('application/json');
    expect(event.data).toEqual(JSON.parse(message.value));
  });

  it.each(messages)('%s: the ce_ headers are those the SDK\'s Kafka.binary makes of the same attributes', (_name, message) => {
    const ours = Object.fromEntries(Object.entries(message.headers).filter(([name]) => name.startsWith('ce_') || name === 'content-type'));
    expect(ours).toEqual(sdkBinaryHeaders(readWithSdk(message)));
  });

  it('the strict validation used above does reject a message without ce_type', () => {
    const { ce_type: _dropped, ...headers } = toOutgoingMessage(recorded('LookupCharged'), topics).headers;
    const read = readWithSdk({ ...toOutgoingMessage(recorded('LookupCharged'), topics), headers });
    expect(() => strictly(read)).toThrow(/invalid payload|type/i);
  });
});
