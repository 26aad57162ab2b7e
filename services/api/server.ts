import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config';
import { EventStore } from '../eventstore/event-store';
import { migrate } from '../eventstore/migrate';
import type { Sql } from '../eventstore/sql';
import { createPgSql } from '../eventstore/sql-pg';
import { createPgliteSql } from '../eventstore/sql-pglite';
import { startSubscription, type RunningSubscription } from '../eventstore/subscription';
import { createSqlIdempotencyStore } from '../idempotency/sql-idempotency-store';
import { Ledger } from '../ledger/ledger';
import { createMemoryConcurrencySlots } from '../limits/concurrency-memory';
import { createRedisConcurrencySlots } from '../limits/concurrency-redis';
import { createMemoryRateLimiter } from '../limits/rate-limiter-memory';
import { createRedisRateLimiter } from '../limits/rate-limiter-redis';
import { LookupService } from '../lookup/lookup-service';
import { createHttpSource } from '../lookup/source/http-source';
import { INLINE_PROJECTIONS } from '../projections/inline';
import { usageProjection } from '../projections/usage';
import { startRelay } from '../relay/relay';
import { startSandbox } from '../sandbox/server';
import { buildApp } from './app';
import { KeyAuthenticator } from './auth';
import { createRedisRevocationMarks } from './revocation-marks-redis';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  store: EventStore;
  close(): Promise<void>;
}

/** Abandoned charges are looked for this often. */
const SWEEP_EVERY_MS = 30_000;
/** Expired idempotency records are purged this often. */
const PURGE_EVERY_MS = 10 * 60_000;

/** The composition root: every adapter chosen from the one configuration object. */
export async function startServer(config: Config): Promise<RunningServer> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    const sql: Sql = config.databaseUrl ? createPgSql(config.databaseUrl) : await createPgliteSql(config.dataDir);
    closers.push(() => sql.close());
    await migrate(sql);
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    const ledger = new Ledger(store);

    const usage: RunningSubscription = startSubscription(store, usageProjection, { pollIntervalMs: 500 });
    closers.push(() => usage.stop());

    let sourceUrl = config.sourceUrl;
    if (!sourceUrl) {
      const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
      closers.push(() => sandbox.close());
      sourceUrl = sandbox.url;
    }
    const lookups = new LookupService(sql, ledger, createHttpSource({ baseUrl: sourceUrl, timeoutMs: config.sourceTimeoutMs }));

    const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }) : undefined;
    if (redis) closers.push(() => redis.quit());

    const authenticator = new KeyAuthenticator(sql, { marks: redis && createRedisRevocationMarks(redis) });
    await authenticator.start();
    closers.push(() => authenticator.stop());

    let limits;
    if (redis) {
      limits = { rateLimiter: createRedisRateLimiter(redis), slots: createRedisConcurrencySlots(redis, { leaseMs: config.concurrencyLeaseMs }) };
    } else {
      limits = { rateLimiter: createMemoryRateLimiter(), slots: createMemoryConcurrencySlots({ leaseMs: config.concurrencyLeaseMs }) };
    }
    closers.push(() => limits.rateLimiter.close(), () => limits.slots.close());

    const idempotency = createSqlIdempotencyStore(sql, { lockTtlMs: config.idempotencyLockTtlMs });
    const purge = setInterval(() => void idempotency.purgeExpired().catch(() => {}), PURGE_EVERY_MS);
    purge.unref();
    closers.push(async () => clearInterval(purge));

    // A lookup whose instance died between charge and settle is refunded once it is clearly
    // abandoned: well past the longest a live fetch may take.
    const abandonedAfterMs = config.sourceTimeoutMs + 60_000;
    const sweep = setInterval(() => void ledger.refundAbandonedCharges(abandonedAfterMs).catch(() => {}), SWEEP_EVERY_MS);
    sweep.unref();
    closers.push(async () => clearInterval(sweep));

    let relayLag: (() => Promise<unknown>) | undefined;
    if (config.kafkaBrokers) {
      const relay = await startRelay({ store, brokers: config.kafkaBrokers });
      closers.push(() => relay.stop());
      relayLag = () => relay.lag();
    }

    const app = await buildApp({ config, store, ledger, lookups, authenticator, ...limits, idempotency, relayLag });
    closers.push(() => app.close());
    const url = await app.listen({ host: config.host, port: config.port });
    return { app, url, store, close };
  } catch (err) {
    await close();
    throw err;
  }
}
