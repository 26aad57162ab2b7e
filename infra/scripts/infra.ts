// Usage: tsx infra/scripts/infra.ts up|down
//   up    ensures PostgreSQL, Redis and Kafka and leaves them running; prints `export` lines for
//         DATABASE_URL, REDIS_URL and KAFKA_BROKERS on stdout (eval "$(npx tsx infra/scripts/infra.ts up)")
//   down  stops the Kafka broker these scripts started, and Redis / PostgreSQL only if these scripts
//         started them
import { ensureServers, stopStartedServers } from './servers';
import { log } from './runtime';

async function main(action: string | undefined): Promise<number> {
  if (action === 'up') {
    const { env, problems } = await ensureServers('infra-up');
    for (const [name, value] of Object.entries(env)) process.stdout.write(`export ${name}='${value}'\n`);
    for (const problem of problems) log(`UNAVAILABLE ${problem}`);
    return problems.length > 0 ? 1 : 0;
  }
  if (action === 'down') {
    await stopStartedServers();
    return 0;
  }
  log('usage: tsx infra/scripts/infra.ts up|down');
  return 2;
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: Error) => {
    log(`failed: ${error.stack ?? error.message}`);
    process.exit(1);
  },
);
