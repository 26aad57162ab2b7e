import { Kafka, Partitioners, logLevel as KafkaLogLevel, type Producer } from 'kafkajs';
import type { EventStore } from '../eventstore/event-store';
import { readCheckpoint, startSubscription, type SubscriptionHandler } from '../eventstore/subscription';
import type { Checkpoint } from '../eventstore/types';
import { recordRelayPublishError } from '../metrics/metrics';
import { balanceMessages } from './balances-topic';
import { byTopic, chunkBySize, toOutgoingMessage, topicConfigEntries, topicNames, type TopicNames } from './routing';

/**
 * The Kafka relay: a checkpointed subscription to the global log (the event store's own
 * subscription loop) that publishes every event. Each batch is published inside the
 * subscription's transaction and the checkpoint commits only after the broker acknowledged every
 * message (acks = all), so a crash or a lost broker at any point means "sent again", never
 * "lost". Re-sent messages carry the same `event-id`.
 */

export const RELAY_SUBSCRIPTION = 'kafka-relay';

/** pino-compatible (fastify's `app.log` fits), so the API can hand over its own logger. */
export interface RelayLogger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export interface RelayOptions {
  store: EventStore;
  brokers: string[];
  clientId?: string;
  logger?: RelayLogger;
  /** Prepended to every topic name; tests use a unique one per run. Default: none. */
  topicPrefix?: string;
  /** Partitions of each topic when the relay creates it (default 3); replication is the broker's default. */
  partitions?: number;
  /**
   * retention.ms of the topics the relay creates. Default -1, kept forever: a new consumer can
   * rebuild every balance from the topic alone. Existing topics keep their settings. The balances
   * topic is created compacted as well.
   */
  retentionMs?: number;
  /** Events per transaction (default 500). */
  batchSize?: number;
  /** Bytes per produce request; bigger batches go in several requests, in order (default 512 KiB). */
  maxRequestBytes?: number;
  /** How often to look for new events when nothing woke the relay (default 200 ms). */
  pollIntervalMs?: number;
  /** Backoff after a failure: first delay and cap (default 250 ms, 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long one request to the broker may take before it counts as failed (default 10 s). */
  requestTimeoutMs?: number;
  /** Name of the checkpoint (default `kafka-relay`). */
  subscriptionName?: string;
}

export interface RelayLag {
  /** Events committed to the log and not yet acknowledged by Kafka. */
  events: number;
  /** Age of the oldest of them; null when there are none. */
  oldestAgeMs: number | null;
  checkpoint: Checkpoint;
  /** False until the relay reached the broker, and again after a failure until it is back. */
  connected: boolean;
  /** The last failure, until the next successful batch. */
  lastError: string | null;
  /** Events this process published and had acknowledged since it started. */
  publishedSinceStart: number;
  lastPublishedAt: string | null;
}

export interface RunningRelay {
  /** Finishes the batch in flight (its checkpoint commits or rolls back), then disconnects. */
  stop(): Promise<void>;
  lag(): Promise<RelayLag>;
  /** Resolves once everything committed before the call is published (waits through outages). */
  settled(): Promise<void>;
  readonly topics: TopicNames;
}

/**
 * Starts the relay and returns at once: an unreachable broker is retried with backoff in the
 * background (the lag grows meanwhile), it never throws into the caller.
 */
export async function startRelay(options: RelayOptions): Promise<RunningRelay> {
  if (options.brokers.length === 0) throw new Error('startRelay needs at least one broker');
  const store = options.store;
  const name = options.subscriptionName ?? RELAY_SUBSCRIPTION;
  const logger = options.logger ?? jsonLineLogger();
  const topics = topicNames(options.topicPrefix);
  const batchSize = options.batchSize ?? 500;
  const maxRequestBytes = options.maxRequestBytes ?? 512 * 1024;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const requestTimeout = options.requestTimeoutMs ?? 10_000;

  const kafka = new Kafka({
    clientId: options.clientId ?? 'lookup-api-relay',
    brokers: options.brokers,
    // The relay reports failures itself, once per outage, rather than kafkajs's line per retry.
    logLevel: KafkaLogLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout,
    // Few quick retries inside a send: the database transaction is open meanwhile. Longer
    // outages are the relay loop's business, with backoff and no transaction held.
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1_000 },
  });

  let producer: Producer | undefined;
  let topicsReady = false;
  let connected = false;
  let lastError: string | null = null;
  let failuresSinceConnected = 0;
  let publishedSinceStart = 0;
  let lastPublishedAt: string | null = null;
  let stopping: Promise<void> | undefined;
  let settleWaiters: Array<{ target: Checkpoint; resolve: () => void }> = [];

  /** A failed disconnect only leaves a connection to drop: worth a line, never a failure. */
  const disconnectOrLog = (what: string, client: { disconnect(): Promise<void> }) =>
    client.disconnect().catch((err: unknown) => logger.warn({ relay: name, err: errorText(err) }, `kafka relay: closing the ${what} failed`));

  async function ensureTopics(): Promise<void> {
    if (topicsReady) return;
    const admin = kafka.admin();
    await admin.connect();
    try {
      // Idempotent: existing topics are left as they are.
      await admin.createTopics({
        waitForLeaders: true,
        topics: Object.entries(topics).map(([kind, topic]) => ({
          topic,
          numPartitions: options.partitions ?? 3,
          configEntries: topicConfigEntries(kind as keyof TopicNames, options.retentionMs),
        })),
      });
    } finally {
      await disconnectOrLog('admin client', admin);
    }
    topicsReady = true;
  }

  async function connectProducer(): Promise<void> {
    if (producer) return;
    await ensureTopics();
    const fresh = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // murmur2, as the Java client: consumers in any language agree on key → partition.
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1_000 },
    });
    await fresh.connect();
    producer = fresh;
  }

  /** After any failure: a new producer (new producer id, sequences from 0) for the re-send. */
  async function dropProducer(): Promise<void> {
    const old = producer;
    producer = undefined;
    if (old) await disconnectOrLog('producer', old);
  }

  /** Reads the checkpoint (this or another instance may have moved it) and frees who waited for it. */
  async function releaseSettledWaiters(): Promise<void> {
    if (settleWaiters.length === 0) return;
    const checkpoint = await readCheckpoint(store, name);
    const waiting = settleWaiters;
    settleWaiters = [];
    for (const waiter of waiting) {
      if (compareCheckpoints(checkpoint, waiter.target) >= 0) waiter.resolve();
      else settleWaiters.push(waiter);
    }
  }

  const handler: SubscriptionHandler = {
    name,
    async handle(tx, events) {
      // Connected by beforeBatch, and dropped only between attempts.
      const p = producer!;
      const messages = [...events.map((event) => toOutgoingMessage(event, topics)), ...(await balanceMessages(tx, events, topics))];
      for (const chunk of chunkBySize(messages, maxRequestBytes)) {
        await p.sendBatch({ acks: -1, timeout: requestTimeout, topicMessages: byTopic(chunk) });
      }
    },
  };

  const subscription = startSubscription(store, handler, {
    batchSize,
    pollIntervalMs,
    backoff: options.backoff ?? {},
    // Connecting happens outside the batch's transaction: none stays open while the broker is away.
    beforeBatch: connectProducer,
    async afterBatch(outcome) {
      if (!connected || failuresSinceConnected > 0) {
        logger.info({ relay: name, after_failures: failuresSinceConnected }, 'kafka relay connected');
      }
      connected = true;
      failuresSinceConnected = 0;
      lastError = null;
      if (outcome.kind === 'processed') {
        publishedSinceStart += outcome.count;
        lastPublishedAt = new Date().toISOString();
      }
      await releaseSettledWaiters();
    },
    async onError(err) {
      recordRelayPublishError();
      failuresSinceConnected += 1;
      connected = false;
      const message = errorText(err);
      // One line when an outage starts or its cause changes, then every 20th attempt.
      if (message !== lastError || failuresSinceConnected % 20 === 1) {
        logger.warn({ relay: name, err: message, failures: failuresSinceConnected }, 'kafka relay cannot publish; retrying with backoff');
      }
      lastError = message;
      await dropProducer();
    },
  });

  return {
    topics,
    stop() {
      stopping ??= subscription.stop().then(dropProducer);
      return stopping;
    },
    async lag() {
      const pending = await pendingEvents(store, name);
      return { ...pending, connected, lastError, publishedSinceStart, lastPublishedAt };
    },
    async settled() {
      const target = await store.lastEvent();
      if (!target) return;
      await new Promise<void>((resolve) => {
        settleWaiters.push({ target, resolve });
        subscription.wake();
      });
    },
  };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function compareCheckpoints(a: Checkpoint, b: Checkpoint): number {
  const byTransaction = BigInt(a.transactionId) - BigInt(b.transactionId);
  if (byTransaction !== 0n) return byTransaction < 0n ? -1 : 1;
  return Math.sign(a.position - b.position);
}

/** Events after the relay's checkpoint (usable from any process sharing the database). */
export async function pendingEvents(
  store: EventStore,
  name = RELAY_SUBSCRIPTION,
): Promise<{ events: number; oldestAgeMs: number | null; checkpoint: Checkpoint }> {
  const checkpoint = await readCheckpoint(store, name);
  const { rows } = await store.sql.query<{ events: number; oldest_age_ms: number | string | null }>(
    `SELECT count(*) AS events,
            (extract(epoch FROM (clock_timestamp() - min(recorded_at))) * 1000)::float8 AS oldest_age_ms
       FROM events
      WHERE (transaction_id, position) > ($1::xid8, $2::bigint)`,
    [checkpoint.transactionId, checkpoint.position],
  );
  const row = rows[0];
  const age = row?.oldest_age_ms;
  return {
    events: Number(row?.events ?? 0),
    oldestAgeMs: age === null || age === undefined ? null : Math.max(0, Math.round(Number(age))),
    checkpoint,
  };
}

/** Default logger: one JSON object per line on stderr. */
export function jsonLineLogger(stream: NodeJS.WritableStream = process.stderr): RelayLogger {
  const write = (level: string) => (fields: object, message?: string) =>
    stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`);
  return { info: write('info'), warn: write('warn'), error: write('error') };
}
