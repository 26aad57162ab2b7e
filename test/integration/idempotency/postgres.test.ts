import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { idempotencyStoreContract } from './store.contract';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) {
  if (process.env.CI === 'true') throw new Error('DATABASE_URL is not set: the PostgreSQL idempotency suite cannot run under CI');
  console.warn('SKIPPING PostgreSQL idempotency tests: DATABASE_URL is not set');
}

/** A database of this file's own, dropped afterwards, so parallel files never share rows. */
async function withAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

describe.skipIf(!DATABASE_URL)('SQL idempotency store on PostgreSQL', () => {
  const name = `idem_${randomBytes(6).toString('hex')}`;
  let sql: Sql;
  beforeAll(async () => {
    await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
    const url = new URL(DATABASE_URL!);
    url.pathname = `/${name}`;
    sql = createPgSql(url.toString());
    await migrate(sql);
  });
  afterAll(async () => {
    await sql?.close();
    await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  idempotencyStoreContract(() => sql);
});
