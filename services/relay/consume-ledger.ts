// Usage: npm run consume -- [--from-beginning] [--group <id>] [--topic-prefix <p>]
// A real analytics consumer: reads lookup.ledger.v1 from KAFKA_BROKERS and prints each workspace's
// running balance, dropping re-delivered events by their event id. Ctrl-C prints the totals.
// Without --group it joins a new consumer group each run (nothing resumes); with --group it
// resumes from that group's committed offsets, and --from-beginning only applies to a new group.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { ConfigError, loadConfig } from '../config/config';
import { HEADERS } from '../../contracts/jsonschema';
import { applyLedgerEvent, emptyLedgerBalances, parsePublishedEvent } from './ledger-balances';
import { topicNames } from './routing';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'from-beginning': { type: 'boolean', default: false },
      group: { type: 'string' },
      'topic-prefix': { type: 'string', default: '' },
    },
  });
  const brokers = loadConfig(process.env, { fetches: false }).kafkaBrokers;
  if (!brokers) throw new ConfigError('KAFKA_BROKERS is required (e.g. KAFKA_BROKERS=127.0.0.1:9092)');
  const topic = topicNames(values['topic-prefix']).ledger;
  const groupId = values.group ?? `consume-ledger-${randomUUID()}`;

  const kafka = new Kafka({ clientId: 'consume-ledger', brokers, logLevel: logLevel.WARN });
  const consumer = kafka.consumer({ groupId });
  const state = emptyLedgerBalances();

  const shutdown = async () => {
    await consumer.disconnect().catch((err: unknown) => console.error(`disconnecting from the broker failed: ${err instanceof Error ? err.message : String(err)}`));
    console.log(`\n${state.balances.size} workspaces, ${state.applied} events applied, ${state.duplicates} duplicates dropped`);
    for (const [workspaceId, balance] of [...state.balances].sort(([a], [b]) => a.localeCompare(b))) {
      console.log(`${workspaceId}\t${balance}`);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());

  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: values['from-beginning'] });
  console.error(`reading ${topic} from ${brokers.join(',')} as group ${groupId}; Ctrl-C for the totals`);
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const event = parsePublishedEvent(message.value);
      const step = applyLedgerEvent(state, event);
      if (step.kind === 'duplicate') {
        console.log(`duplicate ${step.eventId} dropped (${message.headers?.[HEADERS.type]?.toString() ?? event.type})`);
      } else if (step.kind === 'applied') {
        const sign = step.delta >= 0 ? '+' : '';
        console.log(`${step.workspaceId}\tbalance ${step.balance}\t(${sign}${step.delta} ${event.type} ${step.eventId} p${partition}@${message.offset})`);
      }
    },
  });
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
