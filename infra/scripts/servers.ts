// Makes sure PostgreSQL, Redis and Kafka are reachable for local runs and CI, and says where.
// Each server is taken from its env variable if set, else from its standard local port if something
// answers there, else started here from the machine's packages (Kafka from infra/kafka's jars).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  type BrokerOwner,
  LOCAL_BROKER,
  brokerAnswers,
  dropLease,
  liveLeaseHolders,
  runningBrokerState,
  setBrokerOwner,
  startBroker,
  stopBroker,
  takeLease,
  waitForForeignBroker,
} from './kafka-broker';
import {
  ensureRunDir,
  forgetStarted,
  isPortOpen,
  isProcessAlive,
  log,
  noteStarted,
  readJson,
  readStartedNotes,
  redactUrl,
  terminate,
  waitForPort,
  withLock,
} from './runtime';

export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

/** The variables the test suites read. */
export interface ServerEnv {
  DATABASE_URL: string;
  REDIS_URL: string;
  KAFKA_BROKERS: string;
}

export async function ensurePostgres(): Promise<string> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    log(`postgres: DATABASE_URL is set, using ${redactUrl(fromEnv)}`);
    return fromEnv;
  }
  return withLock('postgres', 120_000, async () => {
    if (await isPortOpen('127.0.0.1', 5432)) {
      log(`postgres: something listens on 127.0.0.1:5432, using ${LOCAL_POSTGRES_URL}`);
    } else {
      const cluster = debianPostgresCluster();
      log(`postgres: nothing on 127.0.0.1:5432; starting Debian cluster ${cluster} with pg_ctlcluster`);
      const [version, name] = cluster.split('/');
      const start = spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'start'], {
        stdio: 'inherit',
      });
      if (start.status !== 0) throw new Error(`pg_ctlcluster ${cluster} start failed (exit ${start.status})`);
      if (!(await waitForPort('127.0.0.1', 5432, 30_000))) {
        throw new Error(`PostgreSQL cluster ${cluster} started but does not listen on 127.0.0.1:5432`);
      }
      noteStarted({ postgres: { cluster } });
    }
    await ensureDatabase(LOCAL_POSTGRES_URL);
    return LOCAL_POSTGRES_URL;
  });
}

function debianPostgresCluster(): string {
  const root = '/etc/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((entry) => /^\d+(\.\d+)?$/.test(entry)) : [];
  if (versions.length === 0) {
    throw new Error('PostgreSQL is not installed (apt-get install -y postgresql) and DATABASE_URL is not set');
  }
  const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  return `${newest}/main`;
}

/** Creates the URL's database when it is missing, connecting to the server's `postgres` database. */
async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  try {
    await client.connect();
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
      log(`postgres: created database ${database}`);
    }
  } catch (error) {
    // 42P04: another run created it between our check and our CREATE.
    if ((error as { code?: string }).code !== '42P04') {
      throw new Error(`cannot prepare database ${database} on ${redactUrl(url)}: ${(error as Error).message}`);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function ensureRedis(): Promise<string> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    log(`redis: REDIS_URL is set, using ${redactUrl(fromEnv)}`);
    return fromEnv;
  }
  return withLock('redis', 60_000, async () => {
    if (await isPortOpen('127.0.0.1', 6379)) {
      log(`redis: something listens on 127.0.0.1:6379, using ${LOCAL_REDIS_URL}`);
      return LOCAL_REDIS_URL;
    }
    const runDir = ensureRunDir();
    const pidFile = join(runDir, 'redis.pid');
    log('redis: nothing on 127.0.0.1:6379; starting redis-server (in memory only)');
    const start = spawnSync(
      'redis-server',
      [
        '--daemonize', 'yes',
        '--bind', '127.0.0.1',
        '--port', '6379',
        '--save', '',
        '--appendonly', 'no',
        '--dir', runDir,
        '--pidfile', pidFile,
        '--logfile', join(runDir, 'redis.log'),
      ],
      { stdio: 'inherit' },
    );
    if (start.error) throw new Error('redis-server is not installed (apt-get install -y redis-server) and REDIS_URL is not set');
    if (start.status !== 0) throw new Error(`redis-server failed to start (exit ${start.status})`);
    if (!(await waitForPort('127.0.0.1', 6379, 15_000))) {
      throw new Error('redis-server started but does not listen on 127.0.0.1:6379');
    }
    noteStarted({ redis: { pidFile } });
    return LOCAL_REDIS_URL;
  });
}

/**
 * A test run (`with-servers`) takes a lease on the broker so that the run ending last stops a broker
 * test runs started; `infra up` marks the broker as its own so it outlives test runs.
 */
export async function ensureKafka(owner: BrokerOwner): Promise<string> {
  const fromEnv = process.env.KAFKA_BROKERS;
  if (fromEnv) {
    log(`kafka: KAFKA_BROKERS is set, using ${fromEnv}`);
    return fromEnv;
  }
  // Long wait: the lock holder may be fetching the Kafka jars with Maven for the first time.
  return withLock('kafka', 15 * 60_000, async () => {
    if (owner === 'with-servers') takeLease();
    const ours = runningBrokerState();
    if (await brokerAnswers(LOCAL_BROKER)) {
      if (owner === 'infra-up') setBrokerOwner('infra-up');
      log(
        ours
          ? `kafka: reusing the broker these scripts started (pid ${ours.pid}) on ${LOCAL_BROKER}`
          : `kafka: a broker answers on ${LOCAL_BROKER}, using it`,
      );
      return LOCAL_BROKER;
    }
    if (ours) {
      log(`kafka: the broker these scripts started (pid ${ours.pid}) does not answer; restarting it`);
      await stopBroker();
    } else if (await isPortOpen('127.0.0.1', 9092)) {
      log('kafka: 127.0.0.1:9092 is taken but does not answer as Kafka yet; waiting up to 30 s');
      if (await waitForForeignBroker(30_000)) return LOCAL_BROKER;
      throw new Error('127.0.0.1:9092 is taken by a process that does not answer as a Kafka broker; free the port or set KAFKA_BROKERS');
    }
    log(`kafka: nothing answers on ${LOCAL_BROKER}; starting a single-node KRaft broker from infra/kafka`);
    await startBroker(owner);
    return LOCAL_BROKER;
  });
}

/** Ends a test run's use of the broker; stops it if test runs started it and no other run uses it. */
export async function releaseKafka(): Promise<void> {
  await withLock('kafka', 60_000, async () => {
    dropLease();
    const ours = runningBrokerState();
    if (ours?.owner !== 'with-servers') return;
    const others = liveLeaseHolders();
    if (others.length > 0) {
      log(`kafka: leaving the broker running for the test run(s) still using it (pid ${others.join(', ')})`);
      return;
    }
    await stopBroker();
  });
}

/**
 * Ensures all three servers. A server that cannot be had is reported in `problems` rather than
 * thrown, so the caller decides whether that is fatal (under CI) or a reason to skip suites.
 */
export async function ensureServers(owner: BrokerOwner): Promise<{ env: Partial<ServerEnv>; problems: string[] }> {
  const [postgres, redis, kafka] = await Promise.allSettled([ensurePostgres(), ensureRedis(), ensureKafka(owner)]);
  const env: Partial<ServerEnv> = {};
  const problems: string[] = [];
  if (postgres.status === 'fulfilled') env.DATABASE_URL = postgres.value;
  else problems.push(`postgres: ${(postgres.reason as Error).message}`);
  if (redis.status === 'fulfilled') env.REDIS_URL = redis.value;
  else problems.push(`redis: ${(redis.reason as Error).message}`);
  if (kafka.status === 'fulfilled') env.KAFKA_BROKERS = kafka.value;
  else problems.push(`kafka: ${(kafka.reason as Error).message}`);
  return { env, problems };
}

/** Stops what these scripts started (Kafka, and Redis / PostgreSQL only if they started them). */
export async function stopStartedServers(): Promise<void> {
  await withLock('kafka', 60_000, async () => {
    const users = liveLeaseHolders();
    if (users.length > 0 && runningBrokerState()) {
      log(`kafka: test run(s) ${users.join(', ')} still use the broker; leaving it running`);
    } else if (!(await stopBroker())) {
      log('kafka: no broker started by these scripts is running');
    }
  });

  const notes = readStartedNotes();
  if (notes.redis) {
    const pid = readJson<number>(notes.redis.pidFile);
    if (pid && isProcessAlive(pid)) {
      await terminate(pid, 10_000);
      log(`redis: stopped the redis-server these scripts started (pid ${pid})`);
    } else {
      log('redis: the redis-server these scripts started is no longer running');
    }
    forgetStarted('redis');
  } else {
    log('redis: not started by these scripts; leaving it alone');
  }

  if (notes.postgres) {
    const [version, name] = notes.postgres.cluster.split('/');
    const stop = spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'stop'], { stdio: 'inherit' });
    log(`postgres: stopping cluster ${notes.postgres.cluster} ${stop.status === 0 ? 'done' : `failed (exit ${stop.status})`}`);
    forgetStarted('postgres');
  } else {
    log('postgres: not started by these scripts; leaving it alone');
  }
}
