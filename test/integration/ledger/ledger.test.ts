import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../../services/common/ids';
import { catchUpToNow } from '../../../services/eventstore/subscription';
import type { RecordedEvent } from '../../../services/eventstore/types';
import { UnknownKeyError } from '../../../services/keys/revoke-key';
import { type Ledger, UnknownWorkspaceError, type SettleCommand } from '../../../services/ledger/ledger';
import { audit } from '../../../services/audit/audit';
import { usageProjection } from '../../../services/projections/usage';
import { ledgerBackends, type OpenBackend } from './backends';

async function allEvents(backend: OpenBackend): Promise<RecordedEvent[]> {
  const { rows } = await backend.sql.query<{ position: number; stream: string; type: string; data: any; metadata: any }>(
    'SELECT position, stream, type, data, metadata FROM events ORDER BY position',
  );
  return rows as unknown as RecordedEvent[];
}

const failedLookup = (workspaceId: string, keyId: string, requestId: string, owed: number): SettleCommand => ({
  workspaceId,
  requestId,
  keyId,
  operation: 'domain',
  refund: { owed, cause: 'upstream_error' },
  completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'upstream_error' },
});

describe.each(ledgerBackends())('credits ledger on $name', (backendDef) => {
  let backend: OpenBackend;
  let ledger: Ledger;
  let workspaces: OpenBackend['workspaces'];
  let keys: OpenBackend['keys'];
  let reads: OpenBackend['reads'];

  beforeAll(async () => {
    backend = await backendDef.open();
    ({ ledger, workspaces, keys, reads } = backend);
  });
  afterAll(async () => backend?.cleanup());

  it('creates, funds, keys, charges and refunds a workspace, every step in the ledger', async () => {
    const ws = await workspaces.create({ name: 'Flow Inc', credits: 10, maxConcurrency: 3 });
    expect(ws).toMatchObject({ name: 'Flow Inc', balance: 10, max_concurrency: 3 });
    expect(ws.id).toMatch(/^ws_[0-9A-Z]{26}$/);
    expect(await workspaces.get(ws.id)).toEqual(ws);

    expect(await ledger.grantCredits(ws.id, 5, 'trial')).toEqual({ balance: 15 });
    expect((await workspaces.changeLimits(ws.id, 6)).max_concurrency).toBe(6);

    const key = await keys.create(ws.id, { name: 'prod', rateLimitPerMinute: 60 });
    expect(key.key).toMatch(/^lk_live_[A-Za-z0-9]{32}$/);
    expect(key).toMatchObject({ name: 'prod', rate_limit_per_minute: 60, prefix: key.key.slice(0, 12) });
    const listed = await keys.list(ws.id);
    expect(listed).toEqual([{ id: key.id, prefix: key.prefix, name: 'prod', mode: 'live', created_at: key.created_at, last_used_at: null, revoked_at: null }]);
    const { rows: stored } = await backend.sql.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE id = $1', [key.id]);
    expect(stored[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(key.key);

    const requestId = newRequestId();
    expect(await ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'domain', credits: 4 })).toEqual({ kind: 'charged', balanceAfter: 11 });
    expect(await reads.balance(ws.id)).toBe(11);
    expect(await ledger.settle(failedLookup(ws.id, key.id, requestId, 4))).toEqual({ balance: 15, refunded: 4 });

    const entries = await reads.ledgerEntries(ws.id, { limit: 100 });
    expect(entries.next).toBeNull();
    expect(entries.data.map((e) => [e.type, e.credits, e.balance_after])).toEqual([
      ['CreditsGranted', 10, 10],
      ['CreditsGranted', 5, 15],
      ['LookupCharged', -4, 11],
      ['LookupRefunded', 4, 15],
    ]);
    const forRequest = await reads.ledgerEntries(ws.id, { requestId, limit: 100 });
    expect(forRequest.data.map((e) => [e.type, e.request_id, e.key_id])).toEqual([
      ['LookupCharged', requestId, key.id],
      ['LookupRefunded', requestId, key.id],
    ]);

    const page1 = await reads.ledgerEntries(ws.id, { limit: 3 });
    expect(page1.data).toHaveLength(3);
    const page2 = await reads.ledgerEntries(ws.id, { limit: 3, after: page1.next! });
    expect(page2.data.map((e) => e.type)).toEqual(['LookupRefunded']);
    expect(page2.next).toBeNull();

    await catchUpToNow(backend.store, usageProjection);
    const usage = await reads.usage(ws.id, {});
    expect(usage).toEqual([
      { day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), key_id: key.id, operation: 'domain', calls: 1, credits_charged: 4, credits_refunded: 4, errors: 1, mode: 'live' },
    ]);
    expect((await keys.list(ws.id))[0]!.last_used_at).not.toBeNull();
  });

  it('refuses a charge the balance does not cover, without writing anything', async () => {
    const ws = await workspaces.create({ name: 'Poor', credits: 3 });
    const key = await keys.create(ws.id, {});
    const before = (await allEvents(backend)).length;
    const result = await ledger.charge({ workspaceId: ws.id, requestId: newRequestId(), keyId: key.id, operation: 'domain', credits: 4 });
    expect(result).toEqual({ kind: 'insufficient_credits', balance: 3 });
    expect((await allEvents(backend)).length).toBe(before);
    expect(await reads.balance(ws.id)).toBe(3);
  });

  it('answers unknown workspaces and keys with their own errors', async () => {
    const missing = 'ws_00000000000000000000000000';
    await expect(ledger.charge({ workspaceId: missing, requestId: newRequestId(), keyId: 'key_x', operation: 'company', credits: 1 })).rejects.toBeInstanceOf(UnknownWorkspaceError);
    await expect(ledger.grantCredits(missing, 5)).rejects.toBeInstanceOf(UnknownWorkspaceError);
    await expect(workspaces.changeLimits(missing, 5)).rejects.toBeInstanceOf(UnknownWorkspaceError);
    await expect(keys.create(missing, {})).rejects.toBeInstanceOf(UnknownWorkspaceError);
    await expect(reads.ledgerEntries(missing, { limit: 10 })).rejects.toBeInstanceOf(UnknownWorkspaceError);
    await expect(keys.revoke('key_00000000000000000000000000')).rejects.toBeInstanceOf(UnknownKeyError);
    expect(await workspaces.get(missing)).toBeUndefined();
    expect(await reads.balance(missing)).toBeNull();
  });

  it('lets exactly as many concurrent charges through as the balance covers, from several instances', async () => {
    const ws = await workspaces.create({ name: 'Race', credits: 10 });
    const key = await keys.create(ws.id, {});
    const instances = [ledger, backend.anotherLedger(), backend.anotherLedger(), backend.anotherLedger()];

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        instances[i % instances.length]!.charge({ workspaceId: ws.id, requestId: newRequestId(), keyId: key.id, operation: 'company', credits: 1 }),
      ),
    );

    expect(results.filter((r) => r.kind === 'charged')).toHaveLength(10);
    expect(results.filter((r) => r.kind === 'insufficient_credits')).toHaveLength(190);
    expect(await reads.balance(ws.id)).toBe(0);
    const after = results.flatMap((r) => (r.kind === 'charged' ? [r.balanceAfter] : [])).sort((x, y) => x - y);
    expect(after).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    const entries = (await reads.ledgerEntries(ws.id, { limit: 1000 })).data;
    expect(entries.map((e) => e.credits)).toEqual([10, ...Array(10).fill(-1)]);
    // In log order each balance_after is the previous one plus the entry's credits, never below zero.
    let balance = 0;
    for (const e of entries) {
      balance += e.credits;
      expect(e.balance_after).toBe(balance);
      expect(e.balance_after).toBeGreaterThanOrEqual(0);
    }
    const { rows } = await backend.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM charges WHERE workspace_id = $1', [ws.id]);
    expect(rows[0]!.n).toBe(10);
  });

  it('charges several workspaces from several instances in shared batches: each balance covers its own, an unknown workspace fails alone', async () => {
    const small = await workspaces.create({ name: 'Small', credits: 3 });
    const large = await workspaces.create({ name: 'Large', credits: 100 });
    const key = await keys.create(small.id, {});
    const instances = [ledger, backend.anotherLedger(), backend.anotherLedger()];
    const charge = (i: number, workspaceId: string) =>
      instances[i % instances.length]!.charge({ workspaceId, requestId: newRequestId(), keyId: key.id, operation: 'company', credits: 2 });

    const results = await Promise.allSettled(
      Array.from({ length: 90 }, (_, i) => charge(i, i % 30 === 7 ? 'ws_01NOSUCHWORKSPACE000000000' : i % 2 ? small.id : large.id)),
    );

    const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(rejected).toHaveLength(3);
    for (const reason of rejected) expect(reason).toBeInstanceOf(UnknownWorkspaceError);
    const kinds = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.kind] : []));
    // Small covers one charge of 2 out of its 3 credits; large covers all 45 asked of it.
    expect(kinds.filter((k) => k === 'charged')).toHaveLength(1 + 45);
    expect(await reads.balance(small.id)).toBe(1);
    expect(await reads.balance(large.id)).toBe(100 - 2 * 45);
    expect((await audit(backend.store)).mismatches).toEqual([]);
  });

  it('keeps charges, grants, limit changes and refunds racing on one workspace consistent (no deadlock)', async () => {
    const ws = await workspaces.create({ name: 'Busy', credits: 1000 });
    const key = await keys.create(ws.id, {});
    const instances = [ledger, backend.anotherLedger(), backend.anotherLedger()];
    const limits = [workspaces, backend.another().workspaces, backend.another().workspaces];
    const refunded: string[] = [];

    const work = Array.from({ length: 120 }, async (_, i) => {
      const l = instances[i % instances.length]!;
      if (i % 4 === 1) return l.grantCredits(ws.id, 2);
      if (i % 4 === 2) return limits[i % limits.length]!.changeLimits(ws.id, 1 + (i % 7));
      const requestId = newRequestId();
      const charged = await l.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'domain', credits: 4 });
      if (charged.kind === 'charged' && i % 4 === 3) {
        refunded.push(requestId);
        return l.settle(failedLookup(ws.id, key.id, requestId, 4));
      }
      return charged;
    });
    const outcomes = await Promise.allSettled(work);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);

    // 30 grants of 2; 60 charges of 4, 30 of them refunded.
    expect(refunded).toHaveLength(30);
    expect(await reads.balance(ws.id)).toBe(1000 + 30 * 2 - 60 * 4 + 30 * 4);
    expect((await audit(backend.store)).mismatches).toEqual([]);
  });

  it('refunds a charge once when settled twice in a row', async () => {
    const ws = await workspaces.create({ name: 'Twice', credits: 10 });
    const key = await keys.create(ws.id, {});
    const requestId = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'domain', credits: 4 });
    expect(await ledger.settle(failedLookup(ws.id, key.id, requestId, 4))).toEqual({ balance: 10, refunded: 4 });
    expect(await ledger.settle(failedLookup(ws.id, key.id, requestId, 4))).toEqual({ balance: 10, refunded: 0 });
    const refunds = (await allEvents(backend)).filter((e) => e.type === 'LookupRefunded' && (e.data as any).request_id === requestId);
    expect(refunds).toHaveLength(1);
  });

  it('refunds a charge once when two instances settle it at the same moment', async () => {
    const ws = await workspaces.create({ name: 'Both', credits: 10 });
    const key = await keys.create(ws.id, {});
    const requestIds = Array.from({ length: 5 }, () => newRequestId());
    for (const requestId of requestIds) await ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'company', credits: 2 });
    const instances = [ledger, backend.anotherLedger(), backend.anotherLedger()];

    const settled = await Promise.all(
      requestIds.flatMap((requestId) => instances.map((l) => l.settle(failedLookup(ws.id, key.id, requestId, 2)))),
    );

    expect(settled.reduce((sum, s) => sum + s.refunded, 0)).toBe(10);
    expect(settled.filter((s) => s.refunded > 0)).toHaveLength(5);
    expect(await reads.balance(ws.id)).toBe(10);
    const refunds = (await allEvents(backend)).filter((e) => e.type === 'LookupRefunded' && requestIds.includes((e.data as any).request_id));
    expect(refunds).toHaveLength(5);
  });

  it('never refunds more than was charged, nor a request that was never charged', async () => {
    const ws = await workspaces.create({ name: 'Greedy', credits: 10 });
    const key = await keys.create(ws.id, {});
    const requestId = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'company', credits: 1 });
    expect(await ledger.settle(failedLookup(ws.id, key.id, requestId, 4))).toEqual({ balance: 10, refunded: 1 });
    expect(await ledger.settle(failedLookup(ws.id, key.id, newRequestId(), 4))).toEqual({ balance: 10, refunded: 0 });
  });

  it('puts request_id and key_id on every charge and refund event and ledger entry', async () => {
    const ws = await workspaces.create({ name: 'Traced', credits: 10 });
    const key = await keys.create(ws.id, {});
    const requestId = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'person_name', credits: 3 });
    await ledger.settle({ ...failedLookup(ws.id, key.id, requestId, 2), operation: 'person_name' });

    const moneyEvents = (await allEvents(backend)).filter((e) => e.type === 'LookupCharged' || e.type === 'LookupRefunded' || e.type === 'LookupCompleted');
    expect(moneyEvents.length).toBeGreaterThan(0);
    for (const e of moneyEvents) {
      const data = e.data as { request_id: string; key_id: string };
      expect(data.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
      expect(data.key_id).toMatch(/^key_/);
      expect(e.metadata.request_id).toBe(data.request_id);
    }
    const { rows } = await backend.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_entries WHERE type IN ('LookupCharged', 'LookupRefunded') AND (request_id IS NULL OR key_id IS NULL)`,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('counts uncharged calls in usage without touching the balance', async () => {
    const ws = await workspaces.create({ name: 'Free', credits: 2 });
    const key = await keys.create(ws.id, {});
    const answered = await ledger.recordUncharged({
      workspaceId: ws.id,
      requestId: newRequestId(),
      keyId: key.id,
      operation: 'company',
      completed: { outcome: 'not_found', cache_status: 'HIT', credits_charged: 0, error_code: 'not_found' },
    });
    await catchUpToNow(backend.store, usageProjection);
    expect(answered).toBe(2);
    expect(await reads.balance(ws.id)).toBe(2);
    expect(await reads.usage(ws.id, { keyId: key.id })).toMatchObject([{ operation: 'company', calls: 1, credits_charged: 0, errors: 0 }]);
    expect(await reads.usage(ws.id, { keyId: 'key_other' })).toEqual([]);
    expect(await reads.usage(ws.id, { from: '2000-01-01', to: '2000-01-02' })).toEqual([]);
  });

  it('voids a charge whose caller was told it cost nothing, whatever state the charge reached, once', async () => {
    const ws = await workspaces.create({ name: 'Outage', credits: 20 });
    const key = await keys.create(ws.id, {});
    const call = (requestId: string) => ({ workspaceId: ws.id, requestId, keyId: key.id, operation: 'person_name' as const, cacheStatus: 'MISS' as const });

    // Charged, then the database went away before the outcome was recorded.
    const unsettled = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId: unsettled, keyId: key.id, operation: 'person_name', credits: 3 });
    // Charged and settled as a success, but the settle's COMMIT was never confirmed to the caller.
    const settled = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId: settled, keyId: key.id, operation: 'person_name', credits: 3 });
    await ledger.settle({ workspaceId: ws.id, requestId: settled, keyId: key.id, operation: 'person_name', completed: { outcome: 'success', cache_status: 'MISS', credits_charged: 3, error_code: null } });
    expect(await reads.balance(ws.id)).toBe(14);

    expect(await ledger.voidCharge(call(unsettled))).toEqual({ refunded: 3, kept: 0 });
    expect(await ledger.voidCharge(call(settled))).toEqual({ refunded: 3, kept: 0 });
    // A charge that never committed, and a second attempt at each: nothing more happens.
    expect(await ledger.voidCharge(call(newRequestId()))).toEqual({ refunded: 0, kept: 0 });
    expect(await ledger.voidCharge(call(unsettled))).toEqual({ refunded: 0, kept: 0 });
    expect(await ledger.voidCharge(call(settled))).toEqual({ refunded: 0, kept: 0 });
    expect(await reads.balance(ws.id)).toBe(20);

    const events = (await allEvents(backend)).filter((e) => [unsettled, settled].includes((e.data as any).request_id));
    const of = (requestId: string) => events.filter((e) => (e.data as any).request_id === requestId).map((e) => [e.type, (e.data as any).error_code ?? (e.data as any).cause ?? null]);
    expect(of(unsettled)).toEqual([['LookupCharged', null], ['LookupRefunded', 'service_unavailable'], ['LookupCompleted', 'service_unavailable']]);
    expect(of(settled)).toEqual([['LookupCharged', null], ['LookupCompleted', null], ['LookupRefunded', 'service_unavailable']]);
    // A not-found settle (3 charged, 2 refunded) that committed unseen: its one refund is spent.
    const notFound = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId: notFound, keyId: key.id, operation: 'person_name', credits: 3 });
    await ledger.settle({ workspaceId: ws.id, requestId: notFound, keyId: key.id, operation: 'person_name', refund: { owed: 2, cause: 'not_found_price' }, completed: { outcome: 'not_found', cache_status: 'MISS', credits_charged: 1, error_code: 'not_found' } });
    expect(await ledger.voidCharge(call(notFound))).toEqual({ refunded: 0, kept: 1 });

    // Nothing is left for the abandoned-charge sweeper.
    const { rows } = await backend.sql.query<{ settled: boolean; refunded_credits: number }>(
      'SELECT settled, refunded_credits FROM charges WHERE request_id = ANY($1::text[])',
      [[unsettled, settled]],
    );
    expect(rows.map((r) => [r.settled, Number(r.refunded_credits)])).toEqual([[true, 3], [true, 3]]);
    expect((await audit(backend.store)).mismatches).toEqual([]);
  });
});
