// Containers of the project's images (IMAGES in infra/scripts/images.ts; `npm run images` builds
// them), started with testcontainers and published on random ports of this machine: the servers of
// a test run (test/support/with-servers.ts) and the ones a failover drill owns and breaks.
//
//   const postgres = await startPostgresContainer();
//   const pool = new pg.Pool({ connectionString: postgres.url });
//   ...
//   await postgres.container.stop();       // kills and removes it
//
// Every container carries the label org.testcontainers=true: `docker rm -f $(docker ps -aq --filter
// label=org.testcontainers=true)` removes whatever a killed run left behind (no Ryuk here).
import { GenericContainer, type StartedNetwork, type StartedTestContainer, Wait } from 'testcontainers';
import { IMAGES } from '../../infra/scripts/images';
import { brokerAnswers, waitForGroupCoordinator } from '../../infra/scripts/kafka-broker';

export interface ServerContainer {
  container: StartedTestContainer;
  /** PostgreSQL: `postgres://postgres@127.0.0.1:<port>/test`; Redis: `redis://127.0.0.1:<port>`; Kafka: `127.0.0.1:<port>`. */
  url: string;
}

export interface ContainerOptions {
  /** A network of the caller's own, on which the container also answers to `alias`. */
  network?: StartedNetwork;
  alias?: string;
}

const KAFKA_START_TIMEOUT_MS = 90_000;

/**
 * PostgreSQL 15 (database `test`, user postgres, no password), `settings` passed as `-c name=value`.
 * The image also has pg_autoctl for a pg_auto_failover formation (run it with `withCommand`).
 */
export async function startPostgresContainer(
  options: ContainerOptions & { settings?: Record<string, string> } = {},
): Promise<ServerContainer> {
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const container = await prepare(IMAGES.postgres, 5432, options)
    .withCommand(['postgres', ...settings])
    .withWaitStrategy(Wait.forLogMessage('database system is ready to accept connections'))
    .start();
  return { container, url: `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/test` };
}

/** Redis 7, in memory only. */
export async function startRedisContainer(options: ContainerOptions = {}): Promise<ServerContainer> {
  const container = await prepare(IMAGES.redis, 6379, options)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .start();
  return { container, url: `redis://${container.getHost()}:${container.getMappedPort(6379)}` };
}

/**
 * A single-node KRaft Kafka broker, empty. Its published port is known only once the container runs,
 * so the address it advertises is handed to it then (infra/images/kafka/kafka-start.sh); it has
 * answered and created its offsets topic when this resolves.
 */
export async function startKafkaContainer(options: ContainerOptions = {}): Promise<ServerContainer> {
  const container = await prepare(IMAGES.kafka, 9092, options)
    .withWaitStrategy(Wait.forLogMessage('waiting for the address to advertise'))
    .start();
  try {
    const brokers = `${container.getHost()}:${container.getMappedPort(9092)}`;
    await container.exec(['sh', '-c', 'printf %s "$1" > /run/kafka/advertised.new && mv /run/kafka/advertised.new /run/kafka/advertised', 'sh', brokers]);
    const deadline = Date.now() + KAFKA_START_TIMEOUT_MS;
    while (!(await brokerAnswers(brokers, 1_000))) {
      if (Date.now() > deadline) throw new Error(`the Kafka container did not answer on ${brokers} within ${KAFKA_START_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await waitForGroupCoordinator(brokers);
    return { container, url: brokers };
  } catch (error) {
    await container.stop().catch(() => undefined);
    throw error;
  }
}

function prepare(image: string, port: number, options: ContainerOptions): GenericContainer {
  useTestcontainersDefaults();
  let container = new GenericContainer(image).withExposedPorts(port);
  if (options.network) container = container.withNetwork(options.network);
  if (options.alias) container = container.withNetworkAliases(options.alias);
  return container;
}

/** Settings testcontainers needs on these machines, unless the caller chose otherwise. */
export function useTestcontainersDefaults(): void {
  // Ryuk, the reaper container, comes from a registry, and none is reachable.
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  // Inside a container (/.dockerenv) testcontainers would start a helper image to find the engine's
  // address; the published ports are on this machine. An address, not `localhost`: no IPv6 detour.
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
}
