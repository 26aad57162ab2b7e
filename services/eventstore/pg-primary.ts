import pg from 'pg';
import type { Logger } from '../common/log';
import { recordDatabaseHostSearch } from '../metrics/metrics';
import type { DatabaseHost, DatabaseTarget } from './database-url';
import { DatabaseUnavailableError, isDatabaseUnreachable, isReadOnlyRefusal } from './unavailable';

/**
 * The pool of the host to use among DATABASE_URL's hosts (docs/adr/0010-multi-host-database-url.md).
 * `pg` knows one host per pool: this keeps one pool, on the host found by the last search, and
 * drops it when a failure says that host may be gone or no longer takes writes; the next
 * statement searches again. While no host fits, callers get DatabaseUnavailableError (503).
 */
export interface HostPool {
  readonly host: DatabaseHost;
  readonly pool: pg.Pool;
}

export interface PrimaryPools {
  /** The pool to use now; found first (every host probed at once) when there is none. */
  acquire(): Promise<HostPool>;
  /** `err` came from `used`: a lost connection or a refused write (25006) drops its pool. */
  failed(used: HostPool, err: unknown): void;
  /** The host of the pool in use; undefined while there is none. */
  hostInUse(): DatabaseHost | undefined;
  /** Calls `listener` each time a search settles on another host than the last one; returns its remover. */
  onMoved(listener: (host: DatabaseHost) => void): () => void;
  end(): Promise<void>;
}

export interface PrimaryPoolOptions {
  max: number;
  connectionTimeoutMillis: number;
  logger: Logger;
}

/** A failed search stands this long: callers meanwhile get 503 at once, without a storm of probes. */
const FAILED_SEARCH_STANDS_MS = 100;
/** pg-pool's wait for a free connection of a full pool: load, not a host gone. */
const POOL_FULL = 'timeout exceeded when trying to connect';

/** True when `err` says the pool's host may be gone, or is not (or no longer) the writable one. */
function hostInDoubt(err: unknown): boolean {
  const cause = err instanceof DatabaseUnavailableError ? err.cause : err;
  if (isReadOnlyRefusal(cause)) return true;
  return isDatabaseUnreachable(cause) && !(cause instanceof Error && cause.message.includes(POOL_FULL));
}

export function createPrimaryPools(target: DatabaseTarget, options: PrimaryPoolOptions): PrimaryPools {
  const log = options.logger;
  const canMove = !(target.hosts.length === 1 && target.targetSessionAttrs === 'any');
  let current: HostPool | undefined;
  let lastHost: DatabaseHost | undefined;
  let searching: Promise<HostPool> | undefined;
  let failedSearch: { at: number; error: DatabaseUnavailableError } | undefined;
  /** When the host in use was dropped, until the next one is found: how long callers got 503. */
  let lostAt: number | undefined;
  let searchesWhileLost = 0;
  let ended = false;
  const ending = new Set<Promise<void>>();
  const movedListeners = new Set<(host: DatabaseHost) => void>();

  const retire = (hostPool: HostPool) => {
    // Connections still checked out finish their statement; the pool closes each as it comes back.
    const closing: Promise<void> = hostPool.pool
      .end()
      .catch((err: unknown) => log.warn({ err, host: hostPool.host.label }, 'closing the pool of a dropped database host failed'))
      .finally(() => ending.delete(closing));
    ending.add(closing);
  };

  const openPool = (host: DatabaseHost): HostPool => {
    const pool = new pg.Pool({
      connectionString: host.connectionString,
      max: options.max,
      connectionTimeoutMillis: options.connectionTimeoutMillis,
      // No query_timeout: the pool's statements are bounded by sql-pg.ts's StatementWatchdog.
      keepAlive: true,
    });
    const hostPool: HostPool = { host, pool };
    // An idle client losing its connection: the pool has dropped it; the host itself may be gone.
    pool.on('error', (err) => {
      log.warn({ err, host: host.label }, 'idle database connection lost');
      api.failed(hostPool, err);
    });
    return hostPool;
  };

  const search = async (): Promise<HostPool> => {
    searchesWhileLost++;
    let host: DatabaseHost;
    try {
      host = await findHost(target, options.connectionTimeoutMillis);
    } catch (err) {
      const error = err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError(err);
      failedSearch = { at: Date.now(), error };
      recordDatabaseHostSearch('none');
      if (searchesWhileLost === 1 || searchesWhileLost % 50 === 0) log.warn({ err: error, searches: searchesWhileLost }, 'no database host to use yet; statements get 503 until one is found');
      throw error;
    }
    if (ended) throw new DatabaseUnavailableError(new Error('the database connections are closed'));
    const moved = lastHost !== undefined && lastHost.label !== host.label;
    recordDatabaseHostSearch(moved ? 'moved' : 'same');
    const hostPool = openPool(host);
    current = hostPool;
    failedSearch = undefined;
    // A single host found at start is no news; a host list's choice, and any host found after a loss, are.
    if (lostAt !== undefined || target.hosts.length > 1) {
      log.info(
        { host: host.label, targetSessionAttrs: target.targetSessionAttrs, lostForMs: lostAt === undefined ? undefined : Date.now() - lostAt, searches: searchesWhileLost },
        moved ? 'database host moved' : 'database host in use',
      );
    }
    lostAt = undefined;
    searchesWhileLost = 0;
    lastHost = host;
    if (moved) for (const listener of movedListeners) listener(host);
    return hostPool;
  };

  const api: PrimaryPools = {
    acquire() {
      if (current) return Promise.resolve(current);
      if (ended) return Promise.reject(new DatabaseUnavailableError(new Error('the database connections are closed')));
      if (failedSearch && Date.now() - failedSearch.at < FAILED_SEARCH_STANDS_MS) return Promise.reject(failedSearch.error);
      searching ??= search().finally(() => {
        searching = undefined;
      });
      return searching;
    },
    failed(used, err) {
      // One host taken as it is: a search could only find it again, and pg's pool already replaces
      // broken connections one by one.
      if (!canMove || used !== current || !hostInDoubt(err)) return;
      current = undefined;
      lostAt = Date.now();
      log.warn({ err, host: used.host.label }, 'database host dropped; the next statement looks for the one to use');
      retire(used);
    },
    hostInUse: () => current?.host,
    onMoved(listener) {
      movedListeners.add(listener);
      return () => movedListeners.delete(listener);
    },
    async end() {
      ended = true;
      await searching?.catch(() => undefined);
      if (current) retire(current);
      current = undefined;
      await Promise.all([...ending]);
    },
  };
  return api;
}

/**
 * The host to use. One host with `any`: that host, unprobed (its pool reports its failures).
 * Otherwise every host is probed at once: with `any`, the first in the given order that takes a
 * connection (libpq's meaning); with `read-write`, the first to prove writable, whatever its place
 * (only one should be; waiting on a frozen host listed earlier would only lengthen the outage).
 */
async function findHost(target: DatabaseTarget, timeoutMs: number): Promise<DatabaseHost> {
  const { hosts, targetSessionAttrs } = target;
  if (hosts.length === 1 && targetSessionAttrs === 'any') return hosts[0]!;
  const probes = hosts.map((host) => probeHost(host, targetSessionAttrs, timeoutMs));
  const index = targetSessionAttrs === 'any' ? await firstFitInOrder(probes) : await firstFitToAnswer(probes);
  if (index !== undefined) return hosts[index]!;
  const reasons = await Promise.all(probes);
  const wanted = targetSessionAttrs === 'read-write' ? 'writable database host' : 'database host that answers';
  throw new DatabaseUnavailableError(new Error(`no ${wanted}: ${hosts.map((h, i) => `${h.label} ${reasons[i]}`).join('; ')}`));
}

/** Probes answer undefined when their host fits (they never reject). */
type Probe = Promise<string | undefined>;

async function firstFitInOrder(probes: Probe[]): Promise<number | undefined> {
  for (const [i, probe] of probes.entries()) if ((await probe) === undefined) return i;
  return undefined;
}

function firstFitToAnswer(probes: Probe[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    let left = probes.length;
    for (const [i, probe] of probes.entries()) {
      void probe.then((reason) => {
        if (reason === undefined) resolve(i);
        else if (--left === 0) resolve(undefined);
      });
    }
  });
}

/** Undefined when `host` fits `attrs`, else why not. */
async function probeHost(host: DatabaseHost, attrs: DatabaseTarget['targetSessionAttrs'], timeoutMs: number): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: host.connectionString, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A probe's connection failing is its answer (returned below); a loss after that concerns no one.
  client.on('error', () => undefined);
  try {
    await client.connect();
    if (attrs === 'any') return undefined;
    const { rows } = await client.query<{ in_recovery: boolean; read_only: string }>(
      "SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only",
    );
    if (rows[0]?.in_recovery) return 'is a standby (in recovery)';
    if (rows[0]?.read_only === 'on') return 'is read-only (default_transaction_read_only)';
    return undefined;
  } catch (err) {
    return `cannot be used: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    void client.end().catch(() => undefined);
  }
}
