// Redis topologies a test owns outright, from the machine's redis-server binary, on loopback ports
// in a temp dir: a primary with a replica watched by three sentinels, and a three-primary cluster.
// A test may SIGKILL, freeze (SIGSTOP) and thaw (SIGCONT) any process. Call `destroy()` in
// afterAll; every process is also killed if the test process exits first. Check
// `privateServersAvailable(['redis'], …)` (private-servers.ts) before starting one.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './private-servers';

export interface RedisProcess {
  port: number;
  /** SIGKILL: clients see their connections drop with no goodbye. */
  kill(): Promise<void>;
  /** SIGSTOP: the process stops answering, its connections stay open. */
  freeze(): void;
  /** SIGCONT after a freeze. */
  thaw(): void;
  /** `redis-cli -p <port> <args>`, its output trimmed (empty when it does not answer in 2 s). */
  cli(...args: string[]): string;
  /** The last lines of its log file, for a failure's message. */
  logTail(lines?: number): string;
}

const hasExited = (proc: ChildProcess) => proc.exitCode !== null || proc.signalCode !== null;

/** Processes started here and not yet killed: killed on exit, whatever happens to the test. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

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

/** `redis-server <config file> [--sentinel]` with `lines` as its configuration; resolves once it answers PING. */
async function startProcess(dir: string, port: number, lines: string[], sentinel = false): Promise<RedisProcess> {
  const bin = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
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

/**
 * A primary, a replica and three sentinels (quorum 2) that take the primary for down after
 * `downAfterMs` without an answer. Resolves once every sentinel knows the replica and the others.
 */
export async function startSentinelSetup(options: { downAfterMs?: number; primaryName?: string } = {}): Promise<SentinelSetup> {
  const primaryName = options.primaryName ?? 'lookup';
  const downAfterMs = options.downAfterMs ?? 1_000;
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const started: RedisProcess[] = [];
  const destroy = async () => {
    for (const p of started) {
      p.thaw(); // a frozen process still dies of SIGKILL; thawing first lets its exit be reported at once
      await p.kill();
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const primary = await startProcess(dir, await freePort(), DATA_ONLY_IN_MEMORY);
    started.push(primary);
    const replica = await startProcess(dir, await freePort(), [...DATA_ONLY_IN_MEMORY, `replicaof 127.0.0.1 ${primary.port}`]);
    started.push(replica);
    await until('the replica is in sync', 10_000, () => /master_link_status:up/.test(replica.cli('info', 'replication')));
    const sentinels: RedisProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const sentinel = await startProcess(
        dir,
        await freePort(),
        [
          `sentinel monitor ${primaryName} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${primaryName} ${downAfterMs}`,
          `sentinel failover-timeout ${primaryName} 10000`,
          `sentinel parallel-syncs ${primaryName} 1`,
        ],
        true,
      );
      started.push(sentinel);
      sentinels.push(sentinel);
    }
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
    return { url, primaryName, primary, replica, sentinels, primaryPort, destroy };
  } catch (err) {
    await destroy();
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
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const nodes: RedisProcess[] = [];
  const destroy = async () => {
    for (const node of nodes) {
      node.thaw();
      await node.kill();
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freeClusterPort();
      nodes.push(
        await startProcess(dir, port, [...DATA_ONLY_IN_MEMORY, 'cluster-enabled yes', `cluster-config-file nodes-${port}.conf`, 'cluster-node-timeout 2000']),
      );
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}${create.stderr}`);
    await until('every node reports cluster_state:ok', 20_000, () => nodes.every((n) => /cluster_state:ok/.test(n.cli('cluster', 'info'))));
    return { url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`, nodes, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}
