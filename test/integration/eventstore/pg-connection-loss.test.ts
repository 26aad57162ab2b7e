// The pg adapter when connections die under it (pg_terminate_backend: what a restart does to each
// of them): the failure is a DatabaseUnavailableError and never an unhandled 'error' event, the pool
// hands out working connections again, and LISTEN comes back by itself and says so.
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyAuthenticator } from '../../../services/keys/authenticator';
import { backgroundLogger } from '../../../services/common/log';
import { generateApiKey, hashApiKey } from '../../../services/keys/key-material';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { DatabaseUnavailableError } from '../../../services/eventstore/unavailable';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { accountsOf } from '../../support/accounts';

const databaseUrl = serverUrl('postgres');

async function until(check: () => Promise<boolean> | boolean, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

describe.skipIf(!databaseUrl)('pg adapter: connections lost', () => {
  let db: TestDatabase;
  let sql: Sql;
  let admin: pg.Client;
  const logged: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        logged.push(String(chunk));
        done();
      },
    });
    sql = createPgSql(db.url, { logger: backgroundLogger('info', sink) });
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await sql?.close();
    await db?.drop();
  });

  /** Ends the server side of every connection of this database whose current statement matches. */
  const terminate = (queryLike: string) =>
    admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE $1`,
      [queryLike],
    );

  it('a transaction whose connection dies fails with DatabaseUnavailableError, and the next one works', async () => {
    const failure = await sql
      .transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // The connection is gone meanwhile; the process must not see an unhandled 'error' event.
        await new Promise((r) => setTimeout(r, 100));
        await tx.query('SELECT 1');
      })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    expect((failure as DatabaseUnavailableError).commitOutcomeUnknown).toBe(false);

    // Every pooled connection works afterwards: the broken one was discarded, not handed out again.
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => sql.transaction((tx) => tx.query<{ n: number }>('SELECT $1::int AS n', [i]))));
    expect(results.map((r) => r.rows[0]!.n)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('a connection that dies in the round trip carrying COMMIT leaves the outcome unknown (the caller must not answer "nothing charged" as if it were sure)', async () => {
    for (const deferred of [false, true]) {
      const failure = await sql
        .transaction(async (tx) => {
          await tx.query('SELECT $1::int', [1]);
          // The backend ends itself in the last round trip: with the deferred write that goes with
          // COMMIT, or as the last statement before a bare COMMIT.
          if (deferred) tx.deferWrite('SELECT pg_terminate_backend(pg_backend_pid()) WHERE $1::int = 1', [1]);
          else await tx.query('SELECT 1 WHERE $1::int = 1', [1]);
        })
        .catch((err: unknown) => err);
      if (!deferred) {
        expect(failure).toBeUndefined();
        continue;
      }
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      expect((failure as DatabaseUnavailableError).commitOutcomeUnknown).toBe(true);
    }
  });

  it('idle pooled connections that die are replaced, and the loss is logged', async () => {
    await Promise.all(Array.from({ length: 5 }, () => sql.query('SELECT pg_sleep(0.05)')));
    const { rowCount } = await terminate('SELECT pg_sleep%');
    expect(rowCount).toBeGreaterThan(0);
    const losses = () => logged.filter((line) => line.includes('idle database connection lost')).length;
    expect(await until(() => losses() === rowCount)).toBe(true);
    expect((await sql.query<{ ok: number }>('SELECT 1 AS ok')).rows[0]!.ok).toBe(1);
  });

  it('a statement error is not an outage', async () => {
    const failure = await sql.query('SELECT * FROM no_such_table').catch((err: unknown) => err);
    expect(failure).not.toBeInstanceOf(DatabaseUnavailableError);
    const inTransaction = await sql.transaction((tx) => tx.query('SELECT 1/0')).catch((err: unknown) => err);
    expect(inTransaction).not.toBeInstanceOf(DatabaseUnavailableError);
    expect((await sql.query<{ ok: number }>('SELECT 1 AS ok')).rows[0]!.ok).toBe(1);
  });

  it('LISTEN: a lost connection is reported, comes back by itself, and notifications flow again', async () => {
    const events: string[] = [];
    const received: string[] = [];
    const stop = await sql.listen('loss_test', (payload) => received.push(payload), () => events.push('reconnected'), () => events.push('lost'));
    try {
      await admin.query("SELECT pg_notify('loss_test', 'before')");
      expect(await until(() => received.includes('before'))).toBe(true);

      await terminate('LISTEN loss_test%');
      expect(await until(() => events.includes('lost'))).toBe(true);
      expect(await until(() => events.includes('reconnected'))).toBe(true);
      expect(events).toEqual(['lost', 'reconnected']);

      await admin.query("SELECT pg_notify('loss_test', 'after')");
      expect(await until(() => received.includes('after'))).toBe(true);
    } finally {
      await stop();
    }
  });

  it('the key set is rebuilt when LISTEN is back: a key created meanwhile is listed, one revoked meanwhile drops out, and none is refused while it is down', async () => {
    await migrate(sql);
    const accounts = accountsOf(new EventStore(sql, INLINE_PROJECTIONS));
    const ws = await accounts.workspaces.create({ name: 'key-set-rebuild', credits: 1 });
    const toRevoke = await accounts.keys.create(ws.id, {});
    const authenticator = new KeyAuthenticator(sql);
    await authenticator.start();
    const database = (await admin.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
    const server = new pg.Client({ connectionString: databaseUrl });
    await server.connect();
    let allowed = true;
    try {
      expect(await authenticator.screen(toRevoke.key)).toBe('listed');
      // Down, and kept down: whatever is committed now is announced to nobody here.
      await server.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
      allowed = false;
      await terminate('LISTEN api_key_changes%');
      expect(await until(async () => (await authenticator.screen(generateApiKey())) === 'unsure')).toBe(true);
      const created = await accounts.keys.create(ws.id, {});
      await accounts.keys.revoke(toRevoke.id);
      // Never refused on the set's word while it cannot vouch: the database decides.
      expect(await authenticator.screen(created.key)).toBe('unsure');
      expect((await authenticator.authenticate(created.key))?.keyId).toBe(created.id);

      await server.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
      allowed = true;
      expect(await until(async () => (await authenticator.screen(generateApiKey())) === 'unlisted')).toBe(true);
      expect(await authenticator.screen(created.key)).toBe('listed');
      expect(await authenticator.screen(toRevoke.key)).toBe('unlisted');
    } finally {
      if (!allowed) await server.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
      await server.end();
      await authenticator.stop();
    }
  });

  it('key authentication trusts no cached answer while its LISTEN connection is down', async () => {
    await migrate(sql);
    const accounts = accountsOf(new EventStore(sql, INLINE_PROJECTIONS));
    const ws = await accounts.workspaces.create({ name: 'listen-loss', credits: 1 });
    const { id, key } = await accounts.keys.create(ws.id, {});
    const authenticator = new KeyAuthenticator(sql);
    await authenticator.start();
    const database = (await admin.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
    // A database's connections are switched off from outside it.
    const server = new pg.Client({ connectionString: databaseUrl });
    await server.connect();
    try {
      expect((await authenticator.authenticate(key))?.keyId).toBe(id);
      // LISTEN cannot come back (no new connections; the pool keeps its open ones), and a
      // revocation is written that no notification announces.
      await server.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
      await terminate('LISTEN api_key_changes%');
      await admin.query('UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [hashApiKey(key)]);
      expect(await until(async () => (await authenticator.authenticate(key)) === null)).toBe(true);
    } finally {
      await server.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
      await server.end();
      await authenticator.stop();
    }
  });
});
