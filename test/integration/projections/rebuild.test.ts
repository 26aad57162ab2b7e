import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../../services/common/ids';
import type { SqlExecutor } from '../../../services/eventstore/sql';
import { catchUpToNow } from '../../../services/eventstore/subscription';
import { audit } from '../../../services/audit/audit';
import { INLINE_TABLES } from '../../../services/projections/inline';
import { rebuildProjections } from '../../../services/projections/rebuild';
import { usageProjection } from '../../../services/projections/usage';
import { ledgerBackends, seedWorkload, type OpenBackend } from '../ledger/backends';

const ORDER_BY: Record<string, string> = {
  workspaces: 'id',
  api_keys: 'id',
  ledger_entries: 'position',
  charges: 'request_id',
  cache_entities: 'entity',
  cache_aliases: 'alias',
  usage_daily: 'workspace_id, day, key_id, operation',
  key_last_used: 'key_id',
  members: 'member_id',
  invitations: 'invitation_id',
  api_key_creators: 'key_id',
  console_errors: 'position',
};

const PROJECTION_TABLES = [...Object.values(INLINE_TABLES).flat(), ...usageProjection.tables];

/** Every projection table, every column, in key order, as JSON. */
async function snapshot(sql: SqlExecutor): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of PROJECTION_TABLES) {
    const { rows } = await sql.query(`SELECT * FROM ${table} ORDER BY ${ORDER_BY[table]}`);
    out[table] = JSON.stringify(rows);
  }
  return out;
}

describe.each(ledgerBackends())('rebuilding the projections on $name', (backendDef) => {
  let backend: OpenBackend;

  beforeAll(async () => {
    backend = await backendDef.open();
    await seedWorkload(backend);
    await seedWorkload(backend);
    await catchUpToNow(backend.store, usageProjection);
  });
  afterAll(async () => backend?.cleanup());

  it('knows the order of every projection table', () => {
    expect(PROJECTION_TABLES.every((t) => ORDER_BY[t])).toBe(true);
  });

  it('replays the log from position 0 into identical tables', async () => {
    const before = await snapshot(backend.sql);
    expect(JSON.parse(before.ledger_entries!).length).toBeGreaterThan(10);
    expect(JSON.parse(before.cache_aliases!).length).toBeGreaterThan(3);
    expect(JSON.parse(before.usage_daily!).length).toBeGreaterThan(3);

    const { rows } = await backend.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    const result = await rebuildProjections(backend.store);

    expect(result.events).toBe(rows[0]!.n);
    expect(result.usageEvents).toBe(rows[0]!.n);
    expect(await snapshot(backend.sql)).toEqual(before);
  });

  it('repairs damaged and lost rows', async () => {
    const before = await snapshot(backend.sql);
    await backend.sql.query('UPDATE workspaces SET balance = balance + 7');
    await backend.sql.query('DELETE FROM api_keys');
    await backend.sql.query('UPDATE usage_daily SET calls = calls + 1');
    await backend.sql.query(`UPDATE cache_aliases SET entity = 'nobody'`);
    expect(await snapshot(backend.sql)).not.toEqual(before);

    await rebuildProjections(backend.store);

    expect(await snapshot(backend.sql)).toEqual(before);
    expect((await audit(backend.store)).ok).toBe(true);
  });

  it('leaves the service working on the rebuilt tables, charges racing the rebuild included', async () => {
    const { a, keyA } = await seedWorkload(backend);
    const instances = [backend.ledger, backend.anotherLedger()];
    const charges = Array.from({ length: 40 }, (_, i) =>
      instances[i % 2]!.charge({ workspaceId: a.id, requestId: newRequestId(), keyId: keyA.id, operation: 'company', credits: 1 }),
    );
    const [rebuilt, ...outcomes] = await Promise.all([rebuildProjections(backend.store), ...charges]);

    expect(rebuilt.events).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.kind === 'charged').length).toBe(outcomes.length);
    const report = await audit(backend.store);
    expect(report.mismatches).toEqual([]);
    const { rows } = await backend.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [a.id]);
    // 50 initial; the workload spends 1 + 4 + 3 + 1 + 1 and gets back 4 + 2; then 40 charges of 1.
    expect(rows[0]!.balance).toBe(50 - 10 + 6 - 40);
  });
});
