import pg from 'pg';
import { backgroundLogger, type Logger } from '../common/log';
import { recordDatabaseError } from '../metrics/metrics';
import { parseDatabaseUrl, type DatabaseHost } from './database-url';
import { pipelinedQuery, type SideStatement } from './pg-pipeline';
import { createPrimaryPools, type HostPool } from './pg-primary';
import { StatementWatchdog } from './statement-watchdog';
import type { QueryResult, Sql, SqlExecutor, TransactionExecutor } from './sql';
import { DatabaseUnavailableError, isDatabaseUnreachable, isReadOnlyRefusal } from './unavailable';

// bigint (int8) and numeric come back as strings by default; positions and balances fit in a
// JS number, so parse them here once for every caller.
pg.types.setTypeParser(20, (v) => Number(v));

/** Each error counts once, however many layers pass it on (a DatabaseUnavailableError wraps its cause). */
const countedDatabaseErrors = new WeakSet<object>();
function countDatabaseError(err: unknown): void {
  const root = err instanceof DatabaseUnavailableError ? err.cause : err;
  if (typeof root === 'object' && root !== null) {
    if (countedDatabaseErrors.has(root)) return;
    countedDatabaseErrors.add(root);
  }
  const sqlState = (root as { code?: unknown } | null)?.code;
  recordDatabaseError(isDatabaseUnreachable(root) ? 'unavailable' : typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState) ? sqlState : 'other');
}

/** How long a caller may wait for a connection before the database counts as unavailable. */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * The longest a statement may go unanswered. A frozen or cut-off server accepts TCP and never
 * answers: without a bound, callers would hang and the pool fill with stuck connections.
 */
const QUERY_TIMEOUT_MS = 5_000;
/** Re-listening after a lost connection: first delay and cap. */
const LISTEN_RETRY_MS = { initial: 250, max: 2_000 };

export interface PgSqlOptions {
  max?: number;
  /** Default: 5 s. Also bounds the wait for a free pooled connection. */
  connectionTimeoutMillis?: number;
  /** Default: 5 s. A statement unanswered by then fails as an outage and its connection is closed (StatementWatchdog). */
  queryTimeoutMillis?: number;
  logger?: Logger;
}

const statementNames = new Map<string, string>();
/** Most distinct statements prepared per connection; statements beyond are parsed on each call. */
const MAX_PREPARED = 500;

/**
 * Statements with parameters are prepared once per connection (pg keeps them by name) rather than
 * parsed and planned on each call: the group commit's statements are long.
 */
function statementName(text: string): string | undefined {
  const known = statementNames.get(text);
  if (known !== undefined || statementNames.size >= MAX_PREPARED) return known;
  const name = `s${statementNames.size}`;
  statementNames.set(text, name);
  return name;
}

/** One statement, run by pg: on a pooled connection, or on a transaction's. */
type RunStatement = <R>(config: pg.QueryConfig & { rowMode?: 'array' }) => Promise<{ rows: R[]; rowCount: number | null }>;

/** Both query forms over one way of running a statement. */
function executorOver(run: RunStatement): SqlExecutor {
  return {
    async query<R>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
      const r = await run<R>({ text, values: params });
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    },
    async queryArrays<R extends unknown[]>(text: string, params?: unknown[]): Promise<R[]> {
      return (await run<R>({ text, values: params, rowMode: 'array' })).rows;
    },
  };
}

/**
 * The pg adapter. A connection lost at any moment (database restarted, stopped, network) never
 * ends the process: every client has an 'error' listener, a broken one is discarded, and the
 * failure reaches the caller as DatabaseUnavailableError. The pool and LISTEN reconnect by
 * themselves once the database is back. `connectionString` may list several hosts (libpq's
 * form, database-url.ts): the pool and LISTEN then follow the host that fits
 * `target_session_attrs` (pg-primary.ts), and a write refused by a standby (25006) is an outage too.
 */
export function createPgSql(connectionString: string, options: PgSqlOptions = {}): Sql {
  const log = options.logger ?? backgroundLogger();
  const connectionTimeoutMillis = options.connectionTimeoutMillis ?? CONNECT_TIMEOUT_MS;
  const parsed = parseDatabaseUrl(connectionString);
  if (!parsed.ok) throw new Error(`DATABASE_URL: ${parsed.reason}`);
  const queryTimeoutMillis = options.queryTimeoutMillis ?? QUERY_TIMEOUT_MS;
  const primary = createPrimaryPools(parsed.target, { max: options.max ?? 20, connectionTimeoutMillis, logger: log });
  const watchdog = new StatementWatchdog(queryTimeoutMillis, log);

  const unavailableOr = (err: unknown, commitOutcomeUnknown = false): unknown => {
    countDatabaseError(err);
    if (err instanceof DatabaseUnavailableError) return err;
    return isDatabaseUnreachable(err) || isReadOnlyRefusal(err) ? new DatabaseUnavailableError(err, { commitOutcomeUnknown }) : err;
  };

  /**
   * A connection of the host in use, checked out, and what broke it meanwhile: checked out, it has
   * no listener of the pool's, and a connection lost then would be an unhandled 'error' event that
   * ends the process. Released with a failure (or lost), the pool closes it instead of handing it out again.
   */
  const checkOut = async () => {
    let used: HostPool | undefined;
    let client: pg.PoolClient;
    try {
      used = await primary.acquire();
      client = await used.pool.connect();
    } catch (err) {
      if (used) primary.failed(used, err);
      throw unavailableOr(err);
    }
    let lost: Error | undefined;
    const onError = (err: Error) => {
      lost ??= err;
    };
    client.on('error', onError);
    return {
      used,
      client,
      lost: () => lost,
      release(failure: unknown) {
        client.off('error', onError);
        client.release(lost ?? (failure === undefined ? undefined : failure instanceof Error ? failure : new Error(String(failure))));
      },
    };
  };

  // Outside transactions: each statement on whichever pooled connection is free. Checked out by
  // hand (what pg-pool's own query does) so the watchdog knows the connection.
  const pooled = async <R>(config: pg.QueryConfig & { rowMode?: 'array' }) => {
    const { used, client, lost, release } = await checkOut();
    let failed: unknown;
    try {
      return await watchdog.run(client, () => client.query<R & pg.QueryResultRow>({ ...config, name: config.values ? statementName(config.text) : undefined }));
    } catch (err) {
      failed = err;
      primary.failed(used, lost() ?? err);
      throw unavailableOr(err);
    } finally {
      // As pg-pool's query: after any failure the connection is closed.
      release(failed);
    }
  };
  return {
    backend: 'postgres',
    ...executorOver(pooled),
    async transaction<T>(fn: (tx: TransactionExecutor) => Promise<T>): Promise<T> {
      const { used, client, lost, release } = await checkOut();
      // BEGIN goes with the first statement, deferred writes with the next one or with COMMIT.
      let begun = false;
      // From the round trip that carries COMMIT on, a lost connection leaves the outcome unknown.
      let committing = false;
      // COMMIT went with a statement (queryThenCommit): nothing may follow.
      let committed = false;
      let deferred: SideStatement[] = [];
      const ahead = (): SideStatement[] => {
        // Deferred writes are prepared once per connection, as every statement with parameters.
        const writes = deferred.map((st) => ({ ...st, name: st.values ? statementName(st.text) : undefined }));
        const statements = begun ? writes : [{ text: 'BEGIN' }, ...writes];
        begun = true;
        deferred = [];
        return statements;
      };
      const send = async <R>(config: pg.QueryConfig & { rowMode?: 'array' }, after: SideStatement[] = []) => {
        if (committed) throw new Error('the transaction has committed; no statement may follow');
        const before = ahead();
        try {
          if (!config.values && after.length === 0) {
            // Without parameters, pg's simple protocol as ever (a text may hold several statements).
            const last = before.pop();
            if (last) await watchdog.run(client, () => pipelinedQuery(client, last, before, []));
            return await watchdog.run(client, () => client.query<R & pg.QueryResultRow>(config));
          }
          // Named (prepared once per connection); pg-pipeline.ts keeps pg's note of it right when
          // a statement before it fails.
          const name = config.values ? statementName(config.text) : undefined;
          return await watchdog.run(client, () => pipelinedQuery<R>(client, { ...config, name }, before, after));
        } catch (err) {
          throw unavailableOr(err, committing);
        }
      };
      const executor: TransactionExecutor = {
        ...executorOver(send),
        deferWrite(text, params) {
          if (committed) throw new Error('the transaction has committed; no write may follow');
          deferred.push({ text, values: params });
        },
        async queryThenCommit<R>(text: string, params?: unknown[]) {
          committing = true;
          const r = await send<R>({ text, values: params ?? [] }, [{ text: 'COMMIT' }]);
          committed = true;
          return { rows: r.rows, rowCount: r.rowCount ?? 0 };
        },
      };
      let broken: unknown;
      try {
        const result = await fn(executor);
        committing = true;
        if (!committed && (begun || deferred.length > 0)) {
          // The last deferred write (prepared, like any statement with parameters) carries COMMIT.
          const last = deferred.pop();
          await send(last ? { text: last.text, values: last.values } : { text: 'COMMIT' }, last ? [{ text: 'COMMIT' }] : []);
        }
        return result;
      } catch (err) {
        const failure = unavailableOr(err, committing);
        if (failure instanceof DatabaseUnavailableError || lost()) {
          broken = failure;
          primary.failed(used, lost() ?? failure);
        } else if (begun) {
          await watchdog.run(client, () => client.query('ROLLBACK')).catch((rollbackError: unknown) => {
            broken = rollbackError;
            log.warn({ err: rollbackError }, 'rollback failed; the connection is discarded');
          });
        }
        throw failure;
      } finally {
        release(broken);
      }
    },
    async listen(channel, onMessage, onReconnect, onLost) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
      let client: pg.Client | undefined;
      /** The host `client` listens on: NOTIFY comes from the writers' host, so it moves with the pool. */
      let listeningOn: DatabaseHost | undefined;
      let closed = false;
      let retryTimer: NodeJS.Timeout | undefined;

      /** A connection listening on `channel`; once established, its loss starts the reconnecting. */
      const connect = async (attempt = 1): Promise<pg.Client> => {
        let used: HostPool;
        try {
          used = await primary.acquire();
        } catch (err) {
          throw unavailableOr(err);
        }
        const c = new pg.Client({ connectionString: used.host.connectionString, connectionTimeoutMillis, query_timeout: queryTimeoutMillis, keepAlive: true });
        let established = false;
        c.on('notification', (n) => n.channel === channel && onMessage(n.payload ?? ''));
        c.on('error', (err) => {
          // The pool is left alone: one connection ended (by an operator, say) says little of the
          // host, and reconnecting below tells soon enough if the host is gone.
          if (established && !closed) log.warn({ err, channel, host: used.host.label }, 'listening connection lost');
        });
        c.on('end', () => {
          if (!established || closed) return;
          established = false;
          if (client === c) client = undefined;
          onLost?.();
          reconnect(1);
        });
        try {
          await c.connect();
          await c.query(`LISTEN ${channel}`);
        } catch (err) {
          await c.end().catch(() => undefined); // it failed already; closing it is all that is left
          primary.failed(used, err);
          throw unavailableOr(err);
        }
        // The pool moved while this connection was being made: listen where the writers are now.
        const now = primary.hostInUse();
        if (now && now.label !== used.host.label && attempt < 3) {
          await c.end().catch(() => undefined); // not listening for anyone yet; nothing to report
          return connect(attempt + 1);
        }
        established = true;
        listeningOn = used.host;
        return c;
      };

      // Another host became the one to use: this connection hears no NOTIFY from there. Ending it
      // takes the path of a lost connection (onLost, then reconnecting to the new host, onReconnect).
      const stopFollowing = primary.onMoved((host) => {
        if (!client || listeningOn?.label === host.label) return;
        log.info({ channel, from: listeningOn?.label, to: host.label }, 'listening connection follows the database host');
        void client.end().catch((err: unknown) => log.warn({ err, channel }, 'closing a listening connection failed'));
      });

      // One attempt at a time, with backoff, until the database is back or we are closed.
      const reconnect = (attempt: number) => {
        const delay = Math.min(LISTEN_RETRY_MS.max, LISTEN_RETRY_MS.initial * 2 ** (attempt - 1));
        retryTimer = setTimeout(async () => {
          retryTimer = undefined;
          if (closed) return;
          try {
            const c = await connect();
            if (closed) {
              await c.end().catch((err: unknown) => log.warn({ err, channel }, 'closing a listening connection failed'));
              return;
            }
            client = c;
            log.info({ channel, attempts: attempt }, 'listening again');
            onReconnect?.();
          } catch (err) {
            if (attempt === 1 || attempt % 20 === 0) log.warn({ err, channel, attempts: attempt }, 'cannot listen yet; retrying');
            reconnect(attempt + 1);
          }
        }, delay);
        retryTimer.unref();
      };

      try {
        client = await connect();
      } catch (err) {
        stopFollowing();
        throw err;
      }
      return async () => {
        stopFollowing();
        closed = true;
        if (retryTimer) clearTimeout(retryTimer);
        await client?.end().catch((err: unknown) => log.warn({ err, channel }, 'closing a listening connection failed'));
      };
    },
    async close() {
      watchdog.stop();
      await primary.end();
    },
  };
}
