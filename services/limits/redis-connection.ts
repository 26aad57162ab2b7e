import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { recordRedisError } from '../metrics/metrics';
import type { RedisTarget } from './redis-url';

/** One connection to a Redis server, a primary found through sentinels, or a cluster. */
export type RedisClient = Redis | Cluster;

/**
 * How the service talks to Redis: fail fast, reconnect forever. A call that needs Redis while it
 * is out gets an error at once (the adapters turn it into LimiterUnavailableError, the API into
 * 503 `service_unavailable`) instead of waiting in a queue for a server that may not come back
 * soon; when it comes back the connection is re-established without a restart.
 */
export const REDIS_OPTIONS = {
  // Connected by startRedisConnection, once its error listener is in place.
  lazyConnect: true,
  // A command issued while disconnected fails at once instead of queueing.
  enableOfflineQueue: false,
  // Commands in flight when the connection drops fail at once instead of being resent later.
  maxRetriesPerRequest: 0,
  connectTimeout: 2_000,
  // No commandTimeout: a call left unanswered fails after REDIS_CALL_TIMEOUT_MS all the same
  // (limiter-unavailable.ts), without a timer per command.
  // Never gives up; the wait between attempts grows to at most 1 s, so recovery is quick.
  retryStrategy: (attempt: number) => Math.min(50 * attempt, 1_000),
  // Commands issued in one event-loop turn (many requests' admissions, slot acquires and releases)
  // go out in one socket write and come back in one read.
  enableAutoPipelining: true,
  // Leaving a connection (the sentinels announced another primary) waits this long for the server's
  // goodbye: a frozen primary never sends it, and ioredis' default of 2 s would be 2 s more of 503s.
  disconnectTimeout: 100,
  // A primary demoted to replica (failover, or a name that now points elsewhere) refuses writes
  // with READONLY: reconnecting finds the primary again (through the sentinels when there are some).
  reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
} satisfies RedisOptions;

/** How long a failed round of sentinel or cluster-node attempts waits before the next one. */
const roundRetry = (attempt: number) => Math.min(50 * attempt, 1_000);

/**
 * The connection to the target of REDIS_URL (see redis-url.ts and ADR 0015), not yet connected.
 * With sentinels the client asks them for the primary on every (re)connect and also listens for
 * their `+switch-master`, so a primary that froze, and so never closed its connections, is left at
 * once rather than when it wakes up.
 */
export function createRedisConnection(target: RedisTarget): RedisClient {
  switch (target.kind) {
    case 'standalone':
      return new Redis(target.url, REDIS_OPTIONS);
    case 'sentinel':
      return new Redis({
        ...REDIS_OPTIONS,
        sentinels: target.sentinels,
        name: target.primaryName,
        role: 'master',
        username: target.username,
        password: target.password,
        sentinelRetryStrategy: roundRetry,
        failoverDetector: true,
      });
    case 'cluster': {
      const { lazyConnect, enableOfflineQueue, enableAutoPipelining, retryStrategy: _perNode, ...perNode } = REDIS_OPTIONS;
      const options: ClusterOptions = {
        lazyConnect,
        enableOfflineQueue,
        enableAutoPipelining,
        clusterRetryStrategy: roundRetry,
        // A node lost mid-failover: the slot map is asked again after this, not at once in a loop.
        retryDelayOnFailover: 200,
        redisOptions: { ...perNode, username: target.username, password: target.password },
      };
      return new Cluster(target.nodes, options);
    }
  }
}

/** Where the connection's state changes are written (the app's pino logger fits). */
export interface ConnectionLogger {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export type ConnectionLogEntry = { level: 'error' | 'info'; message: string; err?: unknown };

/**
 * What to log of a connection's events: the first failure after it was up, then its return with
 * how long it was out and how many further failures were not logged. Logging every failed
 * reconnect attempt (up to one a second) would bury everything else during an outage.
 */
export class ConnectionStateLog {
  private state: 'starting' | 'up' | 'down' = 'starting';
  private downSinceMs = 0;
  private unlogged = 0;

  /** An error from the client, or the connection lost (`err` undefined). */
  failed(err: unknown, nowMs: number): ConnectionLogEntry | undefined {
    if (this.state === 'down') {
      if (err !== undefined) this.unlogged++;
      return undefined;
    }
    this.state = 'down';
    this.downSinceMs = nowMs;
    this.unlogged = 0;
    const reason = err === undefined ? 'connection lost' : err instanceof Error ? err.message : String(err);
    return { level: 'error', message: `Redis unavailable (${reason}): calls that need it answer 503 until it is back`, err };
  }

  ready(nowMs: number): ConnectionLogEntry | undefined {
    const previous = this.state;
    this.state = 'up';
    if (previous === 'starting') return { level: 'info', message: 'Redis connected' };
    if (previous === 'up') return undefined;
    return {
      level: 'info',
      message: `Redis available again after ${nowMs - this.downSinceMs} ms (${this.unlogged} further failures not logged)`,
    };
  }
}

/** Connections closed on purpose (closeRedisConnection): for them 'end' is final. */
const closedOnPurpose = new WeakSet<RedisClient>();
/** Before connecting again after an 'end' we did not ask for. */
const RESTART_AFTER_END_MS = 50;

/**
 * Logs the connection's state changes (never an unhandled 'error' event) and connects. Resolves
 * once connected, or after the first attempt failed: the service then starts anyway, answers 503
 * where Redis is needed, and the client keeps reconnecting in the background.
 */
export async function startRedisConnection(redis: RedisClient, log: ConnectionLogger): Promise<void> {
  const states = new ConnectionStateLog();
  const write = (entry: ConnectionLogEntry | undefined) => {
    if (entry?.level === 'error') log.error({ err: entry.err }, entry.message);
    else if (entry) log.info({}, entry.message);
  };
  redis.on('error', (err: unknown) => {
    recordRedisError();
    write(states.failed(err, Date.now()));
  });
  // Emitted only when a reconnect is scheduled, so not for our own quit().
  redis.on('reconnecting', () => write(states.failed(undefined, Date.now())));
  redis.on('ready', () => write(states.ready(Date.now())));
  // ioredis stops reconnecting for good ('end') when its failover detector (sentinels announcing a
  // new primary) cuts short a connect already under way, as after a primary's death: start over.
  redis.on('end', () => {
    if (closedOnPurpose.has(redis)) return;
    log.info({}, 'Redis client stopped reconnecting (a connect cut short by a failover); connecting again');
    setTimeout(() => {
      if (!closedOnPurpose.has(redis) && redis.status === 'end') redis.connect().catch(() => {});
    }, RESTART_AFTER_END_MS).unref();
  });
  // The failure is already logged by the listeners above.
  await redis.connect().catch(() => {});
}

/** Quits politely when connected; otherwise (out, reconnecting) stops reconnecting at once. */
export async function closeRedisConnection(redis: RedisClient): Promise<void> {
  closedOnPurpose.add(redis);
  // While disconnected, QUIT is refused like any command (no offline queue) and would leave the
  // client reconnecting forever.
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
