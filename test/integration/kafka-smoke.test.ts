// The broker the tests get (KAFKA_BROKERS) really stores and serves messages: a round trip through
// a new topic with kafkajs, the client the event publisher uses.
import { randomUUID } from 'node:crypto';
import { Kafka, Partitioners, logLevel, type Consumer } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { serverUrl } from '../support/servers';

const brokers = serverUrl('kafka');

describe.skipIf(!brokers)('Kafka broker smoke test', () => {
  const kafka = new Kafka({
    clientId: 'kafka-smoke-test',
    brokers: (brokers ?? '').split(','),
    logLevel: logLevel.WARN,
  });
  const topic = `smoke-${randomUUID()}`;
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  let consumer: Consumer | undefined;

  afterAll(async () => {
    await consumer?.disconnect();
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });

  it('delivers produced messages, in order and intact, to a consumer of a new topic', async () => {
    await admin.connect();
    const created = await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    expect(created).toBe(true);
    expect(await admin.listTopics()).toContain(topic);

    const sent = Array.from({ length: 5 }, (_, index) => ({
      key: `key-${index}`,
      value: JSON.stringify({ index, text: `message ${index} ✓` }),
    }));
    await producer.connect();
    await producer.send({ topic, messages: sent });

    consumer = kafka.consumer({ groupId: `smoke-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received: { key: string; value: string }[] = [];
    await new Promise<void>((allReceived, failed) => {
      consumer!
        .run({
          eachMessage: async ({ message }) => {
            received.push({ key: message.key?.toString() ?? '', value: message.value?.toString() ?? '' });
            if (received.length === sent.length) allReceived();
          },
        })
        .catch(failed);
    });

    expect(received).toEqual(sent);
  });
});
