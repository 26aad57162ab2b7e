import type { FastifyInstance } from 'fastify';
import { backgroundLogger, everyNthError } from '../common/log';
import type { Config } from '../config/config';
import { EventStore } from '../eventstore/event-store';
import { migrate } from '../eventstore/migrate';
import type { Sql } from '../eventstore/sql';
import { createPgSql } from '../eventstore/sql-pg';
import { createPgliteSql } from '../eventstore/sql-pglite';
import { startSubscription, type RunningSubscription } from '../eventstore/subscription';
import { createSqlIdempotencyStore } from '../idempotency/sql-idempotency-store';
import { withReleaseRetries } from '../idempotency/release-retries';
import { Keys } from '../keys/keys';
import { Ledger } from '../ledger/ledger';
import { ReadModels } from '../read-models/read-models';
import { Workspaces } from '../workspaces/workspaces';
import type { ConcurrencySlots } from '../limits/concurrency';
import { createMemoryConcurrencySlots } from '../limits/concurrency-memory';
import { createRedisLimits } from '../limits/admission-redis';
import type { KeyAdmission } from '../limits/admission';
import { createMemoryRateLimiter } from '../limits/rate-limiter-memory';
import type { RateLimiter } from '../limits/rate-limiter';
import { closeRedisConnection, createRedisConnection, startRedisConnection } from '../limits/redis-connection';
import { LookupService } from '../lookup/lookup-service';
import { createHttpSource } from '../lookup/source/http-source';
import { INLINE_PROJECTIONS } from '../projections/inline';
import { usageProjection } from '../projections/usage';
import { eventsBehind } from '../health/lag';
import { InstanceLifecycle } from '../health/readiness';
import { instrumentedSource } from '../lookup/source/instrumented-source';
import { recordCommittedEvents, recordRevocationMarksRestored, registerLagSource } from '../metrics/metrics';
import { startMetricsServer } from '../metrics/metrics-server';
import { RELAY_SUBSCRIPTION, startRelay } from '../relay/relay';
import { startSandbox } from '../sandbox/server';
import { sandboxSourceOnDemand } from '../sandbox/test-key-source';
import type { Source } from '../lookup/source/source';
import { buildApp } from './app';
import { KeyAuthenticator } from '../keys/authenticator';
import { KeyUseRecorder } from '../keys/key-use';
import { CacheIndexMemory } from '../lookup/cache-index-memory';
import { createRedisRevocationMarks } from '../keys/revocation-marks-redis';
import { EmailSender } from '../email/email-outbox';
import { balanceAlertsHandler } from '../alerts/balance-alerts';
import { consoleOverviewLink } from '../console-web/console-links';
import { backgroundBaseUrl } from '../http/public-url';
import { createFolderMailer } from '../email/folder-mailer';
import { createSmtpMailer } from '../email/smtp-mailer';
import { WebhookDeliveryWorker } from '../webhooks/delivery-worker';
import { webhookDispatch } from '../webhooks/dispatcher';
import { WatchService, startWatchScheduler } from '../watches/watch-service';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** The METRICS_PORT listener's base URL, when METRICS_PORT is set. */
  metricsUrl?: string;
  store: EventStore;
  close(): Promise<void>;
}

/** Abandoned charges are looked for this often at most. */
const SWEEP_EVERY_MS = 30_000;
/** Expired idempotency records are purged this often. */
const PURGE_EVERY_MS = 10 * 60_000;
/**
 * On PGlite a subscription's transaction holds the service's one thread and the one connection the
 * group commits need, so the longer the window the longer the pass every answer waits behind: 50 ms
 * halved the p99 of 250 ms for 6 % fewer charged hits a second (docs/performance.md, "Issues 24 and
 * 27, 2026-11-27"). On PostgreSQL they run on backends of their own.
 */
const SUBSCRIPTION_COALESCE_MS: Record<Sql['backend'], number> = { postgres: 100, pglite: 50 };

/** The composition root: every adapter chosen from the one configuration object. */
export async function startServer(config: Config): Promise<RunningServer> {
  const closers: Array<() => Promise<unknown>> = [];
  // Work outside any request (connections, background loops) logs here; none of it may end the process.
  const log = backgroundLogger(config.logLevel);
  const lifecycle = new InstanceLifecycle();
  const closeAll = async () => {
    for (const c of closers.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'a shutdown step failed'));
  };
  // Readiness says `draining` from the first moment; the listener stays open DRAIN_DELAY_MS more so
  // that a load balancer probing it sees that and sends nothing new before connections are refused.
  const close = async () => {
    lifecycle.startDraining();
    if (config.drainDelayMs > 0) {
      log.info({ drain_delay_ms: config.drainDelayMs }, 'draining: readiness answers 503 until the listener closes');
      await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
    }
    await closeAll();
  };
  try {
    const sql: Sql = config.databaseUrl ? createPgSql(config.databaseUrl, { logger: log, queryTimeoutMillis: config.databaseQueryTimeoutMs }) : await createPgliteSql(config.dataDir);
    closers.push(() => sql.close());
    await migrate(sql);
    lifecycle.markMigrated();
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    const stopCounting = store.onAppended(recordCommittedEvents);
    closers.push(async () => stopCounting());
    const ledger = new Ledger(store, { logger: log });
    // Before the database closes: refunds still owed get a last chance to be written.
    closers.push(() => ledger.close());

    // Commits wake the usage projection (and the other subscriptions below) at most every
    // SUBSCRIPTION_COALESCE_MS: under load each would otherwise cost it a transaction or two; the
    // console's usage figures trail by that much at most.
    const coalesceWakesMs = SUBSCRIPTION_COALESCE_MS[sql.backend];
    const usage: RunningSubscription = startSubscription(store, usageProjection, { pollIntervalMs: 500, coalesceWakesMs, onError: everyNthError(log, 'usage projection failed; retrying') });
    closers.push(() => usage.stop());
    const usageLag = () => eventsBehind(store, usageProjection.name);
    const unregisterUsageLag = registerLagSource('usage_projection', usageLag);
    closers.push(async () => unregisterUsageLag());

    let sourceUrl: string;
    // Test keys fetch from the sandbox network whatever SOURCE_URL says: this one, or one started on their first call.
    let testSource: Source;
    if (config.source.kind === 'sandbox') {
      const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
      closers.push(() => sandbox.close());
      sourceUrl = sandbox.url;
      testSource = createHttpSource({ baseUrl: sandbox.url, timeoutMs: config.sourceTimeoutMs });
    } else {
      sourceUrl = config.source.url;
      const onDemand = sandboxSourceOnDemand({ timeoutMs: config.sourceTimeoutMs, logger: log });
      closers.push(() => onDemand.close());
      testSource = onDemand.source;
    }
    let cacheIndex: CacheIndexMemory | undefined;
    if (config.cacheIndexMaxEntries > 0) {
      const index = new CacheIndexMemory(sql, config.cacheIndexMaxEntries);
      await index.start();
      const stopForgetting = store.onAppended((committed) => index.forgetChangedBy(committed));
      closers.push(async () => {
        stopForgetting();
        await index.stop();
      });
      cacheIndex = index;
    }
    const source = createHttpSource({ baseUrl: sourceUrl, timeoutMs: config.sourceTimeoutMs });
    const lookups = new LookupService(sql, ledger, instrumentedSource(source), undefined, cacheIndex, testSource);

    // Fails fast while Redis is out (503 where it is needed) and reconnects by itself: see
    // redis-connection.ts. Connected once the app's logger exists, below.
    const redis = config.redis ? createRedisConnection(config.redis) : undefined;
    if (redis) closers.push(() => closeRedisConnection(redis));

    const authenticator = new KeyAuthenticator(sql, { marks: redis && createRedisRevocationMarks(redis), logger: log });
    await authenticator.start();
    closers.push(() => authenticator.stop());
    // On every (re)connect, this one included: the marks Redis may have lost come back from the database.
    redis?.on('ready', () => {
      authenticator.restoreMarks().then(
        (restored) => {
          recordRevocationMarksRestored(restored);
          log.info({ restored }, 'revocation marks restored from the database');
        },
        (err: unknown) => log.error({ err }, 'restoring revocation marks failed; keys revoked in the last two minutes rely on the key cache notification until the next reconnect'),
      );
    });
    const keyUse = new KeyUseRecorder(sql, { logger: log });
    // Closed after the app (closers run in reverse): the last requests' uses are written too.
    closers.push(() => keyUse.stop());

    // No lookup (so no slot to renew) runs before the app, and with it its logger, exists.
    let slotRenewalFailed: (err: unknown) => void = () => {};
    let limits: { rateLimiter: RateLimiter; slots: ConcurrencySlots; keyAdmission?: KeyAdmission };
    if (redis) {
      limits = createRedisLimits(redis, { leaseMs: config.concurrencyLeaseMs, onRenewError: (err) => slotRenewalFailed(err) });
    } else {
      limits = { rateLimiter: createMemoryRateLimiter(), slots: createMemoryConcurrencySlots({ leaseMs: config.concurrencyLeaseMs }) };
    }
    closers.push(() => limits.rateLimiter.close(), () => limits.slots.close());

    const idempotency = withReleaseRetries(createSqlIdempotencyStore(sql, { lockTtlMs: config.idempotencyLockTtlMs }), log);
    // Before the database closes (like the ledger's refunds): claims not released yet get a last chance.
    closers.push(() => idempotency.stop());
    const purge = setInterval(() => void idempotency.purgeExpired().catch((err: unknown) => log.warn({ err }, 'purging expired idempotency records failed')), PURGE_EVERY_MS);
    purge.unref();
    closers.push(async () => clearInterval(purge));

    // A lookup whose instance died between charge and settle is refunded once it is clearly
    // abandoned: past the longest a live fetch may take (config checks the grace exceeds it).
    const abandonedAfterMs = config.abandonedChargeGraceMs;
    const sweep = setInterval(
      () => void ledger.refundAbandonedCharges(abandonedAfterMs).catch((err: unknown) => log.warn({ err }, 'refunding abandoned charges failed; next sweep retries')),
      Math.min(SWEEP_EVERY_MS, Math.ceil(abandonedAfterMs / 2)),
    );
    sweep.unref();
    closers.push(async () => clearInterval(sweep));

    // Email leaves from the outbox table, whichever instance claims it: SMTP, or the outbox folder.
    const mailer = config.smtpUrl ? createSmtpMailer(config.smtpUrl) : createFolderMailer(config.outboxDir, log);
    if (!config.smtpUrl) log.info({ outbox_dir: config.outboxDir }, 'no SMTP_URL: emails are written to the outbox folder and their links logged here');
    const emailSender = new EmailSender(sql, mailer, { from: config.mailFrom, logger: log, retentionMs: config.emailOutboxRetentionMs });
    emailSender.start();
    closers.push(async () => {
      await emailSender.stop();
      await mailer.close();
    });

    // Low-balance alerts: one subscription across instances (its lock), BalanceLow and the owners' emails.
    let listening = '';
    const balanceAlerts = startSubscription(
      store,
      balanceAlertsHandler(store, { consoleUrl: () => consoleOverviewLink(backgroundBaseUrl(config, listening)), logger: log }),
      { pollIntervalMs: 500, coalesceWakesMs, onError: everyNthError(log, 'balance alerts failed; retrying') },
    );
    closers.push(() => balanceAlerts.stop());

    let relayLag: (() => Promise<unknown>) | undefined;
    if (config.kafkaBrokers) {
      const relay = await startRelay({ store, brokers: config.kafkaBrokers, logger: log });
      closers.push(() => relay.stop());
      relayLag = () => relay.lag();
      const relayBehind = () => eventsBehind(store, RELAY_SUBSCRIPTION);
      const unregisterRelayLag = registerLagSource('relay', relayBehind);
      closers.push(async () => unregisterRelayLag());
    }

    // Webhooks: events of the log become deliveries (one subscription across instances), and
    // every instance sends what is due (claimed row by row).
    const dispatch = startSubscription(store, webhookDispatch, { pollIntervalMs: config.webhooks.pollMs, coalesceWakesMs, onError: everyNthError(log, 'webhook dispatch failed; retrying') });
    closers.push(() => dispatch.stop());
    const deliveries = new WebhookDeliveryWorker(store, { settings: config.webhooks, logger: log });
    deliveries.start();
    closers.push(() => deliveries.stop());
    const accounts = { workspaces: new Workspaces(store), keys: new Keys(store, authenticator), readModels: new ReadModels(sql) };
    // Watches: every instance runs the schedule; each due watch is claimed by one of them.
    const scheduler = startWatchScheduler(new WatchService(store, lookups, accounts.readModels, { logger: log, sourceTimeoutMs: config.sourceTimeoutMs }), config.watchPollMs, log);
    closers.push(() => scheduler.stop());
    const app = await buildApp({ config, store, ledger, ...accounts, lookups, authenticator, keyUse, ...limits, idempotency, relayLag, lifecycle });
    closers.push(() => app.close());
    slotRenewalFailed = (err) => app.log.warn({ err }, 'concurrency slot renewal failed; retried on the next tick');
    if (redis) await startRedisConnection(redis, app.log.child({ component: 'redis' }));
    let metricsUrl: string | undefined;
    if (config.metricsPort !== undefined) {
      const metrics = await startMetricsServer(config.host, config.metricsPort, (err) => log.error({ err }, 'collecting the metrics failed'));
      closers.push(() => metrics.close());
      metricsUrl = metrics.url;
    }
    lifecycle.markStarted();
    const url = await app.listen({ host: config.host, port: config.port });
    listening = url;
    return { app, url, metricsUrl, store, close };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

