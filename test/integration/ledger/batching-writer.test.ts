import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_MAX_ITEMS } from '../../../contracts/http';
import { newRequestId } from '../../../services/common/ids';
import { EventStore } from '../../../services/eventstore/event-store';
import { BatchingWriter } from '../../../services/ledger/batching-writer';
import { charge } from '../../../services/ledger/commands/charge';
import { createWorkspace } from '../../../services/workspaces/create-workspace';
import { grantCredits } from '../../../services/ledger/commands/grant-credits';
import { settle, type SettleCommand } from '../../../services/ledger/commands/settle';
import { voidCharge } from '../../../services/ledger/commands/void-charge';
import { UnknownWorkspaceError } from '../../../services/ledger/errors';
import { audit } from '../../../services/audit/audit';
import { balance } from '../../../services/read-models/queries';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { LOCK_WORKSPACES_AS_COMMITTED, SELECT_WORKSPACES_FOR_UPDATE } from '../../../services/ledger/locked-workspace';
import { ledgerBackends, type OpenBackend } from './backends';
import { recordingSql, type RecordedStatement } from '../../support/recording-sql';

const KEY = 'key_writer';

/**
 * The statement by which a batch locks its workspace rows (the writer; the ledger projection then
 * reads none again): read, or, from the rows the writer last committed, checked (ADR 0034).
 */
const isWriterLock = (s: RecordedStatement) => s.text === SELECT_WORKSPACES_FOR_UPDATE || isOptimisticLock(s);
const isOptimisticLock = (s: RecordedStatement) => Object.values(LOCK_WORKSPACES_AS_COMMITTED).includes(s.text);
/** Any statement that locks workspace rows (the writer's, the ledger projection's, or a per-row one). */
const locksWorkspaces = (s: RecordedStatement) => /FROM workspaces\b[\s\S]*FOR UPDATE/.test(s.text);

describe.each(ledgerBackends())('batching writer on $name', (backendDef) => {
  let backend: OpenBackend;
  let store: EventStore;
  let transactions: RecordedStatement[][];
  let writer: BatchingWriter;

  beforeAll(async () => {
    backend = await backendDef.open();
    const recording = recordingSql(backend.sql);
    transactions = recording.transactions;
    store = new EventStore(recording.sql, INLINE_PROJECTIONS);
    writer = new BatchingWriter(store);
  });
  afterAll(async () => backend?.cleanup());

  const chargeOf = (workspaceId: string, credits: number, requestId = newRequestId()) =>
    charge(writer, { workspaceId, requestId, keyId: KEY, operation: 'domain', credits });
  const failed = (workspaceId: string, requestId: string, owed: number): SettleCommand => ({
    workspaceId,
    requestId,
    keyId: KEY,
    operation: 'domain',
    refund: { owed, cause: 'upstream_error' },
    completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'upstream_error' },
  });
  /** Transactions the writer ran from here on (each holds its lock statement). */
  const writerTransactionsSince = (mark: number) => transactions.slice(mark).filter((tx) => tx.some(isWriterLock));

  it('given a full batch call of charges (100) submitted together, when they commit, then they share one transaction and each balance covers its own', async () => {
    const a = await createWorkspace(store, { name: 'A', credits: 1_000 });
    const b = await createWorkspace(store, { name: 'B', credits: 1_000 });
    const mark = transactions.length;

    // The writer waits one turn of the event loop before it begins: all 40 are in by then.
    const results = await Promise.all(Array.from({ length: BATCH_MAX_ITEMS }, (_, i) => chargeOf(i % 2 === 0 ? a : b, 3)));

    expect(results.every((r) => r.kind === 'charged')).toBe(true);
    expect(writerTransactionsSince(mark)).toHaveLength(1);
    expect(await balance(store.sql, a)).toBe(1_000 - 50 * 3);
    expect(await balance(store.sql, b)).toBe(1_000 - 50 * 3);
    // Each answer is the balance its own charge left, in arrival order.
    const afterA = results.filter((_, i) => i % 2 === 0).map((r) => (r.kind === 'charged' ? r.balanceAfter : null));
    expect(afterA).toEqual(Array.from({ length: 50 }, (_, i) => 1_000 - 3 * (i + 1)));
  });

  it('given cache hits and a live charge in one batch, when it commits, then it costs two round trips (the lock; the append with the ledger writes and COMMIT), and the ledger lines and the charge row carry the positions and instants of their events', async () => {
    const ws = await createWorkspace(store, { name: 'Two round trips', credits: 100 });
    const mark = transactions.length;
    const hit = () =>
      charge(writer, { workspaceId: ws, requestId: newRequestId(), keyId: KEY, operation: 'domain', credits: 1, completed: { outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null } });
    await Promise.all([hit(), chargeOf(ws, 2), hit()]);

    const batches = writerTransactionsSince(mark);
    expect(batches.map((batch) => batch.map((s) => (isWriterLock(s) ? 'lock' : s.withCommit && /INSERT INTO events[\s\S]*INSERT INTO ledger_entries/.test(s.text) ? 'append + ledger + COMMIT' : s.text)))).toEqual([
      ['lock', 'append + ledger + COMMIT'],
    ]);
    const { rows: lines } = await store.sql.query<{ same: boolean }>(
      `SELECT e.position IS NOT NULL AND le.recorded_at = e.recorded_at AND le.request_id = e.metadata->>'request_id' AS same
         FROM ledger_entries le LEFT JOIN events e ON e.position = le.position WHERE le.workspace_id = $1 AND le.type = 'LookupCharged'`,
      [ws],
    );
    expect(lines.map((l) => l.same)).toEqual([true, true, true]);
    // Only the live charge (not settled in its own transaction) has a row.
    const { rows: charges } = await store.sql.query<{ same: boolean }>(
      `SELECT c.charged_at = e.recorded_at AS same FROM charges c JOIN events e ON e.metadata->>'request_id' = c.request_id AND e.type = 'LookupCharged' WHERE c.workspace_id = $1`,
      [ws],
    );
    expect(charges.map((c) => c.same)).toEqual([true]);
    expect(await balance(store.sql, ws)).toBe(100 - 4);
    expect((await audit(store)).mismatches).toEqual([]);
  });

  it('given a workspace whose rows this writer committed last, when the next batch of hits runs, then it is one round trip: BEGIN, the lock checking the rows as committed, the append with the ledger writes, COMMIT', async () => {
    const ws = await createWorkspace(store, { name: 'One round trip', credits: 100 });
    await chargeOf(ws, 1);
    const mark = transactions.length;
    const hit = () =>
      charge(writer, { workspaceId: ws, requestId: newRequestId(), keyId: KEY, operation: 'domain', credits: 1, completed: { outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null } });
    const results = await Promise.all([hit(), hit()]);

    expect(results).toEqual([
      { kind: 'charged', balanceAfter: 98 },
      { kind: 'charged', balanceAfter: 97 },
    ]);
    expect(writerTransactionsSince(mark).map((batch) => batch.map((s) => (isOptimisticLock(s) ? 'lock as committed' : s.withCommit ? 'append + COMMIT' : s.text)))).toEqual([
      ['lock as committed', 'append + COMMIT'],
    ]);
    expect(await balance(store.sql, ws)).toBe(97);
    expect((await audit(store)).mismatches).toEqual([]);
  });

  it('given rows moved by another instance since this writer last committed them, when a batch runs, then its one-round-trip transaction rolls back and the batch is decided again from the locked rows: never below zero', async () => {
    const ws = await createWorkspace(store, { name: 'Moved', credits: 10 });
    const otherInstance = new BatchingWriter(store);
    await chargeOf(ws, 1); // this writer now holds the row at balance 9
    expect(await charge(otherInstance, { workspaceId: ws, requestId: newRequestId(), keyId: KEY, operation: 'domain', credits: 8 })).toEqual({ kind: 'charged', balanceAfter: 1 });
    const mark = transactions.length;

    expect(await chargeOf(ws, 3)).toEqual({ kind: 'insufficient_credits', balance: 1 });
    expect(await chargeOf(ws, 1)).toEqual({ kind: 'charged', balanceAfter: 0 });

    // Decided from balance 9 and refused by the lock; decided again from 1; the next from the rows
    // it locks and reads too, the workspace being contended for a while.
    expect(writerTransactionsSince(mark).map((batch) => batch.some(isOptimisticLock))).toEqual([true, false, false]);
    expect(await balance(store.sql, ws)).toBe(0);
    expect((await audit(store)).mismatches).toEqual([]);
  });

  it('given a batch on two workspaces this writer committed last, one of them moved since by another instance, when it runs, then the lock of both refuses it and the batch is decided again from the locked rows', async () => {
    const a = await createWorkspace(store, { name: 'Several A', credits: 10 });
    const b = await createWorkspace(store, { name: 'Several B', credits: 10 });
    const otherInstance = new BatchingWriter(store);
    await Promise.all([chargeOf(a, 1), chargeOf(b, 1)]);
    let mark = transactions.length;
    expect(await Promise.all([chargeOf(a, 1), chargeOf(b, 1)])).toEqual([
      { kind: 'charged', balanceAfter: 8 },
      { kind: 'charged', balanceAfter: 8 },
    ]);
    // The lock of both rows ahead of the first stream's append; the last stream's carries COMMIT.
    const [both] = writerTransactionsSince(mark);
    expect([isOptimisticLock(both![0]!), Boolean(both!.at(-1)!.withCommit)]).toEqual([true, true]);
    await charge(otherInstance, { workspaceId: b, requestId: newRequestId(), keyId: KEY, operation: 'domain', credits: 7 });
    mark = transactions.length;
    expect(await Promise.all([chargeOf(a, 1), chargeOf(b, 2)])).toEqual([
      { kind: 'charged', balanceAfter: 7 },
      { kind: 'insufficient_credits', balance: 1 },
    ]);
    expect(writerTransactionsSince(mark).map((batch) => batch.some(isOptimisticLock))).toEqual([true, false]);
    expect((await audit(store)).mismatches).toEqual([]);
  });

  it('given a workspace contended a moment ago, when that moment has passed, then its batches decide from the rows last committed again', async () => {
    const ws = await createWorkspace(store, { name: 'Contended a moment', credits: 10 });
    const briefly = new BatchingWriter(store, undefined, 0);
    await charge(briefly, { workspaceId: ws, requestId: newRequestId(), keyId: KEY, operation: 'domain', credits: 1 });
    await chargeOf(ws, 1); // moves the row under `briefly`
    const mark = transactions.length;
    for (let i = 0; i < 2; i++) await charge(briefly, { workspaceId: ws, requestId: newRequestId(), keyId: KEY, operation: 'domain', credits: 1 });
    expect(writerTransactionsSince(mark).map((batch) => batch.some(isOptimisticLock))).toEqual([true, false, true]);
    expect(await balance(store.sql, ws)).toBe(6);
  });

  it('given 30 charges each submitted from its own event-loop callback (as requests read from 30 sockets are), when they commit, then they share one transaction', async () => {
    const ws = await createWorkspace(store, { name: 'Sockets', credits: 1_000 });
    const mark = transactions.length;

    // On PGlite a transaction runs to its end in microtasks, between two such callbacks: a writer
    // that began at once would commit each charge alone, one job per batch.
    const results = await Promise.all(
      Array.from({ length: 30 }, () => new Promise<Awaited<ReturnType<typeof chargeOf>>>((resolve, reject) => setImmediate(() => chargeOf(ws, 1).then(resolve, reject)))),
    );

    expect(results.every((r) => r.kind === 'charged')).toBe(true);
    expect(writerTransactionsSince(mark)).toHaveLength(1);
    expect(await balance(store.sql, ws)).toBe(1_000 - 30);
  });

  it('given a balance of 10 and five charges of 3 in one batch, when decided, then three pass in arrival order and two are refused', async () => {
    const ws = await createWorkspace(store, { name: 'Tight', credits: 10 });
    const results = await Promise.all(Array.from({ length: 5 }, () => chargeOf(ws, 3)));
    expect(results).toEqual([
      { kind: 'charged', balanceAfter: 7 },
      { kind: 'charged', balanceAfter: 4 },
      { kind: 'charged', balanceAfter: 1 },
      { kind: 'insufficient_credits', balance: 1 },
      { kind: 'insufficient_credits', balance: 1 },
    ]);
    expect(await balance(store.sql, ws)).toBe(1);
  });

  it('given a batch with a job on no workspace, when decided, then that job alone fails', async () => {
    const ws = await createWorkspace(store, { name: 'Neighbour', credits: 10 });
    const results = await Promise.allSettled([chargeOf(ws, 1), chargeOf('ws_missing', 1), chargeOf(ws, 1), chargeOf('ws_missing', 1), chargeOf(ws, 1)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(UnknownWorkspaceError);
    expect(await balance(store.sql, ws)).toBe(7);
  });

  it('given a batch whose appends fail for one job (a request charged twice), when it rolls back, then the others are re-run and commit', async () => {
    const ws = await createWorkspace(store, { name: 'Retry', credits: 10 });
    const requestId = newRequestId();
    await chargeOf(ws, 1, requestId);
    const mark = transactions.length;

    const results = await Promise.allSettled([chargeOf(ws, 1), chargeOf(ws, 1, requestId), chargeOf(ws, 1), chargeOf(ws, 1)]);

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // The first job alone, the batch of three that rolled back, then the three one by one.
    expect(writerTransactionsSince(mark)).toHaveLength(5);
    expect(await balance(store.sql, ws)).toBe(10 - 1 - 3);
    expect((await audit(store)).mismatches).toEqual([]);
  });

  it('given settles with refunds, voids, grants and charges on two workspaces in one batch, when it runs, then each workspace row is locked once, and the batch costs as many statements as a batch of two', async () => {
    const a = await createWorkspace(store, { name: 'Lock A', credits: 100 });
    const b = await createWorkspace(store, { name: 'Lock B', credits: 100 });
    const statementsOfBatch = async (jobsPerWorkspace: number) => {
      const requests = { [a]: [] as string[], [b]: [] as string[] };
      for (const ws of [a, b]) for (let i = 0; i < 2 * jobsPerWorkspace; i++) requests[ws]!.push(newRequestId());
      // Charged one by one beforehand: the batch below settles half and voids the other half.
      for (const ws of [a, b]) for (const requestId of requests[ws]!) await chargeOf(ws, 2, requestId);
      const before = { a: await balance(store.sql, a), b: await balance(store.sql, b) };
      const mark = transactions.length;
      // Submitted together: one batch (the writer waits a turn of the event loop before it begins).
      const jobs = [a, b].flatMap((ws) => [
        ...requests[ws]!.slice(0, jobsPerWorkspace).map((requestId) => settle(writer, failed(ws, requestId, 2))),
        ...requests[ws]!.slice(jobsPerWorkspace).map((requestId) => voidCharge(writer, { workspaceId: ws, requestId, keyId: KEY, operation: 'domain', cacheStatus: 'MISS' })),
        grantCredits(writer, { workspaceId: ws, amount: 5 }),
        chargeOf(ws, 1),
      ]);
      await Promise.all(jobs);
      const batches = writerTransactionsSince(mark);
      expect(batches).toHaveLength(1);
      const batch = batches[0]!;
      expect(await balance(store.sql, a)).toBe(before.a! + 2 * 2 * jobsPerWorkspace + 5 - 1);
      expect(await balance(store.sql, b)).toBe(before.b! + 2 * 2 * jobsPerWorkspace + 5 - 1);
      // The writer's one lock statement names both rows once; nothing else locks a single row.
      const writerLocks = batch.filter(isWriterLock);
      expect(writerLocks).toHaveLength(1);
      expect(writerLocks[0]!.params![0]).toEqual([a, b].sort());
      expect(batch.filter((s) => locksWorkspaces(s) && /WHERE id = \$1/.test(s.text))).toEqual([]);
      return batch.length;
    };

    const small = await statementsOfBatch(1);
    const large = await statementsOfBatch(10);
    expect(large).toBe(small);
    expect((await audit(store)).mismatches).toEqual([]);
  });
});
