import pg from 'pg';
import type { QueryResult, Sql, SqlExecutor } from './sql';

// bigint (int8) and numeric come back as strings by default; positions and balances fit in a
// JS number, so parse them here once for every caller.
pg.types.setTypeParser(20, (v) => Number(v));

export function createPgSql(connectionString: string, options: { max?: number } = {}): Sql {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 20 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});

  const wrap = (client: pg.Pool | pg.PoolClient): SqlExecutor => ({
    async query<R>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
      const r = await client.query(text, params as unknown[]);
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
  });

  return {
    backend: 'postgres',
    ...wrap(pool),
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async listen(channel, onMessage, onReconnect) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
      let client: pg.Client | undefined;
      let closed = false;
      const connect = async (isReconnect: boolean): Promise<void> => {
        const c = new pg.Client({ connectionString });
        c.on('notification', (n) => n.channel === channel && onMessage(n.payload ?? ''));
        c.on('error', () => {});
        c.on('end', () => {
          if (closed) return;
          // Keep trying until the database is back; then tell the caller what it may have missed.
          setTimeout(() => void connect(true).catch(() => c.emit('end')), 500).unref();
        });
        await c.connect();
        await c.query(`LISTEN ${channel}`);
        client = c;
        if (isReconnect) onReconnect?.();
      };
      await connect(false);
      return async () => {
        closed = true;
        await client?.end().catch(() => {});
      };
    },
    async close() {
      await pool.end();
    },
  };
}
