import pg from 'pg';

/** A statement sent ahead of or after the main one of a round trip; its result is not read. */
export interface SideStatement {
  text: string;
  values?: unknown[];
  /** Prepared once per connection under this name (as pg names the main statement); absent: parsed each time. */
  name?: string;
}

interface Connection {
  parsedStatements: Record<string, string>;
  on(event: 'parseComplete', listener: () => void): void;
  off(event: 'parseComplete', listener: () => void): void;
  parse(query: { text: string; name?: string }): void;
  bind(config: { portal?: string; statement?: string; values?: unknown[]; valueMapper?: unknown }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}

// pg's own value mapper (Dates, arrays, JSON), the one its Query uses for the main statement.
const { prepareValue } = (pg as unknown as { utils: { prepareValue: unknown } }).utils;

/** Marks the main statement's Parse among a round trip's. */
const MAIN = Symbol('main');

/**
 * One query of pg's, with statements before and after it in the same round trip: every message
 * is written, then one Sync. PostgreSQL runs them in order and skips the rest at the first error,
 * which then fails the whole query. Each statement, main or side, may be named: prepared once per
 * connection, in pg's own record of the connection's prepared statements.
 *
 * pg books every ParseComplete of a round trip as its main statement's; this query counts them
 * instead, in the order the Parse messages went: a side statement is recorded as prepared when
 * its own completes, and the main one is struck off again if its own never came (an earlier
 * statement failed, or it did not parse).
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
  /** The names of this round trip's Parse messages, in order (MAIN: the main statement's), and how many have completed. */
  private parses?: { connection: Connection; sent: (string | typeof MAIN | null)[]; completed: number; count: () => void };

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
    const parses = { connection, sent: [] as (string | typeof MAIN | null)[], completed: 0, count: () => this.parseCompleted() };
    this.parses = parses;
    connection.on('parseComplete', parses.count);
    try {
      for (const statement of this.before) this.sendSide(connection, statement);
    } catch (err) {
      // A value pg cannot map: the count stops with the query, whose error goes on up.
      this.settleParses();
      throw err;
    }
    if (!(this as unknown as { hasBeenParsed(c: Connection): boolean }).hasBeenParsed(connection)) parses.sent.push(MAIN);
    (pg.Query.prototype as unknown as { prepare(c: Connection): void }).prepare.call(this, connection);
  }

  // Called by prepare (Query's own code) after the main statement's Execute: the side statements
  // after it go before the one Sync.
  _getRows(connection: Connection, rows?: number): void {
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    for (const statement of this.after) this.sendSide(connection, statement);
    connection.sync();
  }

  handleError(err: Error, connection: Connection): void {
    this.settleParses();
    (pg.Query.prototype as unknown as { handleError(e: Error, c: Connection): void }).handleError.call(this, err, connection);
  }

  handleReadyForQuery(connection: Connection): void {
    this.settleParses();
    (pg.Query.prototype as unknown as { handleReadyForQuery(c: Connection): void }).handleReadyForQuery.call(this, connection);
  }

  private sendSide(connection: Connection, statement: SideStatement) {
    const parses = this.parses!;
    const mainName = (this as unknown as { name?: string }).name;
    // A name already prepared, or parsed earlier in this round trip, is bound as it is.
    const name = statement.name !== mainName ? statement.name : undefined;
    const prepared = name !== undefined && (connection.parsedStatements[name] !== undefined || parses.sent.includes(name));
    if (!prepared) {
      connection.parse({ text: statement.text, name });
      parses.sent.push(name ?? null);
    }
    connection.bind({ statement: name, values: statement.values ?? [], valueMapper: prepareValue });
    connection.execute({});
  }

  private parseCompleted() {
    const parses = this.parses!;
    const name = parses.sent[parses.completed++];
    if (typeof name === 'string') parses.connection.parsedStatements[name] = this.textOf(name);
  }

  /** The text of the side statement named `name` (for pg's record). */
  private textOf(name: string): string {
    return [...this.before, ...this.after].find((st) => st.name === name)!.text;
  }

  /** The round trip has ended: the main statement stays recorded as prepared only if its Parse completed. */
  private settleParses() {
    const parses = this.parses;
    if (!parses) return;
    this.parses = undefined;
    parses.connection.off('parseComplete', parses.count);
    const main = parses.sent.indexOf(MAIN);
    const mainName = (this as unknown as { name?: string }).name;
    if (main >= 0 && mainName && parses.completed <= main) delete parses.connection.parsedStatements[mainName];
  }
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
