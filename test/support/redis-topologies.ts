// Redis topologies a test owns outright: a primary with a replica watched by three sentinels, and a
// three-primary cluster. Each server is a container of lookup-api/redis:7 (redis-topology-containers.ts)
// where a Docker engine answers, else a process of the machine's redis-server (loudly; TEST_SERVERS
// chooses as for test/support/with-servers.ts). Either way every server answers on 127.0.0.1:<port>
// and the sentinels and nodes name each other by those addresses. A test may kill, freeze and thaw
// any server. Call `destroy()` in afterAll; whatever is left is also removed if the test process
// exits first. Check `redisTopologiesAvailable(…)` before starting one.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './private-servers';
import { dockerEngineAnswers } from '../../infra/scripts/images';
import type { RedisProcess, ServerRunner } from './redis-server-runner';
import { openPod } from './redis-topology-containers';

const hasExited = (proc: ChildProcess) => proc.exitCode !== null || proc.signalCode !== null;

/** Processes started here and not yet killed: killed on exit, whatever happens to the test. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

export type TopologyRunner = 'containers' | 'processes';

let chosen: { runner: TopologyRunner | undefined } | undefined;

/**
 * Containers where a Docker engine answers, else the machine's redis-server, loudly; TEST_SERVERS=
 * containers makes containers required, TEST_SERVERS=local skips them. Neither at hand: a loud skip,
 * a failure under CI=true. Decided once per test process.
 */
export function redisTopologiesAvailable(suite: string): TopologyRunner | undefined {
  chosen ??= { runner: chooseRunner() };
  if (chosen.runner === undefined) {
    const message = `${suite} needs a Docker engine (npm run images) or the redis-server binary (apt-get install redis-server redis-sentinel)`;
    if (process.env.CI === 'true') throw new Error(message);
    console.warn(`\n!!! SKIPPING ${suite}: ${message} !!!\n`);
  }
  return chosen.runner;
}

function chooseRunner(): TopologyRunner | undefined {
  const requested = process.env.TEST_SERVERS;
  if (requested !== 'local') {
    if (dockerEngineAnswers()) return 'containers';
    if (requested === 'containers') throw new Error('TEST_SERVERS=containers, but no Docker engine answers for the Redis topologies');
  }
  if (!redisServerBin()) return undefined;
  if (requested !== 'local') console.warn('\n!!! No Docker engine answers: the Redis topologies run as processes of this machine\'s redis-server !!!\n');
  return 'processes';
}

function redisServerBin(): string {
  return spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
}

/**
 * The runner chosen by `redisTopologiesAvailable`, for `count` servers on ports from `pick` (known
 * up front: containers publish them 1:1). A port taken between its pick and its publication is
 * picked again, twice at most.
 */
async function openRunner(count: number, pick: () => Promise<number>): Promise<{ runner: ServerRunner; ports: number[] }> {
  const runner = chosen?.runner ?? chooseRunner();
  if (runner === 'processes') return { runner: openProcesses(), ports: await freePorts(count, pick) };
  if (runner !== 'containers') throw new Error('neither a Docker engine nor redis-server: check redisTopologiesAvailable() first');
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(count, pick);
    try {
      return { runner: await openPod(ports), ports };
    } catch (error) {
      if (attempt >= 3 || !/port is already allocated|address already in use/i.test((error as Error).message)) throw error;
    }
  }
}

function cli(port: number, args: string[]): string {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 2_000 });
  return (r.stdout ?? '').trim();
}

/** Polls `check` every 50 ms until it holds; throws `what` after `withinMs`. */
async function until(what: string, withinMs: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting until ${what}`);
    await sleep(50);
  }
}

/** Processes of the machine's redis-server, in a temp dir. */
function openProcesses(): ServerRunner {
  const dir = mkdtempSync(join(tmpdir(), 'redis-topology-'));
  const started: RedisProcess[] = [];
  return {
    async start(port, lines, sentinel = false) {
      const server = await startProcess(dir, port, lines, sentinel);
      started.push(server);
      return server;
    },
    cli(args, timeoutMs) {
      const r = spawnSync('redis-cli', args, { encoding: 'utf8', timeout: timeoutMs });
      return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
    },
    async destroy() {
      for (const p of started) {
        p.thaw(); // a frozen process still dies of SIGKILL; thawing first lets its exit be reported at once
        await p.kill();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `redis-server <config file> [--sentinel]` with `lines` as its configuration; resolves once it answers PING. */
async function startProcess(dir: string, port: number, lines: string[], sentinel: boolean): Promise<RedisProcess> {
  const bin = redisServerBin();
  if (!bin) throw new Error('redis-server not found');
  const configFile = join(dir, `${port}.conf`);
  writeFileSync(configFile, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `logfile ${join(dir, `${port}.log`)}`, ...lines, ''].join('\n'));
  const proc = spawn(bin, sentinel ? [configFile, '--sentinel'] : [configFile], { stdio: 'ignore' });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  await until(`redis on ${port} answers (log: ${join(dir, `${port}.log`)})`, 10_000, () => !hasExited(proc) && cli(port, ['ping']) === 'PONG');
  return {
    port,
    async kill() {
      if (hasExited(proc)) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGKILL');
      await exited;
    },
    freeze: () => void proc.kill('SIGSTOP'),
    thaw: () => void proc.kill('SIGCONT'),
    cli: (...args) => cli(port, args),
    logTail(lines = 30) {
      const file = join(dir, `${port}.log`);
      return existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '(no log)';
    },
  };
}

const DATA_ONLY_IN_MEMORY = ['save ""', 'appendonly no'];

export interface SentinelSetup {
  /** `redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<primary name>` */
  url: string;
  primaryName: string;
  /** The primary at the start, and its replica (the primary after a failover). */
  primary: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** The port the sentinels name as primary now, as the first sentinel that answers says. */
  primaryPort(): number | undefined;
  destroy(): Promise<void>;
}

/** `count` distinct ports, each from `pick`. */
async function freePorts(count: number, pick: () => Promise<number>): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await pick());
  return [...ports];
}

/**
 * A primary, a replica and three sentinels (quorum 2) that take the primary for down after
 * `downAfterMs` without an answer. Resolves once every sentinel knows the replica and the others.
 */
export async function startSentinelSetup(options: { downAfterMs?: number; primaryName?: string } = {}): Promise<SentinelSetup> {
  const primaryName = options.primaryName ?? 'lookup';
  const downAfterMs = options.downAfterMs ?? 1_000;
  const { runner, ports } = await openRunner(5, freePort);
  const [primaryPort0, replicaPort, ...sentinelPorts] = ports;
  try {
    const primary = await runner.start(primaryPort0!, DATA_ONLY_IN_MEMORY);
    const replica = await runner.start(replicaPort!, [...DATA_ONLY_IN_MEMORY, `replicaof 127.0.0.1 ${primary.port}`]);
    await until('the replica is in sync', 10_000, () => /master_link_status:up/.test(replica.cli('info', 'replication')));
    const sentinels = await Promise.all(
      sentinelPorts.map((port) =>
        runner.start(
          port,
          [
            `sentinel monitor ${primaryName} 127.0.0.1 ${primary.port} 2`,
            `sentinel down-after-milliseconds ${primaryName} ${downAfterMs}`,
            `sentinel failover-timeout ${primaryName} 10000`,
            `sentinel parallel-syncs ${primaryName} 1`,
          ],
          true,
        ),
      ),
    );
    // Sentinels find the replica through the primary and each other through its hello channel (every 2 s).
    await until('every sentinel knows the replica and the two other sentinels', 20_000, () =>
      sentinels.every((s) => {
        const fields = s.cli('sentinel', 'master', primaryName).split('\n');
        const field = (name: string) => fields[fields.indexOf(name) + 1];
        return field('num-slaves') === '1' && field('num-other-sentinels') === '2';
      }),
    );
    const primaryPort = () => {
      for (const s of sentinels) {
        const [, port] = s.cli('sentinel', 'get-master-addr-by-name', primaryName).split('\n');
        if (port) return Number(port);
      }
      return undefined;
    };
    const url = `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${primaryName}`;
    return { url, primaryName, primary, replica, sentinels, primaryPort, destroy: () => runner.destroy() };
  } catch (err) {
    await runner.destroy();
    throw err;
  }
}

export interface ClusterSetup {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` */
  url: string;
  nodes: RedisProcess[];
  destroy(): Promise<void>;
}

/** A loopback port free together with its cluster bus port (port + 10000). */
async function freeClusterPort(): Promise<number> {
  const bindable = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if ((await bindable(port)) && (await bindable(port + 10_000))) return port;
  }
  throw new Error('no free port pair for a cluster node in 50 attempts');
}

/** Three primaries, no replicas, the 16384 slots split between them by `redis-cli --cluster create`. */
export async function startClusterSetup(): Promise<ClusterSetup> {
  const { runner, ports } = await openRunner(3, freeClusterPort);
  try {
    const nodes = await Promise.all(
      ports.map((port) => runner.start(port, [...DATA_ONLY_IN_MEMORY, 'cluster-enabled yes', `cluster-config-file nodes-${port}.conf`, 'cluster-node-timeout 2000'])),
    );
    const create = runner.cli(['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-yes'], 30_000);
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.output}`);
    await until('every node reports cluster_state:ok', 20_000, () => nodes.every((n) => /cluster_state:ok/.test(n.cli('cluster', 'info'))));
    return { url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`, nodes, destroy: () => runner.destroy() };
  } catch (err) {
    await runner.destroy();
    throw err;
  }
}
