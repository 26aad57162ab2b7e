import { mkdirSync } from 'node:fs';
import { PGlite, types } from '@electric-sql/pglite';
import type { QueryResult, Sql, SqlExecutor } from './sql';

/** `dataDir` undefined keeps the database in memory (tests). */
export async function createPgliteSql(dataDir?: string): Promise<Sql> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir, {
    // Same parsing as the pg adapter: int8 as a JS number.
    parsers: { [types.INT8]: (v: string) => Number(v) },
  });

  const wrap = (q: Pick<PGlite, 'query'>): SqlExecutor => ({
    async query<R>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
      const r = await q.query<R>(text, params as unknown[]);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
    async queryArrays<R extends unknown[]>(text: string, params?: unknown[]): Promise<R[]> {
      return (await q.query<R>(text, params as unknown[], { rowMode: 'array' })).rows;
    },
  });

  return {
    backend: 'pglite',
    ...wrap(db),
    // PGlite has one connection; its transaction() holds a mutex so transactions run one at a time.
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) => db.transaction((tx) => fn(wrap(tx))),
    async listen(channel, onMessage) {
      return db.listen(channel, onMessage);
    },
    async close() {
      await db.close();
    },
  };
}
