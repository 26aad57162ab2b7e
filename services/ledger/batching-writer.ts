import type { EventStore, StoreTransaction } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';

/** What a decided job appends to its workspace's stream, the balance it leaves, and its answer. */
export interface WorkspaceDecision<T> {
  events: NewEvent[];
  balanceAfter: number;
  result: T;
}

type Settle = { resolve: (v: any) => void; reject: (e: unknown) => void };
type RunJob = Settle & { kind: 'run'; workspaceId?: string; run: (tx: StoreTransaction) => Promise<unknown> };
type DecideJob = Settle & { kind: 'decide'; workspaceId: string; stream: string; decide: (balance: number | undefined) => WorkspaceDecision<unknown> };
type Job = RunJob | DecideJob;
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: every job that arrives while a transaction is in flight joins the next one, so
 * under load many charges share one commit (one WAL flush) instead of one each.
 *
 * A batch first locks every workspace row its jobs name, in id order and in one statement (the
 * order every writer takes them in, so batches on several instances never deadlock). Decided jobs
 * (charges, uncharged completions) then run as pure functions of the locked balance, one after
 * another in arrival order, and their events go to each workspace's stream in ONE append: the cost
 * of a batch is a fixed handful of statements, not a handful per job. Closure jobs run after.
 *
 * A decided job that throws fails alone; a closure job that throws rolls its batch back, and the
 * batch then re-runs one job per transaction so only the faulty job fails.
 */
export class BatchingWriter {
  private queue: Job[] = [];
  private flushing = false;

  constructor(
    private readonly store: EventStore,
    private readonly maxBatch = 64,
  ) {}

  /** Runs `run` in the next batch; `workspaceId`, when given, is locked up front with the others. */
  submit<T>(run: (tx: StoreTransaction) => Promise<T>, workspaceId?: string): Promise<T> {
    return this.enqueue<T>((settle) => ({ ...settle, kind: 'run', workspaceId, run }));
  }

  /**
   * Decides from the workspace's locked balance (undefined: no such workspace) what to append to
   * `stream`; `decide` must be pure and may throw to fail only this job.
   */
  submitDecision<T>(workspaceId: string, stream: string, decide: (balance: number | undefined) => WorkspaceDecision<T>): Promise<T> {
    return this.enqueue<T>((settle) => ({ ...settle, kind: 'decide', workspaceId, stream, decide }));
  }

  private enqueue<T>(make: (settle: Settle) => Job): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(make({ resolve, reject }));
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const outcomes = await this.store.transaction((tx) => runBatch(tx, batch));
          batch.forEach((job, i) => settle(job, outcomes[i]!));
        } catch (batchError) {
          if (batch.length === 1) {
            batch[0]!.reject(batchError);
            continue;
          }
          for (const job of batch) {
            await this.store.transaction((tx) => runBatch(tx, [job])).then(
              (outcomes) => settle(job, outcomes[0]!),
              job.reject,
            );
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

function settle(job: Job, outcome: Outcome) {
  if (outcome.ok) job.resolve(outcome.value);
  else job.reject(outcome.error);
}

async function runBatch(tx: StoreTransaction, batch: Job[]): Promise<Outcome[]> {
  const ids = [...new Set(batch.flatMap((job) => (job.workspaceId ? [job.workspaceId] : [])))].sort();
  const balances = new Map<string, number>();
  if (ids.length > 0) {
    const { rows } = await tx.sql.query<{ id: string; balance: number }>(
      'SELECT id, balance FROM workspaces WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
      [ids],
    );
    for (const r of rows) balances.set(r.id, Number(r.balance));
  }

  const outcomes: Outcome[] = new Array(batch.length);
  const appends = new Map<string, NewEvent[]>();
  batch.forEach((job, i) => {
    if (job.kind !== 'decide') return;
    try {
      const decision = job.decide(balances.get(job.workspaceId));
      if (decision.events.length > 0) {
        const events = appends.get(job.stream) ?? [];
        events.push(...decision.events);
        appends.set(job.stream, events);
      }
      if (balances.has(job.workspaceId)) balances.set(job.workspaceId, decision.balanceAfter);
      outcomes[i] = { ok: true, value: decision.result };
    } catch (error) {
      outcomes[i] = { ok: false, error };
    }
  });
  for (const stream of [...appends.keys()].sort()) await tx.append(stream, appends.get(stream)!);

  for (const [i, job] of batch.entries()) {
    if (job.kind === 'run') outcomes[i] = { ok: true, value: await job.run(tx) };
  }
  return outcomes;
}
