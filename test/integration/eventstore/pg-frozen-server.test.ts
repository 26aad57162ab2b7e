// The pg adapter against a server that stops answering without closing anything: the real server
// of DATABASE_URL behind a loopback relay that can be frozen (it holds every byte, as a paused
// container or a firewall dropping packets would; connections stay open, nothing is refused).
// Statements, transactions and LISTEN fail as an outage (503) within the query timeout instead of
// hanging, and work again by themselves once the server answers. The drills on a real formation:
// test/e2e/postgres-formation-drills.test.ts.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLogger } from '../../../services/common/log';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { DatabaseUnavailableError } from '../../../services/eventstore/unavailable';
import { eventually } from '../../e2e/support-instances/instances';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';

const databaseUrl = serverUrl('postgres');
const QUERY_TIMEOUT_MS = 500;

/** Relays loopback connections to `target`; frozen, it holds what either side sends until thawed. */
interface FreezableRelay {
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

async function startRelay(target: { host: string; port: number }): Promise<FreezableRelay> {
  let frozen = false;
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    for (const [from, to] of [pair, [upstream, client] as const]) {
      from.on('data', (chunk) => {
        if (frozen) from.pause();
        to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        to.destroy();
        pairs.delete(pair);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      frozen = true;
      for (const sockets of pairs) for (const socket of sockets) socket.pause();
    },
    thaw() {
      frozen = false;
      for (const sockets of pairs) for (const socket of sockets) socket.resume();
    },
    async close() {
      for (const sockets of pairs) for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(!databaseUrl)('pg adapter: a server that stops answering', () => {
  let db: TestDatabase;
  let relay: FreezableRelay;
  let sql: Sql;

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    relay = await startRelay({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${relay.port}`;
    sql = createPgSql(url.toString(), { logger: backgroundLogger('silent'), connectionTimeoutMillis: QUERY_TIMEOUT_MS, queryTimeoutMillis: QUERY_TIMEOUT_MS });
    await sql.query('CREATE TABLE frozen_probe (n int)');
  });

  afterAll(async () => {
    relay?.thaw();
    await sql?.close();
    await relay?.close();
    await db?.drop();
  });

  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err);

  it('statements and transactions on open connections fail as an outage instead of hanging, and work again once the server answers', async () => {
    const heard: string[] = [];
    const stopListening = await sql.listen('frozen_test', (payload) => heard.push(payload));
    await sql.query('INSERT INTO frozen_probe VALUES (1)');
    relay.freeze();
    try {
      const statement = await failure(sql.query('SELECT 1'));
      expect(statement).toBeInstanceOf(DatabaseUnavailableError);
      expect(String(statement)).toMatch(/Query read timeout|timeout/);
      const transaction = await failure(sql.transaction((tx) => tx.query('INSERT INTO frozen_probe VALUES (2)')));
      expect(transaction).toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      relay.thaw();
    }
    expect(await eventually(async () => sql.query('INSERT INTO frozen_probe VALUES (3)').then(() => true, () => false), 10_000, 50)).toBe(true);
    await sql.transaction((tx) => tx.query('INSERT INTO frozen_probe VALUES (4)'));
    const rows = await sql.query<{ n: number }>('SELECT n FROM frozen_probe ORDER BY n');
    // The insert of the frozen transaction never committed.
    expect(rows.rows.map((r) => r.n)).toEqual([1, 3, 4]);
    // LISTEN came through the freeze too.
    expect(await eventually(async () => {
      await sql.query("SELECT pg_notify('frozen_test', 'after')");
      return heard.includes('after');
    }, 10_000, 200)).toBe(true);
    await stopListening();
  }, 30_000);

  it('a statement of a connection made while frozen fails in time too', async () => {
    // Three at once: the pool makes connections through the frozen relay as well as using its own.
    relay.freeze();
    try {
      const results = await Promise.all(Array.from({ length: 3 }, () => failure(sql.query('SELECT 1'))));
      for (const result of results) expect(result).toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      relay.thaw();
    }
    expect(await eventually(async () => sql.query('SELECT 1').then(() => true, () => false), 10_000, 50)).toBe(true);
  }, 30_000);
});
