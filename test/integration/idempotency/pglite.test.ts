import { afterAll, beforeAll, describe } from 'vitest';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { idempotencyStoreContract } from './store.contract';

describe('SQL idempotency store on PGlite', () => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await createPgliteSql();
    await migrate(sql);
  });
  afterAll(async () => {
    await sql.close();
  });

  idempotencyStoreContract(() => sql);
});
