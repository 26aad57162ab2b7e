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
  /**
   * The rows as arrays, in column order: no object per row keyed by column name, which is what a
   * reader of many rows (the audit) would otherwise spend its time building and collecting.
   */
  queryArrays<R extends unknown[] = unknown[]>(text: string, params?: unknown[]): Promise<R[]>;
}

/** What a transaction's statements run on. */
export interface TransactionExecutor extends SqlExecutor {
  /**
   * A write whose result nobody reads: sent with the transaction's next statement, or with its
   * COMMIT, in the same round trip. Its failure fails that statement (or the commit), so the
   * transaction rolls back as if it had failed here.
   */
  deferWrite(text: string, params?: unknown[]): void;
  /**
   * The transaction's last statement, sent with its COMMIT in one round trip (the deferred writes
   * ahead of it). Its rows are read as any statement's; nothing may follow it.
   */
  queryThenCommit<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<R>>;
}

export interface Sql extends SqlExecutor {
  readonly backend: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: TransactionExecutor) => Promise<T>): Promise<T>;
  /**
   * Calls `onMessage` for each NOTIFY on `channel` committed by any connection to this database.
   * `onLost` runs when the listening connection is lost (notifications are missed from then on);
   * `onReconnect` once it is back, reconnected by itself: whatever was missed must be assumed.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onReconnect?: () => void,
    onLost?: () => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
