import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../../services/eventstore/types';
import type { WorkspaceRow } from '../../../services/ledger/locked-workspace';
import { chargeRowsToStore, InsufficientCreditsError, planLedgerWrites, workspacesTouched } from '../../../services/projections/ledger-plan';

let position = 0;
const at = new Date('2025-03-04T05:06:07.000Z');
const event = (type: string, data: Record<string, unknown>, requestId?: string): RecordedEvent => ({
  position: ++position,
  stream: 's',
  version: position,
  type,
  data,
  metadata: requestId ? { request_id: requestId } : {},
  transactionId: '1000',
  recordedAt: at,
});

const A = 'ws_A';
const B = 'ws_B';
const row = (id: string, balance: number): WorkspaceRow => ({ id, name: id, balance, max_concurrency: 8, created_at: new Date('2025-01-01T00:00:00Z'), last_ledger_hash: null });
const money = (ws: string, request: string) => ({ workspace_id: ws, request_id: request, key_id: 'key_1', operation: 'domain' });
const charged = (ws: string, request: string, credits: number) => event('LookupCharged', { ...money(ws, request), credits }, request);
const completed = (ws: string, request: string) =>
  event('LookupCompleted', { ...money(ws, request), outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null }, request);
const refunded = (ws: string, request: string, credits: number) => event('LookupRefunded', { ...money(ws, request), credits, cause: 'timeout' }, request);

describe('planning the ledger writes of a run of events', () => {
  it('given a balance of 10, when three charges of 3 arrive, then one row update carries 1 and each ledger line its own balance after', () => {
    const plan = planLedgerWrites(new Map([[A, row(A, 10)]]), [charged(A, 'req_1', 3), charged(A, 'req_2', 3), charged(A, 'req_3', 3)]);
    expect(plan.workspaces).toEqual([{ ...row(A, 1) }]);
    expect(plan.ledgerEntries.map((e) => [e.request_id, e.credits, e.balance_after])).toEqual([
      ['req_1', -3, 7],
      ['req_2', -3, 4],
      ['req_3', -3, 1],
    ]);
    expect(plan.newCharges.map((c) => [c.request_id, c.credits, c.settled, c.refunded_credits])).toEqual([
      ['req_1', 3, false, null],
      ['req_2', 3, false, null],
      ['req_3', 3, false, null],
    ]);
    expect(plan.refunds).toEqual([]);
    expect(plan.settled).toEqual([]);
  });

  it('given a charge completed in the same run, then the charge row is inserted already settled and nothing is updated later', () => {
    const plan = planLedgerWrites(new Map([[A, row(A, 5)]]), [charged(A, 'req_1', 2), completed(A, 'req_1')]);
    expect(plan.newCharges).toEqual([
      { request_id: 'req_1', workspace_id: A, key_id: 'key_1', operation: 'domain', credits: 2, charged_at: at, refunded_credits: null, settled: true },
    ]);
    expect(plan.settled).toEqual([]);
  });

  it('given a charge refunded in the same run, then the inserted row carries the refund and the balance is back', () => {
    const plan = planLedgerWrites(new Map([[A, row(A, 5)]]), [charged(A, 'req_1', 2), refunded(A, 'req_1', 2), completed(A, 'req_1')]);
    expect(plan.newCharges[0]).toMatchObject({ refunded_credits: 2, settled: true });
    expect(plan.workspaces[0]!.balance).toBe(5);
    expect(plan.ledgerEntries.map((e) => [e.type, e.credits, e.balance_after])).toEqual([
      ['LookupCharged', -2, 3],
      ['LookupRefunded', 2, 5],
    ]);
  });

  it('given earlier charges, when they are refunded and completed, then they are updated by request id', () => {
    const plan = planLedgerWrites(new Map([[A, row(A, 5)]]), [refunded(A, 'req_old', 4), completed(A, 'req_old'), completed(A, 'req_free')]);
    expect(plan.refunds).toEqual([{ request_id: 'req_old', credits: 4 }]);
    expect(plan.settled).toEqual(['req_old', 'req_free']);
    expect(plan.newCharges).toEqual([]);
    expect(plan.workspaces[0]!.balance).toBe(9);
  });

  it('given only completions, then no workspace is touched or written', () => {
    const events = [completed(A, 'req_1')];
    expect(workspacesTouched(events)).toEqual([]);
    expect(planLedgerWrites(new Map(), events).workspaces).toEqual([]);
  });

  it('given a charge above the balance, then the whole run is refused', () => {
    expect(() => planLedgerWrites(new Map([[A, row(A, 3)]]), [charged(A, 'req_1', 2), charged(A, 'req_2', 2)])).toThrow(InsufficientCreditsError);
    expect(() => planLedgerWrites(new Map(), [charged(A, 'req_1', 0)])).toThrow(InsufficientCreditsError);
  });

  it('given a new workspace, when it is created, granted and limited in one run, then one row holds the end state', () => {
    const plan = planLedgerWrites(new Map(), [
      event('WorkspaceCreated', { workspace_id: B, name: 'bee', max_concurrency: 8 }),
      event('CreditsGranted', { workspace_id: B, amount: 10, reason: null }),
      event('LimitsChanged', { workspace_id: B, max_concurrency: 2 }),
    ]);
    expect(plan.workspaces).toEqual([{ id: B, name: 'bee', balance: 10, max_concurrency: 2, created_at: at, last_ledger_hash: null }]);
    expect(plan.ledgerEntries).toMatchObject([{ type: 'CreditsGranted', credits: 10, balance_after: 10, key_id: null, request_id: null }]);
  });

  it('given chained ledger events, when planned, then the row keeps the hash of the last ledger event (a limit change is no link)', () => {
    const linked = (e: RecordedEvent, hash: string): RecordedEvent => ({ ...e, metadata: { ...e.metadata, hash } });
    const plan = planLedgerWrites(new Map([[A, row(A, 5)]]), [
      linked(event('CreditsGranted', { workspace_id: A, amount: 1, reason: null }), 'h1'),
      linked(charged(A, 'req_h', 2), 'h2'),
      completed(A, 'req_h'),
      event('LimitsChanged', { workspace_id: A, max_concurrency: 3 }),
    ]);
    expect(plan.workspaces.map((w) => w.last_ledger_hash)).toEqual(['h2']);
  });

  it('given events of two workspaces interleaved, then each balance follows only its own events', () => {
    const current = new Map([[A, row(A, 10)], [B, row(B, 1)]]);
    const events = [charged(B, 'req_b', 1), charged(A, 'req_a', 4), refunded(B, 'req_b', 1)];
    expect(workspacesTouched(events)).toEqual([A, B]);
    const plan = planLedgerWrites(current, events);
    expect(plan.workspaces.map((w) => [w.id, w.balance])).toEqual([[A, 6], [B, 1]]);
    expect(plan.ledgerEntries.map((e) => [e.workspace_id, e.balance_after])).toEqual([[B, 0], [A, 6], [B, 1]]);
  });

  it('given a workspace that exists, when it is created again, or money moves on an unknown one, then the run is refused', () => {
    expect(() => planLedgerWrites(new Map([[A, row(A, 0)]]), [event('WorkspaceCreated', { workspace_id: A, name: 'a', max_concurrency: 1 })])).toThrow(/created twice/);
    expect(() => planLedgerWrites(new Map(), [event('CreditsGranted', { workspace_id: A, amount: 1, reason: null })])).toThrow(/unknown workspace/);
  });

  it('does not change the rows it was given', () => {
    const given = row(A, 10);
    planLedgerWrites(new Map([[A, given]]), [charged(A, 'req_1', 3)]);
    expect(given.balance).toBe(10);
  });
});

describe('which charges get a row', () => {
  const inTransaction = (e: RecordedEvent, transactionId: string): RecordedEvent => ({ ...e, transactionId });

  it('given a charge completed in its own transaction (a cache hit), then it has no row; one completed in a later transaction keeps its row', () => {
    const plan = planLedgerWrites(new Map([[A, row(A, 10)]]), [
      inTransaction(charged(A, 'req_hit', 2), '7'),
      inTransaction(completed(A, 'req_hit'), '7'),
      inTransaction(charged(A, 'req_live', 3), '7'),
      inTransaction(completed(A, 'req_live'), '8'),
    ]);
    expect([...plan.settledInOwnTransaction]).toEqual(['req_hit']);
    expect(chargeRowsToStore(plan).map((c) => [c.request_id, c.settled])).toEqual([['req_live', true]]);
  });

  it('given a charge not completed yet, or a completion of an earlier charge, then no charge is left without a row', () => {
    const plan = planLedgerWrites(new Map([[A, row(A, 10)]]), [inTransaction(charged(A, 'req_open', 2), '7'), inTransaction(completed(A, 'req_old'), '7')]);
    expect(plan.settledInOwnTransaction.size).toBe(0);
    expect(chargeRowsToStore(plan).map((c) => [c.request_id, c.settled])).toEqual([['req_open', false]]);
    expect(plan.settled).toEqual(['req_old']);
  });
});
