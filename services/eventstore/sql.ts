/**
 * The one SQL-executor port. Implemented by `pg` (real PostgreSQL) and by PGlite (embedded);
 * every query and migration in the project runs unchanged on both.
 */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface SqlExecutor {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<R>>;
}

export interface Sql extends SqlExecutor {
  readonly backend: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
