// Usage: tsx infra/scripts/with-servers.ts <command> [args...]
// Ensures PostgreSQL, Redis and Kafka, runs the command with DATABASE_URL, REDIS_URL and
// KAFKA_BROKERS set, then stops a Kafka broker that test runs started (PostgreSQL and Redis stay up).
// Exits with the command's exit code. Under CI=true a server that cannot be had is fatal; elsewhere
// the run goes on without it and the suites that need it skip, loudly.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { ensureServers, releaseKafka } from './servers';
import { log } from './runtime';

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    log('usage: tsx infra/scripts/with-servers.ts <command> [args...]');
    return 2;
  }
  const underCi = process.env.CI === 'true';
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
