import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../../services/common/ids';
import { audit } from '../../../services/audit/audit';
import { statement } from '../../../services/finance/queries';
import { chargesFoldedFromEvents } from '../../../services/metrics/metrics';
import { readLogPage, readWholeTransactions, rebuildProjections } from '../../../services/projections/rebuild';
import { ledgerBackends, type OpenBackend } from './backends';

// A charge settled in its own transaction (every cache hit) has no row of `charges`
// (services/projections/ledger-plan.ts, chargeRowsToStore): what read that row reads its events.
describe.each(ledgerBackends())('charges settled in their own transaction on $name', (backendDef) => {
  let backend: OpenBackend;
  beforeAll(async () => {
    backend = await backendDef.open();
  });
  afterAll(async () => backend?.cleanup());

  const hit = (workspaceId: string, keyId: string, requestId = newRequestId()) => ({
    workspaceId,
    requestId,
    keyId,
    operation: 'person_name' as const,
    credits: 3,
    completed: { outcome: 'success' as const, cache_status: 'HIT' as const, credits_charged: 3, error_code: null },
  });
  const rowsOf = async (requestIds: string[]) =>
    (await backend.sql.query<{ request_id: string }>('SELECT request_id FROM charges WHERE request_id = ANY($1::text[]) ORDER BY request_id', [requestIds])).rows.map((r) => r.request_id);

  it('given a cache hit and a live call, when both are charged, then only the live call has a row, and the ledger and statements still name both operations', async () => {
    const ws = await backend.workspaces.create({ name: 'Hits', credits: 20 });
    const key = await backend.keys.create(ws.id, {});
    const cached = hit(ws.id, key.id);
    const live = newRequestId();
    const from = new Date(Date.now() - 60_000).toISOString();
    await backend.ledger.charge(cached);
    await backend.ledger.charge({ workspaceId: ws.id, requestId: live, keyId: key.id, operation: 'domain', credits: 2 });

    expect(await rowsOf([cached.requestId, live])).toEqual([live]);
    const operations = await backend.reads.operationsOf(ws.id, [cached.requestId, live]);
    expect(Object.fromEntries(operations)).toEqual({ [cached.requestId]: 'person_name', [live]: 'domain' });
    const { lines } = await statement(backend.sql, ws.id, from, new Date(Date.now() + 60_000).toISOString());
    expect(lines.map((l) => [l.type, l.request_id, l.operation])).toEqual([
      ['CreditsGranted', null, null],
      ['LookupCharged', cached.requestId, 'person_name'],
      ['LookupCharged', live, 'domain'],
    ]);
    expect(await audit(backend.store)).toMatchObject({ ok: true, mismatches: [] });
  });

  it('given a cache hit whose caller was told it cost nothing, when it is voided twice, then it is refunded once, from its events', async () => {
    const ws = await backend.workspaces.create({ name: 'Void', credits: 10 });
    const key = await backend.keys.create(ws.id, {});
    const cached = hit(ws.id, key.id);
    await backend.ledger.charge(cached);
    expect(await backend.reads.balance(ws.id)).toBe(7);

    const call = { workspaceId: ws.id, requestId: cached.requestId, keyId: key.id, operation: 'person_name' as const, cacheStatus: 'HIT' as const };
    const folded = async () => (await chargesFoldedFromEvents.get()).values[0]?.value ?? 0;
    const foldedBefore = await folded();
    const [first, second] = await Promise.all([backend.ledger.voidCharge(call), backend.anotherLedger().voidCharge(call)]);
    expect([first, second].sort((a, b) => b.refunded - a.refunded)).toEqual([
      { refunded: 3, kept: 0 },
      { refunded: 0, kept: 0 },
    ]);
    expect(await backend.ledger.voidCharge(call)).toEqual({ refunded: 0, kept: 0 });
    expect(await folded()).toBe(foldedBefore + 3);
    expect(await backend.reads.balance(ws.id)).toBe(10);
    expect(await rowsOf([cached.requestId])).toEqual([]);
    expect(await audit(backend.store)).toMatchObject({ ok: true, mismatches: [] });
  });

  it('given a cache hit with a forged row of charges, then the audit names the row', async () => {
    const ws = await backend.workspaces.create({ name: 'Forged', credits: 10 });
    const key = await backend.keys.create(ws.id, {});
    const cached = hit(ws.id, key.id);
    await backend.ledger.charge(cached);
    await backend.sql.query(
      `INSERT INTO charges (request_id, workspace_id, key_id, operation, credits, charged_at, refunded_credits, settled) VALUES ($1, $2, $3, 'person_name', 3, now(), NULL, true)`,
      [cached.requestId, ws.id, key.id],
    );
    const found = (await audit(backend.store)).mismatches.map((m) => `${m.projection} ${m.key} ${m.field}`);
    expect(found).toEqual([`charges ${cached.requestId} row`]);
    await backend.sql.query('DELETE FROM charges WHERE request_id = $1', [cached.requestId]);
  });

  it('given pages that would split a transaction, when read for a rebuild, then each page ends with its transactions whole, and a rebuild keeps hits without rows', async () => {
    const ws = await backend.workspaces.create({ name: 'Pages', credits: 100 });
    const key = await backend.keys.create(ws.id, {});
    const hits = Array.from({ length: 6 }, () => hit(ws.id, key.id));
    await Promise.all(hits.map((h) => backend.ledger.charge(h)));
    const head = (await readLogPage(backend.sql, 0, 1_000_000)).at(-1)!.position;
    const charged = (await readLogPage(backend.sql, 0, 1_000_000)).find((e) => e.type === 'LookupCharged' && (e.data as { request_id: string }).request_id === hits[0]!.requestId)!;

    // A page of one event that is a hit's LookupCharged grows to its transaction's last event.
    const page = await readWholeTransactions(backend.sql, charged.position - 1, 1);
    expect(page[0]!.position).toBe(charged.position);
    const last = page.at(-1)!;
    expect(page.filter((e) => e.transactionId === charged.transactionId).map((e) => e.type)).toContain('LookupCompleted');
    const next = await readLogPage(backend.sql, last.position, 1_000_000);
    expect(next.filter((e) => e.transactionId === charged.transactionId)).toEqual([]);
    // Every event, once, in order, however small the pages.
    const positions: number[] = [];
    for (let after = 0; after < head; ) {
      const p = await readWholeTransactions(backend.sql, after, 2);
      positions.push(...p.map((e) => e.position));
      after = p.at(-1)!.position;
    }
    expect(positions).toEqual((await readLogPage(backend.sql, 0, 1_000_000)).map((e) => e.position));

    await rebuildProjections(backend.store);
    expect(await rowsOf(hits.map((h) => h.requestId))).toEqual([]);
    expect(await audit(backend.store)).toMatchObject({ ok: true, mismatches: [] });
  });
});
