import pg from 'pg';

/** A statement sent ahead of or after the main one of a round trip; its result is not read. */
export interface SideStatement {
  text: string;
  values?: unknown[];
}

interface Connection {
  parse(query: { text: string; name?: string }): void;
  bind(config: { portal?: string; statement?: string; values?: unknown[]; valueMapper?: unknown }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}

// pg's own value mapper (Dates, arrays, JSON), the one its Query uses for the main statement.
const { prepareValue } = (pg as unknown as { utils: { prepareValue: unknown } }).utils;

/**
 * One query of pg's, with statements before and after it in the same round trip: every message
 * is written, then one Sync. PostgreSQL runs them in order and skips the rest at the first error,
 * which then fails the whole query. The side statements are unnamed (parsed each time); the main
 * one may be named (prepared once per connection) when no statement precedes it.
 *
 * This is what lets a transaction send BEGIN with its first statement, and a write nobody reads
 * with COMMIT: two round trips fewer per group commit, each of which would otherwise wait for the
 * event loop between HTTP requests.
 */
class PipelinedQuery extends pg.Query {
  constructor(
    config: pg.QueryConfig & { rowMode?: 'array' },
    private readonly before: SideStatement[],
    private readonly after: SideStatement[],
    callback: (err: Error | null, result: pg.QueryResult | pg.QueryResult[]) => void,
  ) {
    super({ ...config, queryMode: 'extended' } as pg.QueryConfig, undefined, callback as never);
  }

  private mainDescribed = false;

  // Only the main statement is described (its columns known): rows of a side statement before it
  // (a deferred write may be a SELECT, e.g. of pg_notify) are not read.
  handleRowDescription(msg: unknown): void {
    this.mainDescribed = true;
    (pg.Query.prototype as unknown as { handleRowDescription(m: unknown): void }).handleRowDescription.call(this, msg);
  }

  handleDataRow(msg: unknown): void {
    if (this.mainDescribed) (pg.Query.prototype as unknown as { handleDataRow(m: unknown): void }).handleDataRow.call(this, msg);
  }

  prepare(connection: Connection): void {
    for (const statement of this.before) sendSide(connection, statement);
    (pg.Query.prototype as unknown as { prepare(c: Connection): void }).prepare.call(this, connection);
  }

  // Called by prepare (Query's own code) after the main statement's Execute: the side statements
  // after it go before the one Sync.
  _getRows(connection: Connection, rows?: number): void {
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    for (const statement of this.after) sendSide(connection, statement);
    connection.sync();
  }
}

function sendSide(connection: Connection, statement: SideStatement) {
  connection.parse({ text: statement.text });
  connection.bind({ values: statement.values ?? [], valueMapper: prepareValue });
  connection.execute({});
}

/**
 * Runs `config` with `before` and `after` in one round trip; resolves to the main statement's
 * result (side statements' results are skipped by count, their rows dropped).
 */
export function pipelinedQuery<R>(
  client: pg.PoolClient,
  config: pg.QueryConfig & { rowMode?: 'array' },
  before: SideStatement[],
  after: SideStatement[],
): Promise<{ rows: R[]; rowCount: number | null }> {
  return new Promise((resolve, reject) => {
    const query = new PipelinedQuery(config, before, after, (err, result) => {
      if (err) return reject(err);
      const results = Array.isArray(result) ? result : [result];
      resolve(results[before.length] as never);
    });
    client.query(query as never);
  });
}
