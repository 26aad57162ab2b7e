// The pg adapter on a DATABASE_URL host list (libpq's form), against the real server of
// DATABASE_URL and a port where nothing listens: the host that fits is found whatever its place,
// and with none, every statement and LISTEN fails as an outage (503) naming each host and why.
// Switching between a primary and its standby: test/e2e/postgres-failover.test.ts.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLogger } from '../../../services/common/log';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { DatabaseUnavailableError } from '../../../services/eventstore/unavailable';
import { freePort } from '../../support/private-servers';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';

const databaseUrl = serverUrl('postgres');

describe.skipIf(!databaseUrl)('pg adapter: a host list', () => {
  let db: TestDatabase;
  let live: string;
  let dead: string;
  const opened: Sql[] = [];
  const logged: string[] = [];

  /** `db`'s URL with this host list and query instead of its one host. */
  const listed = (hosts: string[], query = '') => {
    const url = new URL(db.url);
    return `postgres://${url.username}@${hosts.join(',')}${url.pathname}${query}`;
  };
  const open = (url: string) => {
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        logged.push(String(chunk));
        done();
      },
    });
    const sql = createPgSql(url, { logger: backgroundLogger('info', sink), connectionTimeoutMillis: 2_000 });
    opened.push(sql);
    return sql;
  };
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err);

  beforeAll(async () => {
    db = await createTestDatabase();
    live = new URL(db.url).host;
    dead = `127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    for (const sql of opened) await sql.close();
    await db?.drop();
  });

  it('given target_session_attrs=read-write and a dead host listed first, then writes go to the live one, which is logged', async () => {
    const sql = open(listed([dead, live], '?target_session_attrs=read-write'));
    await sql.query('CREATE TABLE listed (n int)');
    await sql.transaction(async (tx) => tx.query('INSERT INTO listed VALUES ($1)', [1]));
    expect((await sql.query<{ n: number }>('SELECT n FROM listed')).rows).toEqual([{ n: 1 }]);
    expect(logged.some((line) => line.includes('database host in use') && line.includes(live))).toBe(true);
  });

  it('given any and a dead host listed first, then the first host that answers is used', async () => {
    const sql = open(listed([dead, live]));
    expect((await sql.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('given no host that answers, then statements, transactions and LISTEN fail as an outage naming each host, and the next search tries again', async () => {
    const other = `127.0.0.1:${await freePort()}`;
    const sql = open(listed([dead, other], '?target_session_attrs=read-write'));
    const statement = await failure(sql.query('SELECT 1'));
    expect(statement).toBeInstanceOf(DatabaseUnavailableError);
    expect(String(statement)).toMatch(new RegExp(`no writable database host: ${dead} cannot be used: .*ECONNREFUSED.*; ${other} cannot be used`));
    // Past the failed search's 100 ms, the next statement searches again.
    await new Promise((r) => setTimeout(r, 150));
    const transaction = await failure(sql.transaction(async (tx) => tx.query('SELECT 1')));
    expect(transaction).toBeInstanceOf(DatabaseUnavailableError);
    expect(transaction).not.toBe(statement);
    expect(await failure(sql.listen('nobody_listens', () => undefined))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it('given the live host first and a dead one after, then LISTEN is on the live one and hears its NOTIFY', async () => {
    const sql = open(listed([live, dead], '?target_session_attrs=read-write'));
    const heard: string[] = [];
    const stop = await sql.listen('host_list_test', (payload) => heard.push(payload));
    try {
      await sql.query("SELECT pg_notify('host_list_test', 'hello')");
      await expect.poll(() => heard, { timeout: 5_000 }).toContain('hello');
    } finally {
      await stop();
    }
  });
});
