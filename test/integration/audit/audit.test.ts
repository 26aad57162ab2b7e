import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newRequestId } from '../../../services/common/ids';
import { audit } from '../../../services/audit/audit';
import { rebuildProjections } from '../../../services/projections/rebuild';
import { ledgerBackends, seedWorkload, type OpenBackend } from '../ledger/backends';

describe.each(ledgerBackends())('the audit on $name', (backendDef) => {
  let backend: OpenBackend;
  let seeded: Awaited<ReturnType<typeof seedWorkload>>;

  beforeAll(async () => {
    backend = await backendDef.open();
    seeded = await seedWorkload(backend);
  });
  afterAll(async () => backend?.cleanup());
  // Each test damages something; start each from the tables the log gives.
  beforeEach(async () => {
    await rebuildProjections(backend.store);
  });

  const eventCount = async () => (await backend.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;

  it('finds a clean log in order, counting its events and workspaces, with progress', async () => {
    const progress: number[] = [];
    const report = await audit(backend.store, { onProgress: (p) => progress.push(p.events) });
    expect(report).toEqual({ ok: true, events: await eventCount(), workspaces: 3, mismatches: [], chains: { checked: 3, broken: [] } });
    expect(progress.at(-1)).toBe(report.events);
  });

  it('catches the usage subscription up before comparing, so a lagging projection is not a mismatch', async () => {
    const requestId = newRequestId();
    await backend.ledger.charge({ workspaceId: seeded.b.id, requestId, keyId: seeded.keyB.id, operation: 'company', credits: 1 });
    const report = await audit(backend.store);
    expect(report.mismatches).toEqual([]);
    const { rows } = await backend.sql.query<{ n: number }>('SELECT sum(credits_charged)::int AS n FROM usage_daily WHERE workspace_id = $1', [seeded.b.id]);
    expect(rows[0]!.n).toBe(4);
  });

  it('names a workspace whose balance was changed behind the log', async () => {
    const { rows } = await backend.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [seeded.a.id]);
    await backend.sql.query('UPDATE workspaces SET balance = balance + 1 WHERE id = $1', [seeded.a.id]);
    const report = await audit(backend.store);
    expect(report.ok).toBe(false);
    expect(report.mismatches).toEqual([
      { projection: 'workspaces', key: seeded.a.id, field: 'balance', expected: rows[0]!.balance, actual: rows[0]!.balance + 1 },
    ]);
  });

  it('names a ledger entry whose balance_after is wrong', async () => {
    const { rows } = await backend.sql.query<{ position: number; balance_after: number }>(
      `SELECT position, balance_after FROM ledger_entries WHERE workspace_id = $1 AND type = 'LookupCharged' ORDER BY position LIMIT 1`,
      [seeded.b.id],
    );
    const entry = rows[0]!;
    await backend.sql.query('UPDATE ledger_entries SET balance_after = 999 WHERE position = $1', [entry.position]);
    const report = await audit(backend.store);
    expect(report.mismatches).toEqual([
      { projection: 'ledger_entries', key: String(entry.position), field: 'balance_after', expected: entry.balance_after, actual: 999 },
    ]);
  });

  it('names a deleted API key row as missing', async () => {
    await backend.sql.query('DELETE FROM api_keys WHERE id = $1', [seeded.keyB.id]);
    const report = await audit(backend.store);
    expect(report.mismatches).toEqual([
      { projection: 'api_keys', key: seeded.keyB.id, field: 'row', expected: { workspace_id: seeded.b.id, rate_limit_per_minute: 600, mode: 'live', revoked: false }, actual: null },
    ]);
  });

  it('names a revocation lost from the keys table', async () => {
    await backend.sql.query('UPDATE api_keys SET revoked_at = NULL WHERE id = $1', [seeded.keyA2.id]);
    const report = await audit(backend.store);
    expect(report.mismatches).toEqual([{ projection: 'api_keys', key: seeded.keyA2.id, field: 'revoked', expected: true, actual: false }]);
  });

  it('names a row no event accounts for as extra', async () => {
    await backend.sql.query(`INSERT INTO workspaces (id, name, balance, max_concurrency, created_at) VALUES ('ws_FORGED', 'Forged', 1000, 8, now())`);
    const report = await audit(backend.store);
    expect(report.mismatches).toEqual([
      { projection: 'workspaces', key: 'ws_FORGED', field: 'row', expected: null, actual: { id: 'ws_FORGED', name: 'Forged', balance: 1000, max_concurrency: 8, last_ledger_hash: null } },
    ]);
  });

  it('names damaged charges, usage, last use and cache rows', async () => {
    const refundedRequest = seeded.requests[1]!;
    await backend.sql.query('UPDATE charges SET refunded_credits = NULL, settled = false WHERE request_id = $1', [refundedRequest]);
    await backend.sql.query(`UPDATE usage_daily SET errors = errors + 2 WHERE operation = 'domain'`);
    await backend.sql.query(`UPDATE key_last_used SET last_used_at = '2001-01-01T00:00:00Z' WHERE key_id = $1`, [seeded.keyB.id]);
    await backend.sql.query(`UPDATE cache_entities SET content_hash = 'sha256:00' WHERE entity = '1337'`);
    await backend.sql.query(`UPDATE cache_aliases SET entity = '1337' WHERE alias = 'globex'`);
    await backend.sql.query(`DELETE FROM cache_aliases WHERE alias = 'ghost-co'`);

    const found = (await audit(backend.store)).mismatches.map((m) => `${m.projection} ${m.key} ${m.field} ${JSON.stringify(m.expected)} ${JSON.stringify(m.actual)}`);

    expect(found).toEqual([
      `charges ${refundedRequest} refunded_credits 4 null`,
      `charges ${refundedRequest} settled true false`,
      expect.stringMatching(new RegExp(`^usage_daily ${seeded.a.id}\\|\\d{4}-\\d{2}-\\d{2}\\|${seeded.keyA.id}\\|domain errors 1 3$`)),
      expect.stringMatching(new RegExp(`^key_last_used ${seeded.keyB.id} last_used_at "20\\d\\d-.*" "2001-01-01T00:00:00.000Z"$`)),
      expect.stringMatching(/^cache_entities 1337 content_hash "sha256:[0-9a-f]{64}" "sha256:00"$/),
      `cache_aliases ghost-co row {"entity":"4242","code":null} null`,
      `cache_aliases globex entity "4242" "1337"`,
    ]);
  });

  it('agrees with the tables a rebuild produces after damage', async () => {
    await backend.sql.query('UPDATE workspaces SET balance = 0');
    expect((await audit(backend.store)).ok).toBe(false);
    await rebuildProjections(backend.store);
    expect(await audit(backend.store)).toMatchObject({ ok: true, mismatches: [] });
  });
});
