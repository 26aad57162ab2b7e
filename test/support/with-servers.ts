// Usage: tsx test/support/with-servers.ts <command> [args...]
// Runs the command with DATABASE_URL, REDIS_URL and KAFKA_BROKERS set, to servers of this run's own:
// containers of the project's images (containers.ts) on random ports, started once for
// the whole run and removed at its end. Where no Docker engine answers, the servers of
// infra/scripts/servers.ts instead (the standard local ports, else started from Debian's packages),
// as before; a variable already set is used as it is. TEST_SERVERS=containers makes containers
// required, TEST_SERVERS=local skips them. Exits with the command's exit code. Under CI=true a server
// that cannot be had is fatal; elsewhere the run goes on without it and the suites that need it skip,
// loudly.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { StartedTestContainer } from 'testcontainers';
import {
  type ServerContainer,
  startKafkaContainer,
  startPostgresContainer,
  startRedisContainer,
} from './containers';
import { buildImages, dockerEngineAnswers } from '../../infra/scripts/images';
import { type ServerEnv, ensureServers, releaseKafka } from '../../infra/scripts/servers';
import { log } from '../../infra/scripts/runtime';

type ServerSource = 'containers' | 'local';

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    log('usage: tsx test/support/with-servers.ts <command> [args...]');
    return 2;
  }
  const underCi = process.env.CI === 'true';
  const requested = requestedSource();
  if (requested !== 'local') {
    const containers = await startContainers();
    if (containers.ok) {
      try {
        return await run(command, args, { ...process.env, ...containers.env });
      } finally {
        await stopContainers(containers.started);
      }
    }
    if (requested === 'containers') {
      log(`containers: ${containers.reason}; TEST_SERVERS=containers, so not running the tests`);
      return 1;
    }
    log(`containers: ${containers.reason}; using the local servers instead`);
  }
  try {
    const { env, problems } = await ensureServers('with-servers');
    for (const problem of problems) log(`UNAVAILABLE ${problem}`);
    if (problems.length > 0) {
      if (underCi) {
        log('CI=true: every server is required; not running the tests');
        return 1;
      }
      log('not under CI: running anyway; suites that need a missing server will be skipped');
    }
    return await run(command, args, { ...process.env, ...env });
  } finally {
    await releaseKafka().catch((error: Error) => log(`kafka: could not release the broker: ${error.message}`));
  }
}

function requestedSource(): ServerSource | 'auto' {
  const value = process.env.TEST_SERVERS;
  if (value === undefined || value === '') return 'auto';
  if (value === 'containers' || value === 'local') return value;
  throw new Error(`TEST_SERVERS must be containers or local, not ${JSON.stringify(value)}`);
}

type ContainerStart =
  | { ok: true; env: Partial<ServerEnv>; started: StartedTestContainer[] }
  | { ok: false; reason: string };

/** One container per server whose variable is not set, started in parallel. */
async function startContainers(): Promise<ContainerStart> {
  const starters: Record<keyof ServerEnv, () => Promise<ServerContainer>> = {
    // The run's data goes with its container: durability against a crash of the machine buys nothing.
    // Every suite shares this server, each with its pools and audit workers: PostgreSQL's default
    // of 100 connections is too few for the whole run at once.
    DATABASE_URL: () => startPostgresContainer({ settings: { fsync: 'off', max_connections: '300' } }),
    REDIS_URL: () => startRedisContainer(),
    KAFKA_BROKERS: () => startKafkaContainer(),
  };
  const wanted = (Object.keys(starters) as (keyof ServerEnv)[]).filter((variable) => !process.env[variable]);
  for (const variable of Object.keys(starters) as (keyof ServerEnv)[]) {
    if (process.env[variable]) log(`containers: ${variable} is set, using it`);
  }
  if (wanted.length === 0) return { ok: true, env: {}, started: [] };
  if (!dockerEngineAnswers()) return { ok: false, reason: 'no Docker engine answers' };
  try {
    await buildImages();
  } catch (error) {
    return { ok: false, reason: `the images cannot be built: ${(error as Error).message}` };
  }
  const started = Date.now();
  const results = await Promise.allSettled(
    wanted.map(async (variable) => {
      const began = Date.now();
      const server = await starters[variable]();
      log(`containers: ${variable}=${server.url} (${server.container.getName().replace(/^\//, '')}) in ${seconds(Date.now() - began)}`);
      return [variable, server] as const;
    }),
  );
  const servers = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [(result.reason as Error).message] : []));
  if (failures.length > 0) {
    await stopContainers(servers.map(([, server]) => server.container));
    return { ok: false, reason: `a container did not start: ${failures.join('; ')}` };
  }
  log(`containers: ${servers.length} started in ${seconds(Date.now() - started)}`);
  return {
    ok: true,
    env: Object.fromEntries(servers.map(([variable, server]) => [variable, server.url])),
    started: servers.map(([, server]) => server.container),
  };
}

async function stopContainers(containers: StartedTestContainer[]): Promise<void> {
  if (containers.length === 0) return;
  const started = Date.now();
  const results = await Promise.allSettled(containers.map((container) => container.stop()));
  for (const result of results) {
    if (result.status === 'rejected') log(`containers: could not remove one: ${(result.reason as Error).message}`);
  }
  log(`containers: ${containers.length} removed in ${seconds(Date.now() - started)}`);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((finish) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, forward(signal));
    child.once('error', (error) => {
      log(`cannot run ${command}: ${error.message}`);
      finish(127);
    });
    child.once('exit', (code, signal) => {
      finish(code ?? 128 + (signal ? constants.signals[signal] : 1));
    });
  });
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    log(`failed: ${error.stack ?? error.message}`);
    process.exit(1);
  },
);
