// A PostgreSQL primary and its streaming standby, made with Debian's cluster tools
// (pg_createcluster, pg_basebackup -R, pg_ctlcluster --skip-systemctl-redirect, pg_dropcluster):
// for tests that switch the writable server under load. Trust auth, loopback only, fsync off,
// each on a free port; `drop()` stops and deletes both. Each suite calls
// `debianClustersAvailable()` first: without the tools it skips loudly, under CI=true it fails.
import { execFile, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './private-servers';

const run = promisify(execFile);
const TOOLS = ['pg_createcluster', 'pg_ctlcluster', 'pg_dropcluster', 'pg_basebackup'];
const VERSION = '15';
const asRoot = process.getuid?.() === 0;

/** True when Debian's cluster tools for PostgreSQL 15 are here; otherwise warns (or throws under CI). */
export function debianClustersAvailable(suite: string): boolean {
  const missing = TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  const reason =
    missing.length > 0 ? `${missing.join(', ')} not found (apt-get install postgresql-15 postgresql-common)` : !asRoot ? 'creating clusters under /etc/postgresql needs root' : undefined;
  if (reason === undefined) return true;
  const message = `${suite} needs Debian's PostgreSQL cluster tools: ${reason}`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING ${suite}: ${message} !!!\n`);
  return false;
}

/** The cluster's data directory belongs to postgres: tools that write it run as that user. */
async function asPostgres(command: string, args: string[]): Promise<string> {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return runTool(cmd, argv);
}

async function runTool(command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { encoding: 'utf8', timeout: 120_000 });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

export interface Cluster {
  name: string;
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  start(): Promise<void>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctlcluster promote`: waits until the standby takes writes. */
  promote(): Promise<void>;
  query<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, params?: unknown[], database?: string): Promise<R[]>;
}

export interface ReplicatedPair {
  primary: Cluster;
  /** Streams from `primary` (pg_basebackup -R): read-only until promoted. */
  standby: Cluster;
  /** pg_dropcluster --stop for both; never throws. */
  drop(): Promise<void>;
}

function cluster(name: string, port: number): Cluster {
  const ctl = (...args: string[]) => runTool('pg_ctlcluster', ['--skip-systemctl-redirect', VERSION, name, ...args]);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    name,
    port,
    url,
    start: async () => void (await ctl('start')),
    stop: async (mode = 'fast') => void (await ctl('stop', '-m', mode)),
    promote: async () => void (await ctl('promote')),
    async query<R extends pg.QueryResultRow>(text: string, params?: unknown[], database?: string) {
      // An operator's session: it writes even while the test has made the server read-only by default.
      const client = new pg.Client({ connectionString: url(database), options: '-c default_transaction_read_only=off' });
      await client.connect();
      try {
        return (await client.query<R>(text, params)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

async function createCluster(name: string, port: number): Promise<void> {
  // As root, pg_createcluster runs initdb as postgres itself.
  await runTool('pg_createcluster', [VERSION, name, '-p', String(port), '--', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  await writeFile(
    `/etc/postgresql/${VERSION}/${name}/conf.d/test.conf`,
    "listen_addresses = '127.0.0.1'\nfsync = off\nmax_connections = 200\nwal_level = replica\n",
  );
}

/** A primary on a free port and a standby of it on another, both running. */
export async function createReplicatedPair(): Promise<ReplicatedPair> {
  const tag = `${process.pid}_${Date.now().toString(36)}`;
  const primary = cluster(`failover_${tag}_a`, await freePort());
  const standby = cluster(`failover_${tag}_b`, await freePort());
  const pair: ReplicatedPair = {
    primary,
    standby,
    async drop() {
      for (const c of [standby, primary]) {
        await runTool('pg_dropcluster', ['--stop', VERSION, c.name]).catch((err: unknown) => console.warn(`dropping cluster ${c.name} failed: ${String(err)}`));
      }
    },
  };
  try {
    await createCluster(primary.name, primary.port);
    await primary.start();
    await createCluster(standby.name, standby.port);
    await followAsStandby(standby, primary);
    return pair;
  } catch (err) {
    await pair.drop();
    throw err;
  }
}

/**
 * Makes the stopped `cluster` a streaming standby of `primary` and starts it: its files (emptied,
 * the directory kept with its owner and mode) become a base backup of the primary's; its own
 * configuration (port) stays under /etc. Also how an old primary rejoins after a switchover.
 */
export async function followAsStandby(cluster: Cluster, primary: Cluster): Promise<void> {
  const data = `/var/lib/postgresql/${VERSION}/${cluster.name}`;
  await asPostgres('find', [data, '-mindepth', '1', '-delete']);
  await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '-c', 'fast']);
  await cluster.start();
}

/** Waits until the standby has replayed everything the primary has written so far. */
export async function caughtUp(pair: { primary: Cluster; standby: Cluster }, withinMs = 10_000): Promise<void> {
  const [{ lsn }] = (await pair.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')) as [{ lsn: string }];
  const deadline = Date.now() + withinMs;
  for (;;) {
    const [row] = await pair.standby.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn]);
    if (row?.done) return;
    if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${lsn} within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Stops `cluster` taking writes while it stays up (what a switchover does before promoting the
 * standby): read-only by default from now on, and it waits until no transaction begun before
 * still holds a transaction id (could still commit a write).
 */
export async function fenceWrites(cluster: Cluster, withinMs = 10_000): Promise<void> {
  await cluster.query('ALTER SYSTEM SET default_transaction_read_only = on');
  await cluster.query('SELECT pg_reload_conf()');
  const deadline = Date.now() + withinMs;
  for (;;) {
    const [row] = await cluster.query<{ writing: number }>(
      "SELECT count(*)::int AS writing FROM pg_stat_activity WHERE backend_type = 'client backend' AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()",
    );
    if (row?.writing === 0) return;
    if (Date.now() > deadline) throw new Error(`transactions still writing on ${cluster.name} after ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Undoes fenceWrites. */
export async function unfenceWrites(cluster: Cluster): Promise<void> {
  await cluster.query('ALTER SYSTEM RESET default_transaction_read_only');
  await cluster.query('SELECT pg_reload_conf()');
}
