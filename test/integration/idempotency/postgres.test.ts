import { afterAll, beforeAll, describe } from 'vitest';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { idempotencyStoreContract } from './store.contract';

const databaseUrl = serverUrl('postgres');

describe.skipIf(!databaseUrl)('SQL idempotency store on PostgreSQL', () => {
  // A database of this file's own, so parallel files never share rows.
  let database: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    database = await createTestDatabase();
    sql = createPgSql(database.url);
    await migrate(sql);
  });
  afterAll(async () => {
    await sql?.close();
    await database?.drop();
  });

  idempotencyStoreContract(() => sql);
});
