import { Redis, type RedisOptions } from 'ioredis';
import { recordRedisError } from '../metrics/metrics';

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
  // A connection that stops answering without closing (lost packets, no RST) still fails a call.
  commandTimeout: 2_000,
  // Never gives up; the wait between attempts grows to at most 1 s, so recovery is quick.
  retryStrategy: (attempt: number) => Math.min(50 * attempt, 1_000),
  // Commands issued in one event-loop turn (many requests' admissions, slot acquires and releases)
  // go out in one socket write and come back in one read.
  enableAutoPipelining: true,
} satisfies RedisOptions;

export function createRedisConnection(url: string): Redis {
  return new Redis(url, REDIS_OPTIONS);
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

/**
 * Logs the connection's state changes (never an unhandled 'error' event) and connects. Resolves
 * once connected, or after the first attempt failed: the service then starts anyway, answers 503
 * where Redis is needed, and the client keeps reconnecting in the background.
 */
export async function startRedisConnection(redis: Redis, log: ConnectionLogger): Promise<void> {
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
  // The failure is already logged by the listeners above.
  await redis.connect().catch(() => {});
}

/** Quits politely when connected; otherwise (out, reconnecting) stops reconnecting at once. */
export async function closeRedisConnection(redis: Redis): Promise<void> {
  // While disconnected, QUIT is refused like any command (no offline queue) and would leave the
  // client reconnecting forever.
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
