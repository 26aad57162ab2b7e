import type { Sql, SqlExecutor } from '../../services/eventstore/sql';

export interface RecordedStatement {
  text: string;
  params: unknown[] | undefined;
  /** Sent with the transaction's COMMIT (queryThenCommit). */
  withCommit?: true;
}

/** `executor`, writing each statement down in `into` before it runs. */
const recording = (executor: SqlExecutor, into: RecordedStatement[]): SqlExecutor => ({
  query(text, params) {
    into.push({ text, params });
    return executor.query(text, params);
  },
  queryArrays(text, params) {
    into.push({ text, params });
    return executor.queryArrays(text, params);
  },
});

/**
 * The same database, with every statement written down (each transaction's apart) and how long
 * each transaction took: what a test counts to see how many statements (and which locks) a batch
 * costs, or whether a read hit the database; what a bench counts per call.
 */
export function recordingSql(sql: Sql): { sql: Sql; transactions: RecordedStatement[][]; transactionMs: number[]; queries: RecordedStatement[] } {
  const transactions: RecordedStatement[][] = [];
  const transactionMs: number[] = [];
  const queries: RecordedStatement[] = [];
  return {
    transactions,
    transactionMs,
    queries,
    sql: {
      backend: sql.backend,
      ...recording(sql, queries),
      async transaction(fn) {
        const statements: RecordedStatement[] = [];
        transactions.push(statements);
        const began = performance.now();
        try {
          return await sql.transaction((tx) =>
            fn({
              ...recording(tx, statements),
              deferWrite(text, params) {
                statements.push({ text, params });
                tx.deferWrite(text, params);
              },
              queryThenCommit(text, params) {
                statements.push({ text, params, withCommit: true });
                return tx.queryThenCommit(text, params);
              },
            }),
          );
        } finally {
          transactionMs.push(performance.now() - began);
        }
      },
      listen: (...args) => sql.listen(...args),
      close: () => sql.close(),
    },
  };
}
