// Servers a test owns outright, so it may restart, stop or SIGKILL them under load: a throwaway
// PostgreSQL cluster (initdb on a free port, optionally with its transaction counter moved by
// pg_resetwal) and a throwaway in-memory Redis. Both come from the machine's packages, the same
// ones infra/scripts/servers.ts uses. Each suite calls `privateServersAvailable()` first: outside
// CI a missing binary skips loudly, under CI=true it is a failure.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const POSTGRES_ROOT = '/usr/lib/postgresql';

function postgresBin(): string | undefined {
  if (!existsSync(POSTGRES_ROOT)) return undefined;
  const versions = readdirSync(POSTGRES_ROOT).filter((v) => existsSync(join(POSTGRES_ROOT, v, 'bin', 'initdb')));
  const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  return newest === undefined ? undefined : join(POSTGRES_ROOT, newest, 'bin');
}

function redisBin(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** True when this machine can start private servers; otherwise warns (or throws under CI). */
export function privateServersAvailable(kinds: Array<'postgres' | 'redis'>, suite: string): boolean {
  const missing = kinds.filter((k) => (k === 'postgres' ? postgresBin() : redisBin()) === undefined);
  if (missing.length === 0) return true;
  const message = `${suite} needs ${missing.join(' and ')} binaries to start private servers (apt-get install postgresql redis-server)`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING ${suite}: ${message} !!!\n`);
  return false;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// initdb and postgres refuse to run as root; as root, run them as the postgres system user.
const asRoot = process.getuid?.() === 0;
function runAsPostgres(command: string, args: string[]): { status: number | null; output: string } {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** `pg_ctl restart -m <mode>`: fast or immediate. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server (it keeps its files), e.g. for an outage of a chosen length. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  destroy(): Promise<void>;
}

/**
 * A new cluster in a temp dir on a free port, trust auth on loopback. `nextXid` moves the
 * transaction counter of the fresh cluster (pg_resetwal -x) so a test can cross a boundary such as
 * 99,999 → 100,000 within a few hundred transactions.
 */
export async function startPrivatePostgres(options: { nextXid?: number } = {}): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'private-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const init = runAsPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.output}`);
  if (options.nextXid !== undefined) {
    const reset = runAsPostgres(join(bin, 'pg_resetwal'), ['-x', String(options.nextXid), '-f', data]);
    if (reset.status !== 0) throw new Error(`pg_resetwal failed:\n${reset.output}`);
    // The commit log must hold the page of the new counter (4 transactions a byte, 32 pages of
    // 8 kB a segment file); zeros mean "never committed", the truth for ids never used.
    const segment = join(data, 'pg_xact', Math.floor(options.nextXid / (4 * 8192 * 32)).toString(16).toUpperCase().padStart(4, '0'));
    const grown = runAsPostgres('truncate', ['-s', String(8192 * 32), segment]);
    if (grown.status !== 0) throw new Error(`cannot size ${segment}:\n${grown.output}`);
  }
  const port = await freePort();
  const logFile = join(dir, 'server.log');
  const pgCtl = (...args: string[]) => runAsPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200`;
  const start = async () => {
    const r = pgCtl('-l', logFile, '-o', serverOptions, '-w', '-t', '60', 'start');
    if (r.status !== 0) throw new Error(`pg_ctl start failed:\n${r.output}`);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    const r = pgCtl('-m', mode, '-w', '-t', '60', 'stop');
    if (r.status !== 0 && !/not running|No such file/i.test(r.output)) throw new Error(`pg_ctl stop failed:\n${r.output}`);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    async restart(mode = 'fast') {
      await stop(mode);
      await start();
    },
    async destroy() {
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresIds(): { uid: number; gid: number } {
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGKILL: clients see the connection drop with no goodbye. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: it keeps nothing on disk). */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** A process ended by a signal (our SIGKILL) has a null exitCode: its signalCode tells. */
const hasExited = (proc: ChildProcess) => proc.exitCode !== null || proc.signalCode !== null;

/** An in-memory redis-server on a free port, owned by this test. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const bin = redisBin();
  if (!bin) throw new Error('redis-server not found');
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    child = proc;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await new Promise<boolean>((resolve) => {
        const r = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
        resolve(r.stdout?.trim() === 'PONG');
      });
      if (up) return;
      if (Date.now() > deadline || hasExited(proc)) throw new Error(`redis-server did not start on ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async () => {
    const proc = child;
    if (!proc || hasExited(proc)) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, kill, start, destroy: kill };
}
