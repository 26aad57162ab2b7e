// A pg_auto_failover formation in containers of the project's PostgreSQL image (test/support/
// containers.ts): a monitor and two nodes on a Docker network of the test's own, with synchronous
// replication (pg_auto_failover sets `synchronous_standby_names = 'ANY 1 (…)'`), each node published
// on a fixed port of this machine so a restarted container keeps its address. A drill breaks the
// primary (kill, pause, firewall) and the formation heals itself: the monitor promotes the secondary,
// the old primary rejoins as secondary once it is back.
//
//   const formation = await startFormation();
//   const url = formation.databaseUrl;   // postgres://postgres@127.0.0.1:<a>,127.0.0.1:<b>/db?target_session_attrs=read-write
//   await formation.kill(await formation.primary());
//   await formation.waitHealthy();
//   await formation.remove();
//
// Everything carries the label org.testcontainers=true (testcontainers puts it on containers and
// networks). Each suite calls `formationAvailable()` first: without a Docker engine or the image it
// skips loudly, under CI=true it fails.
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { GenericContainer, Network, type StartedNetwork, type StartedTestContainer, Wait } from 'testcontainers';
import { IMAGES } from '../../infra/scripts/images';
import { useTestcontainersDefaults } from './containers';
import { freePort } from './private-servers';

const MONITOR_PGDATA = '/var/lib/postgresql/monitor';
const NODE_PGDATA = '/var/lib/postgresql/node';
const DATABASE = 'db';
const FORMATION_START_TIMEOUT_MS = 120_000;

/**
 * The monitor's health checks, shortened from their defaults (a check every 5 s, a node unhealthy
 * after 20 s, the demote timeout 30 s) so a failover takes seconds: a drill measures the service's
 * part of the window, not the monitor's patience.
 */
const MONITOR_SETTINGS: Record<string, string> = {
  'pgautofailover.health_check_period': '1000',
  'pgautofailover.health_check_timeout': '1000',
  'pgautofailover.health_check_max_retries': '1',
  'pgautofailover.health_check_retry_delay': '500',
  'pgautofailover.node_considered_unhealthy_timeout': '2000',
  'pgautofailover.primary_demote_timeout': '5000',
};

export interface FormationNode {
  /** node1, node2: the name in the monitor and on the network. */
  name: string;
  /** The port on 127.0.0.1 this node is published on. */
  port: number;
  container: StartedTestContainer;
}

export interface NodeState {
  name: string;
  reported: string;
  assigned: string;
}

export interface Formation {
  /** Both nodes, node1 listed first, as the service gets them. */
  databaseUrl: string;
  nodes: FormationNode[];
  /** The node the monitor holds as primary (reported and assigned). */
  primary(): Promise<FormationNode>;
  states(): Promise<NodeState[]>;
  /** Until one node is primary and the other secondary, both settled; returns the primary. */
  waitHealthy(timeoutMs?: number): Promise<FormationNode>;
  /** Rows of a statement on one node, through its published port. */
  query<R extends pg.QueryResultRow>(node: FormationNode, text: string, values?: unknown[]): Promise<R[]>;
  /** `docker kill`: PostgreSQL and its keeper die at once, nothing flushed. */
  kill(node: FormationNode): Promise<void>;
  /** `docker start` of a killed node: its keeper rejoins the formation. */
  start(node: FormationNode): Promise<void>;
  /** `docker pause` / `unpause`: every process of the node frozen; its TCP stack still accepts. */
  pause(node: FormationNode): Promise<void>;
  unpause(node: FormationNode): Promise<void>;
  /** Every packet in or out of the node dropped (iptables in its network namespace), and back. */
  cutOff(node: FormationNode): Promise<void>;
  reconnect(node: FormationNode): Promise<void>;
  /** `pg_autoctl perform switchover` on the monitor; resolves once it is done. */
  switchover(): Promise<void>;
  /** The monitor's recent events, for a failure message. */
  events(): Promise<string>;
  remove(): Promise<void>;
}

/** True when a Docker engine answers, the PostgreSQL image is built and iptables can be run; otherwise warns (or throws under CI). */
export function formationAvailable(suite: string): boolean {
  const missing: string[] = [];
  const docker = spawnSync('docker', ['image', 'inspect', IMAGES.postgres], { stdio: 'ignore', timeout: 10_000 });
  if (docker.error || docker.status !== 0) missing.push(`a Docker engine with the image ${IMAGES.postgres} (npm run images)`);
  for (const tool of ['iptables', 'nsenter']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0) missing.push(tool);
  }
  if (missing.length === 0) return true;
  const message = `${suite} needs ${missing.join(', ')}`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING ${suite}: ${message} !!!\n`);
  return false;
}

export async function startFormation(): Promise<Formation> {
  useTestcontainersDefaults();
  const network = await new Network().start();
  const started: StartedTestContainer[] = [];
  try {
    const monitor = await startWithLog(
      new GenericContainer(IMAGES.postgres)
      .withNetwork(network)
      .withNetworkAliases('monitor')
      .withCommand(['pg_autoctl', 'create', 'monitor', '--pgdata', MONITOR_PGDATA, '--pgport', '5432', '--hostname', 'monitor', '--auth', 'trust', '--no-ssl', '--run'])
      .withWaitStrategy(Wait.forLogMessage('Contacting the monitor to LISTEN').withStartupTimeout(FORMATION_START_TIMEOUT_MS)),
      'monitor',
    );
    const settings = Object.entries(MONITOR_SETTINGS).flatMap(([name, value]) => ['-c', `ALTER SYSTEM SET ${name} = ${value}`]);
    await exec(monitor, ['psql', '-v', 'ON_ERROR_STOP=1', '-d', 'pg_auto_failover', ...settings, '-c', 'SELECT pg_reload_conf()']);

    const node1 = await startNode(network, 'node1');
    started.push(node1.container);
    await waitForStates(monitor, (s) => s.some((n) => n.name === 'node1' && n.reported === 'single'), FORMATION_START_TIMEOUT_MS);
    // pg_autoctl lets in the formation's network; the service comes through a published port,
    // from whichever gateway address the engine uses. The second node copies this file.
    await exec(node1.container, ['sh', '-c', `echo 'host all all all trust' >> ${NODE_PGDATA}/pg_hba.conf && psql -d ${DATABASE} -c 'SELECT pg_reload_conf()'`]);
    // The second node's pg_basebackup waits for a spread checkpoint of the first (minutes on an
    // idle server): ask for one until it is done.
    const checkpoints = setInterval(() => void queryNode(node1, 'CHECKPOINT').catch(() => undefined), 2_000);
    let formation: Formation;
    try {
      const node2 = await startNode(network, 'node2');
      started.push(node2.container);
      formation = formationOf(network, monitor, [node1, node2]);
      await formation.waitHealthy(FORMATION_START_TIMEOUT_MS);
    } finally {
      clearInterval(checkpoints);
    }
    return formation;
  } catch (error) {
    for (const container of started.reverse()) await container.stop().catch(() => undefined);
    await network.stop().catch(() => undefined);
    throw error;
  }
}

async function startNode(network: StartedNetwork, name: string): Promise<FormationNode> {
  const port = await freePort();
  // A restarted container (after `docker kill`) runs the same command: the node it already is
  // (a stale pid file of the last run removed), else a new one registered with the monitor.
  const script = [
    'rm -rf /tmp/pg_autoctl',
    `if [ -e "$HOME/.config/pg_autoctl${NODE_PGDATA}/pg_autoctl.cfg" ]; then exec pg_autoctl run --pgdata ${NODE_PGDATA}; fi`,
    `exec pg_autoctl create postgres --pgdata ${NODE_PGDATA} --pgport 5432 --hostname ${name} --name ${name} --auth trust --no-ssl --pg-hba-lan` +
      ` --dbname ${DATABASE} --monitor 'postgres://autoctl_node@monitor:5432/pg_auto_failover?sslmode=disable' --run`,
  ].join('\n');
  const container = await startWithLog(
    new GenericContainer(IMAGES.postgres)
    .withNetwork(network)
    .withNetworkAliases(name)
    .withExposedPorts({ container: 5432, host: port })
    .withCommand(['sh', '-c', script])
    .withWaitStrategy(Wait.forLogMessage('pg_autoctl service is running').withStartupTimeout(FORMATION_START_TIMEOUT_MS)),
    name,
  );
  return { name, port, container };
}

function formationOf(network: StartedNetwork, monitor: StartedTestContainer, nodes: FormationNode[]): Formation {
  const states = async (): Promise<NodeState[]> => readStates(monitor);
  const byName = (name: string) => nodes.find((n) => n.name === name)!;
  const docker = (...args: string[]) => run('docker', args);
  const pid = (node: FormationNode) => run('docker', ['inspect', '--format', '{{.State.Pid}}', node.container.getId()]).trim();
  const iptables = (node: FormationNode, action: '-I' | '-D') => {
    const target = pid(node);
    for (const chain of ['INPUT', 'OUTPUT']) run('nsenter', ['-t', target, '-n', 'iptables', action, chain, '-j', 'DROP']);
  };
  const formation: Formation = {
    databaseUrl: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/${DATABASE}?target_session_attrs=read-write`,
    nodes,
    states,
    async primary() {
      const primary = (await states()).find((s) => s.reported === 'primary' && s.assigned === 'primary');
      if (!primary) throw new Error(`no primary: ${JSON.stringify(await states())}`);
      return byName(primary.name);
    },
    async waitHealthy(timeoutMs = 60_000) {
      const healthy = (s: NodeState[]) =>
        s.length === 2 &&
        s.every((n) => n.reported === n.assigned) &&
        s.some((n) => n.reported === 'primary') &&
        s.some((n) => n.reported === 'secondary');
      // A node rejoining may need a base backup or a rewind, which waits for a checkpoint of the
      // primary (spread over minutes when idle): ask every node for one meanwhile.
      const checkpoints = setInterval(() => {
        for (const node of nodes) void queryNode(node, 'CHECKPOINT').catch(() => undefined);
      }, 2_000);
      try {
        const settled = await waitForStates(monitor, healthy, timeoutMs);
        return byName(settled.find((n) => n.reported === 'primary')!.name);
      } finally {
        clearInterval(checkpoints);
      }
    },
    query: queryNode,
    async kill(node) {
      docker('kill', node.container.getId());
    },
    async start(node) {
      docker('start', node.container.getId());
    },
    async pause(node) {
      docker('pause', node.container.getId());
    },
    async unpause(node) {
      docker('unpause', node.container.getId());
    },
    async cutOff(node) {
      iptables(node, '-I');
    },
    async reconnect(node) {
      iptables(node, '-D');
    },
    async switchover() {
      await exec(monitor, ['pg_autoctl', 'perform', 'switchover', '--pgdata', MONITOR_PGDATA, '--wait', '60']);
    },
    async events() {
      return exec(monitor, ['pg_autoctl', 'show', 'events', '--pgdata', MONITOR_PGDATA, '--count', '30']).catch((err: Error) => err.message);
    },
    async remove() {
      // `docker rm -f`: a paused or killed container goes as well as a running one.
      for (const container of [...nodes.map((n) => n.container), monitor]) spawnSync('docker', ['rm', '-f', '-v', container.getId()], { stdio: 'ignore' });
      await network.stop().catch(() => undefined);
    },
  };
  return formation;
}

/** Starts `container`; if it fails to come up, the error carries the last lines it logged. */
async function startWithLog(container: GenericContainer, name: string): Promise<StartedTestContainer> {
  const lines: string[] = [];
  try {
    return await container
      .withLogConsumer((stream) => {
        stream.on('data', (line: Buffer | string) => {
          lines.push(String(line).trimEnd());
          if (lines.length > 30) lines.shift();
        });
      })
      .start();
  } catch (error) {
    throw new Error(`${name} did not come up: ${(error as Error).message}\n${lines.join('\n')}`, { cause: error });
  }
}

async function queryNode<R extends pg.QueryResultRow>(node: FormationNode, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${node.port}/${DATABASE}`, connectionTimeoutMillis: 5_000, query_timeout: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function readStates(monitor: StartedTestContainer): Promise<NodeState[]> {
  const out = await exec(monitor, ['psql', '-AtF', ' ', '-d', 'pg_auto_failover', '-c', 'SELECT nodename, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid']);
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, reported, assigned] = line.split(' ');
      return { name: name!, reported: reported!, assigned: assigned! };
    });
}

async function waitForStates(monitor: StartedTestContainer, wanted: (s: NodeState[]) => boolean, timeoutMs: number): Promise<NodeState[]> {
  const deadline = Date.now() + timeoutMs;
  let last: NodeState[] = [];
  for (;;) {
    last = await readStates(monitor).catch(() => last);
    if (wanted(last)) return last;
    if (Date.now() > deadline) throw new Error(`the formation did not settle within ${timeoutMs / 1000} s: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function exec(container: StartedTestContainer, command: string[]): Promise<string> {
  const result = await container.exec(command, { user: 'postgres' });
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')}: exit ${result.exitCode}: ${result.output}`);
  return result.output;
}

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.error?.message ?? result.stderr}`);
  return result.stdout;
}
