// Usage: npm run relay   (KAFKA_BROKERS required; DATABASE_URL, else PGlite under DATA_DIR)
// Runs the Kafka relay alone. With the embedded database, only one process can open DATA_DIR, so
// there the relay belongs inside the API process instead (`npm start` with KAFKA_BROKERS set).
import { ConfigError, loadConfig } from '../config/config';
import { EventStore } from '../eventstore/event-store';
import { migrate } from '../eventstore/migrate';
import type { Sql } from '../eventstore/sql';
import { createPgSql } from '../eventstore/sql-pg';
import { createPgliteSql } from '../eventstore/sql-pglite';
import { INLINE_PROJECTIONS } from '../projections/inline';
import { jsonLineLogger, startRelay } from './relay';

const LAG_REPORT_INTERVAL_MS = 30_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env, { fetches: false });
  if (!config.kafkaBrokers) throw new ConfigError('KAFKA_BROKERS is required for the relay (e.g. KAFKA_BROKERS=127.0.0.1:9092)');
  const logger = jsonLineLogger(process.stdout);
  const sql: Sql = config.databaseUrl ? createPgSql(config.databaseUrl, { max: 4, queryTimeoutMillis: config.databaseQueryTimeoutMs }) : await createPgliteSql(config.dataDir);
  await migrate(sql);
  const store = new EventStore(sql, INLINE_PROJECTIONS);
  const relay = await startRelay({ store, brokers: config.kafkaBrokers, logger });
  logger.info({ brokers: config.kafkaBrokers, database: sql.backend, topics: relay.topics }, 'kafka relay started');

  const report = setInterval(() => {
    relay.lag().then(
      (lag) => logger.info({ lag }, 'kafka relay lag'),
      (err: unknown) => logger.error({ err: String(err) }, 'cannot read the relay lag'),
    );
  }, LAG_REPORT_INTERVAL_MS);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(report);
    logger.info({ signal }, 'kafka relay stopping');
    await relay.stop();
    await sql.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
