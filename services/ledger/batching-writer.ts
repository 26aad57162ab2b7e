import { streams } from '../../contracts/events';
import { BATCH_MAX_ITEMS } from '../../contracts/http';
import { GroupBatcher } from '../common/group-batcher';
import type { EventStore, LockedRows, StoreTransaction } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';
import { DatabaseUnavailableError } from '../eventstore/unavailable';
import { chargesFoldedFromEvents, startWriterBatch, writerOptimisticBatches } from '../metrics/metrics';
import { lockAsCommitted, lockedWorkspaceKey, SELECT_WORKSPACES_FOR_UPDATE, workspaceRowOf, type WorkspaceRow } from './locked-workspace';
import { CHARGE_EVENT_TYPES, chargeRequestOf, evolveCharge, type ChargeState } from './charge-state';
import { chainLedgerEvents } from './ledger-chain';
import { evolveWorkspace, type WorkspaceState } from './workspace-state';

/** What a job decides from: the rows it named, locked, as the earlier jobs of the batch left them. */
export interface LockedState {
  /** Undefined: no such workspace. */
  workspace: WorkspaceState | undefined;
  /** The charge of the job's `chargeOf` request; undefined when none was asked for or none exists. */
  charge: ChargeState | undefined;
}

/** What a job appends and answers. */
export interface Decision<T> {
  /** Appended to the workspace's own stream; the writer evolves the state it hands on with them. */
  events: NewEvent[];
  /** Appended to other streams in the same transaction (what a live fetch learned about an entity). */
  entityEvents?: { stream: string; event: NewEvent }[];
  result: T;
}

export interface WorkspaceJob<T> {
  workspaceId: string;
  /** A request whose charge row the decision needs: read (and locked) with the batch's others. */
  chargeOf?: string;
  /** Pure; may throw to fail this job alone. */
  decide(locked: LockedState): Decision<T>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: every job that arrives while a transaction is in flight joins the next one, so
 * under load many charges share one commit (one WAL flush) instead of one each.
 *
 * A batch locks every workspace row its jobs name once, in id order and in one statement (the order
 * every writer takes them in, so batches on several instances never deadlock), then the charge rows
 * its jobs name, in one more. Each job is then a pure decision on that state, in arrival order;
 * the writer evolves the state with each job's events before the next decides, and every stream's
 * events go in ONE append: a batch costs a fixed handful of statements, not a handful per job.
 *
 * A decision that throws fails alone. A batch whose appends fail rolls back and re-runs one job
 * per transaction, so only the faulty job fails; a batch that fails because the database is
 * unavailable fails every job of it, and the writer goes on with the next.
 */
export class BatchingWriter {
  private readonly batches: GroupBatcher<WorkspaceJob<unknown>, Outcome>;
  /**
   * The workspace rows as this writer's own last commit left them: a batch that names only these
   * (and no charge row) decides from them and commits in one round trip, its lock checking that
   * they are still so (ADR 0034). Dropped while a batch naming them runs, and kept only if it commits.
   */
  private readonly committedRows = new Map<string, WorkspaceRow>();
  /**
   * Workspaces another writer moved under this one lately, until when: each of their batches goes
   * the two-round-trip way meanwhile, rather than fail its first attempt while instances take turns.
   */
  private readonly contendedUntil = new Map<string, number>();

  constructor(
    private readonly store: EventStore,
    // Room for a whole batch call's items beside the single calls queued with them: a batch of
    // cache hits commits once, not in two group commits (docs/performance.md, issue 24).
    maxBatch = 2 * BATCH_MAX_ITEMS,
    private readonly contendedMs = CONTENDED_MS,
  ) {
    this.batches = new GroupBatcher((jobs) => this.commit(jobs), maxBatch);
  }

  async submit<T>(job: WorkspaceJob<T>): Promise<T> {
    const outcome = await this.batches.submit(job);
    if (!outcome.ok) throw outcome.error;
    return outcome.value as T;
  }

  private async commit(batch: WorkspaceJob<unknown>[]): Promise<Outcome[]> {
    const timedCommit = startWriterBatch(batch.length, this.batches.queued);
    try {
      return await timedCommit(this.run(batch));
    } catch (batchError) {
      // The database is out of reach: every job fails alike, and re-running them one by one
      // could apply twice a batch whose COMMIT went through before the connection broke.
      if (batch.length === 1 || batchError instanceof DatabaseUnavailableError) throw batchError;
      const outcomes: Outcome[] = [];
      for (const job of batch) {
        outcomes.push(
          await this.run([job]).then(
            ([outcome]) => outcome!,
            (error: unknown): Outcome => ({ ok: false, error }),
          ),
        );
      }
      return outcomes;
    }
  }

  /** One transaction for `batch`: from the rows last committed when it can, else (or when they moved) from the rows locked and read. */
  private async run(batch: WorkspaceJob<unknown>[]): Promise<Outcome[]> {
    const ids = workspaceIdsOf(batch);
    const now = Date.now();
    const known = batch.some((job) => job.chargeOf) || ids.some((id) => (this.contendedUntil.get(id) ?? 0) > now) ? undefined : ids.map((id) => this.committedRows.get(id));
    if (known?.every((row) => row !== undefined)) {
      try {
        const outcomes = await this.transaction(ids, (tx) => runBatch(tx, batch, known as WorkspaceRow[]));
        writerOptimisticBatches.inc({ result: 'committed' });
        return outcomes;
      } catch (err) {
        if (!isWorkspacesMoved(err)) throw err;
        writerOptimisticBatches.inc({ result: 'moved' });
        for (const id of ids) this.contendedUntil.set(id, Date.now() + this.contendedMs);
      }
    }
    return this.transaction(ids, (tx) => runBatch(tx, batch));
  }

  /** Runs `work` in a transaction; the rows of `ids` it leaves are the committed rows once it commits. */
  private async transaction(ids: string[], work: (tx: StoreTransaction) => Promise<Outcome[]>): Promise<Outcome[]> {
    for (const id of ids) this.committedRows.delete(id);
    let locked: LockedRows | undefined;
    const outcomes = await this.store.transaction((tx) => {
      locked = tx.locked;
      return work(tx);
    });
    for (const id of ids) {
      const row = locked?.get(lockedWorkspaceKey(id)) as WorkspaceRow | undefined;
      if (row) this.committedRows.set(id, row);
    }
    return outcomes;
  }
}

/** How long a workspace moved by another writer is read and locked first (ADR 0034). */
const CONTENDED_MS = 1_000;

const workspaceIdsOf = (batch: WorkspaceJob<unknown>[]) => [...new Set(batch.map((job) => job.workspaceId))].sort();

/** LW001: LOCK_WORKSPACES_AS_COMMITTED found a row not as this writer last committed it (migration 019). */
const isWorkspacesMoved = (err: unknown) => (err as { code?: unknown } | null)?.code === 'LW001';

/**
 * `known`: the rows of the batch's workspaces (in id order) as this writer last committed them.
 * The batch then decides from them, and its lock, sent with its first append, checks they still are.
 */
async function runBatch(tx: StoreTransaction, batch: WorkspaceJob<unknown>[], known?: WorkspaceRow[]): Promise<Outcome[]> {
  const { workspaces, ledgerHashes } = known ? assumeCommitted(tx, known) : await lockWorkspaces(tx, workspaceIdsOf(batch));
  // Workspace rows before charge rows: the order every other writer takes them in.
  const charges = await lockCharges(tx, [...new Set(batch.flatMap((job) => (job.chargeOf ? [job.chargeOf] : [])))].sort());

  const outcomes: Outcome[] = [];
  const appends = new Map<string, NewEvent[]>();
  const appendTo = (stream: string, events: NewEvent[]) => {
    if (events.length === 0) return;
    const pending = appends.get(stream);
    if (pending) pending.push(...events);
    else appends.set(stream, [...events]);
  };
  for (const job of batch) {
    try {
      const decision = job.decide({ workspace: workspaces.get(job.workspaceId), charge: job.chargeOf ? charges.get(job.chargeOf) : undefined });
      for (const { stream, event } of decision.entityEvents ?? []) appendTo(stream, [event]);
      // Tamper evidence: each ledger event links to the workspace's previous one (ledger-chain.ts).
      const stream = streams.workspace(job.workspaceId);
      const chained = chainLedgerEvents(ledgerHashes.get(job.workspaceId) ?? null, stream, decision.events);
      ledgerHashes.set(job.workspaceId, chained.lastHash);
      appendTo(stream, chained.events);
      for (const event of decision.events) {
        const after = evolveWorkspace(workspaces.get(job.workspaceId), event);
        if (after) workspaces.set(job.workspaceId, after);
        const requestId = chargeRequestOf(event);
        const charge = requestId === undefined ? undefined : evolveCharge(charges.get(requestId), event);
        if (requestId !== undefined && charge) charges.set(requestId, charge);
      }
      outcomes.push({ ok: true, value: decision.result });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  const ordered = [...appends.keys()].sort();
  // The last append carries COMMIT when its projections can go in its statement (AppendOptions).
  for (const [i, stream] of ordered.entries()) await tx.append(stream, appends.get(stream)!, 'any', { last: i === ordered.length - 1 });
  return outcomes;
}

/**
 * The workspaces' states, and the hash of each one's last ledger event (the next one links to it).
 * The rows stay recorded as locked: the ledger projection then does not read them again.
 */
async function lockWorkspaces(tx: StoreTransaction, ids: string[]) {
  return lockedStates(tx, (await tx.sql.query<WorkspaceRow>(SELECT_WORKSPACES_FOR_UPDATE, [ids])).rows.map(workspaceRowOf));
}

/**
 * The same from the rows this writer last committed, without a round trip: their lock goes with
 * the first append and fails the transaction (LW001) if one of them has moved since.
 */
function assumeCommitted(tx: StoreTransaction, rows: WorkspaceRow[]) {
  const lock = lockAsCommitted(rows);
  tx.sql.deferWrite(lock.text, lock.params);
  return lockedStates(tx, rows);
}

function lockedStates(tx: StoreTransaction, rows: WorkspaceRow[]) {
  for (const r of rows) tx.locked.set(lockedWorkspaceKey(r.id), r);
  return {
    workspaces: new Map<string, WorkspaceState>(rows.map((r) => [r.id, { balance: r.balance, maxConcurrency: r.max_concurrency }])),
    ledgerHashes: new Map<string, string | null>(rows.map((r) => [r.id, r.last_ledger_hash])),
  };
}

/**
 * The charges of `requestIds`, their rows locked. A charge settled in its own transaction (a cache
 * hit) has no row (services/projections/ledger-plan.ts, chargeRowsToStore): its state is folded
 * from its events, by the request-id index of the log. No lock is needed for it: its refund or void
 * appends to its workspace's stream, whose row this transaction holds locked already.
 */
async function lockCharges(tx: StoreTransaction, requestIds: string[]): Promise<Map<string, ChargeState>> {
  if (requestIds.length === 0) return new Map();
  const { rows } = await tx.sql.query<{ request_id: string; credits: number; refunded_credits: number | null; settled: boolean }>(
    'SELECT request_id, credits, refunded_credits, settled FROM charges WHERE request_id = ANY($1::text[]) ORDER BY request_id FOR UPDATE',
    [requestIds],
  );
  const charges = new Map(
    rows.map((r) => [r.request_id, { credits: Number(r.credits), refundedCredits: r.refunded_credits === null ? null : Number(r.refunded_credits), settled: r.settled }]),
  );
  const withoutRow = requestIds.filter((id) => !charges.has(id));
  if (withoutRow.length === 0) return charges;
  const { rows: events } = await tx.sql.query<{ type: string; data: unknown }>(
    `SELECT type, data FROM events WHERE metadata->>'request_id' = ANY($1::text[]) AND type = ANY($2::text[]) ORDER BY position`,
    [withoutRow, CHARGE_EVENT_TYPES],
  );
  for (const event of events) {
    const requestId = chargeRequestOf(event)!;
    const charge = evolveCharge(charges.get(requestId), event);
    if (charge) charges.set(requestId, charge);
  }
  chargesFoldedFromEvents.inc(withoutRow.filter((id) => charges.has(id)).length);
  return charges;
}
