import type { Sql } from '../../services/eventstore/sql';

export interface RecordedStatement {
  text: string;
  params: unknown[] | undefined;
}

/**
 * The same database, with every statement written down (each transaction's apart): what a test
 * counts to see how many statements (and which locks) a batch costs, or whether a read hit the database.
 */
export function recordingSql(sql: Sql): { sql: Sql; transactions: RecordedStatement[][]; queries: RecordedStatement[] } {
  const transactions: RecordedStatement[][] = [];
  const queries: RecordedStatement[] = [];
  return {
    transactions,
    queries,
    sql: {
      backend: sql.backend,
      query(text, params) {
        queries.push({ text, params });
        return sql.query(text, params);
      },
      queryArrays(text, params) {
        queries.push({ text, params });
        return sql.queryArrays(text, params);
      },
      transaction: (fn) =>
        sql.transaction((tx) => {
          const statements: RecordedStatement[] = [];
          transactions.push(statements);
          return fn({
            query(text, params) {
              statements.push({ text, params });
              return tx.query(text, params);
            },
            queryArrays(text, params) {
              statements.push({ text, params });
              return tx.queryArrays(text, params);
            },
            deferWrite(text, params) {
              statements.push({ text, params });
              tx.deferWrite(text, params);
            },
          });
        }),
      listen: (...args) => sql.listen(...args),
      close: () => sql.close(),
    },
  };
}
