import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import type { Sql } from '../../../services/eventstore/sql';
import { Ledger } from '../../../services/ledger/ledger';
import { audit, type AuditProgress } from '../../../services/audit/audit';
import { runAudit } from '../../../services/audit/audit-runner';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { accountsOf } from '../../support/accounts';
import { seedWorkload } from '../ledger/backends';

// The audit off the request path: on PostgreSQL, in a worker thread with its own connections.
describe.runIf(serverUrl('postgres'))('the audit in its worker thread on PostgreSQL', () => {
  let db: TestDatabase;
  let sql: Sql;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = createPgSql(db.url);
    await migrate(sql);
    store = new EventStore(sql, INLINE_PROJECTIONS);
    const ledger = new Ledger(store);
    await seedWorkload({ ledger, ...accountsOf(store) });
    await ledger.close();
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  it('gives the report the audit gives in process, with progress as it reads', async () => {
    const progress: AuditProgress[] = [];
    const report = await runAudit(store, { databaseUrl: db.url, onProgress: (p) => progress.push(p) });
    expect(report).toEqual(await audit(store));
    expect(report.ok).toBe(true);
    const { rows } = await sql.query<{ head: string }>('SELECT max(position)::text AS head FROM events');
    const head = Number(rows[0]!.head);
    // Catching up, then the log read page by page up to its head, then the comparison.
    expect(progress[0]).toEqual({ phase: 'catching_up', events: 0, position: 0, head: null });
    expect(progress[1]).toEqual({ phase: 'replaying', events: 0, position: 0, head });
    expect(progress.at(-1)).toEqual({ phase: 'comparing', events: report.events, position: head, head });
    expect(progress.filter((p) => p.phase === 'replaying').at(-1)).toEqual({ phase: 'replaying', events: report.events, position: head, head });
  }, 60_000);

  it('names the first broken link of a chain changed behind the service', async () => {
    const { rows } = await sql.query<{ position: number }>(`SELECT position FROM events WHERE type = 'CreditsGranted' ORDER BY position DESC LIMIT 1`);
    const position = Number(rows[0]!.position);
    await sql.query('ALTER TABLE events DISABLE TRIGGER events_append_only');
    await sql.query(`UPDATE events SET data = jsonb_set(data, '{amount}', '1000000') WHERE position = $1`, [position]);
    await sql.query('ALTER TABLE events ENABLE TRIGGER events_append_only');
    const report = await runAudit(store, { databaseUrl: db.url });
    expect(report.ok).toBe(false);
    expect(report.chains.broken).toEqual([expect.objectContaining({ position, field: 'hash' })]);
  }, 60_000);
});
