import { mkdirSync } from 'node:fs';
import { PGlite, types } from '@electric-sql/pglite';
import type { QueryResult, Sql, SqlExecutor, TransactionExecutor } from './sql';

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
    transaction: <T>(fn: (tx: TransactionExecutor) => Promise<T>) =>
      db.transaction(async (tx) => {
        // No round trips to save in process: a deferred write runs at once, and what comes next
        // (a statement, the commit) waits for it and fails with it.
        let deferred: Promise<unknown> = Promise.resolve();
        // queryThenCommit ran: nothing may follow (as on pg, where COMMIT went with it).
        let committed = false;
        const open = () => {
          if (committed) throw new Error('the transaction has committed; no statement may follow');
        };
        const executor = wrap(tx);
        const result = await fn({
          async query(text, params) {
            open();
            await deferred;
            return executor.query(text, params);
          },
          async queryArrays(text, params) {
            open();
            await deferred;
            return executor.queryArrays(text, params);
          },
          deferWrite(text, params) {
            open();
            deferred = deferred.then(() => tx.query(text, params));
            deferred.catch(() => undefined); // read by whatever comes next
          },
          // In process there is no round trip to share: the commit follows when `fn` resolves.
          async queryThenCommit(text, params) {
            open();
            committed = true;
            await deferred;
            return executor.query(text, params);
          },
        }).catch(async (err: unknown) => {
          // Rolled back only once a deferred write still running has ended (its own error aside).
          await deferred.catch(() => undefined);
          throw err;
        });
        await deferred;
        return result;
      }),
    async listen(channel, onMessage) {
      return db.listen(channel, onMessage);
    },
    async close() {
      await db.close();
    },
  };
}
