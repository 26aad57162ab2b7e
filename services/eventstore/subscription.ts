import { createHash } from 'node:crypto';
import { backoffDelayMs } from '../common/backoff';
import { backgroundLogger, everyNthError, type Logger } from '../common/log';
import { readAllIn, readTypedPageIn, type EventStore, type TypedPage } from './event-store';
import type { SqlExecutor, TransactionExecutor } from './sql';
import { START, type Checkpoint, type RecordedEvent } from './types';

/**
 * A checkpointed subscription to the global log. Each batch runs in one transaction: the
 * handler's writes and the new checkpoint commit together. A transaction-scoped advisory lock
 * makes sure only one instance works a given subscription at a time.
 */
export interface SubscriptionHandler {
  readonly name: string;
  /**
   * The only event types `handle` acts on (undefined: every type). The others still move the
   * checkpoint, but their data and metadata are not read: on PGlite every byte read crosses into
   * the service's own thread, and most of the log (a hit's two events) concerns few handlers.
   */
  readonly eventTypes?: readonly string[];
  /**
   * With `eventTypes`: a further SQL condition on the row `events` an event must meet to be read
   * whole (the others move the checkpoint unread), for a handler that acts on few of a type.
   */
  readonly readWhere?: string;
  /** With `eventTypes`: what of each event the handler reads (default both); the rest comes empty. */
  readonly reads?: { data: boolean; metadata: boolean };
  /**
   * True: each batch commits without waiting for the WAL flush, so the writer's commits do not
   * queue behind it. A crash then loses the last batches whole (writes and checkpoint) and they are
   * done again: only for a handler whose writes nothing outside acts on (docs/adr/0032).
   */
  readonly commitsWithoutFlush?: boolean;
  handle(tx: TransactionExecutor, events: RecordedEvent[]): Promise<void>;
}

export interface SubscriptionOptions {
  batchSize?: number;
  /** How often to look for new events when nothing woke the subscription (default 200 ms). */
  pollIntervalMs?: number;
  /**
   * After every failed attempt, with how many failed in a row; awaited before the next wait (the
   * relay drops its producer here). Default: logged through `logger`, the first of a run and every 20th.
   */
  onError?: (err: unknown, failures: number) => void | Promise<void>;
  /** Where the default onError reports (default: the background logger). */
  logger?: Logger;
  /**
   * Outside the batch's transaction, before each attempt (the relay connects its producer here,
   * so no transaction stays open meanwhile). Throwing counts as a failed attempt.
   */
  beforeBatch?: () => Promise<void>;
  /** After each attempt that went through, whatever its outcome; throwing counts as a failure. */
  afterBatch?: (outcome: BatchOutcome) => Promise<void>;
  /**
   * After a failure, wait this backoff (capped, with jitter) instead of the poll interval, and do
   * not let new events cut the wait short: a failing dependency is not hammered.
   */
  backoff?: { initialMs?: number; maxMs?: number };
  /**
   * An in-process append wakes the subscription no sooner than this after its last attempt
   * began (default 0: at once). Under load every commit appends: without it, each commit costs
   * the subscription a transaction or two of its own.
   */
  coalesceWakesMs?: number;
}

const DEFAULT_BATCH_SIZE = 500;

const LOCK = 'SELECT pg_try_advisory_xact_lock($1) AS ok';
/** The lock, and this transaction's COMMIT not waiting for the WAL flush (docs/adr/0032). */
const LOCK_AND_COMMIT_WITHOUT_FLUSH = "SELECT pg_try_advisory_xact_lock($1) AS ok, set_config('synchronous_commit', 'off', true)";

export type BatchOutcome = { kind: 'processed'; count: number; checkpoint: Checkpoint } | { kind: 'idle' } | { kind: 'busy' };

export function subscriptionLockKey(name: string): number {
  return createHash('sha256').update(`subscription:${name}`).digest().readInt32BE(0);
}

/** Processes one batch after the stored checkpoint. */
export async function processBatch(
  store: EventStore,
  handler: SubscriptionHandler,
  batchSize = DEFAULT_BATCH_SIZE,
): Promise<BatchOutcome> {
  return store.sql.transaction(async (tx) => {
    const { rows: locked } = await tx.query<{ ok: boolean }>(handler.commitsWithoutFlush ? LOCK_AND_COMMIT_WITHOUT_FLUSH : LOCK, [
      subscriptionLockKey(handler.name),
    ]);
    if (!locked[0]?.ok) return { kind: 'busy' } as const;
    // Its own statement, after the lock: read in the same one, the checkpoint could predate the
    // commit of the instance that held the lock a moment ago.
    const checkpoint = await readCheckpointIn(tx, handler.name);
    const page = await readPage(tx, checkpoint, batchSize, handler);
    if (page.scanned === 0 || !page.last) return { kind: 'idle' } as const;
    if (page.events.length > 0) await handler.handle(tx, page.events);
    writeCheckpointIn(tx, handler.name, page.last);
    return { kind: 'processed', count: page.scanned, checkpoint: page.last } as const;
  });
}

/** The next page after the checkpoint: every event, or only those of the handler's types read whole. */
async function readPage(tx: TransactionExecutor, after: Checkpoint, limit: number, handler: SubscriptionHandler): Promise<TypedPage> {
  const types = handler.eventTypes;
  if (types !== undefined) return readTypedPageIn(tx, after, limit, { types, where: handler.readWhere, ...handler.reads });
  const events = await readAllIn(tx, after, limit);
  const last = events[events.length - 1];
  return { events, scanned: events.length, last: last && { transactionId: last.transactionId, position: last.position } };
}

/** Runs until everything committed so far is processed (tests, rebuilds, the audit). */
export async function catchUp(store: EventStore, handler: SubscriptionHandler, batchSize = DEFAULT_BATCH_SIZE): Promise<number> {
  await store.waitForCommitted();
  let total = 0;
  for (;;) {
    const outcome = await processBatch(store, handler, batchSize);
    if (outcome.kind === 'processed') total += outcome.count;
    else if (outcome.kind === 'idle') return total;
    else await sleep(20);
  }
}

/**
 * Processes everything committed before the call. `catchUp` stops at the first empty read, and
 * `readAll` hides every transaction younger than the oldest one still running anywhere on the
 * server (other databases included), so on a busy server it can stop short of events that have
 * already committed. This waits until the checkpoint has passed the last of them.
 */
export async function catchUpToNow(store: EventStore, handler: SubscriptionHandler, timeoutMs = 120_000): Promise<number> {
  const last = await store.lastEvent();
  const deadline = Date.now() + timeoutMs;
  let processed = 0;
  for (;;) {
    processed += await catchUp(store, handler);
    if (!last || !isBefore(await readCheckpoint(store, handler.name), last)) return processed;
    if (Date.now() > deadline) throw new Error(`subscription ${handler.name} did not reach ${last.transactionId}/${last.position} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Global order (transaction id, then position). */
function isBefore(a: Checkpoint, b: Checkpoint): boolean {
  const ax = BigInt(a.transactionId);
  const bx = BigInt(b.transactionId);
  return ax < bx || (ax === bx && a.position < b.position);
}

export interface RunningSubscription {
  /** Finishes the batch in flight (its checkpoint commits or rolls back), then stops. */
  stop(): Promise<void>;
  /** Resolves once the subscription has processed everything committed before the call. */
  settled(): Promise<void>;
  /** Looks for new events now, unless it is backing off after a failure. */
  wake(): void;
}

/** Polls (and wakes early on in-process appends) until stopped; failures are retried, never thrown. */
export function startSubscription(
  store: EventStore,
  handler: SubscriptionHandler,
  options: SubscriptionOptions = {},
): RunningSubscription {
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const onError =
    options.onError ?? everyNthError(options.logger ?? backgroundLogger(), 'subscription failed; retrying', { subscription: handler.name });
  let stopped = false;
  let failures = 0;
  let wake: (() => void) | undefined;
  let stopWaiting: (() => void) | undefined;
  const coalesceMs = options.coalesceWakesMs ?? 0;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  let lastAttemptAt = 0;
  let coalesced: NodeJS.Timeout | undefined;
  const unsubscribe = store.onAppended(() => {
    const due = lastAttemptAt + coalesceMs - Date.now();
    if (due <= 0) return wake?.();
    coalesced ??= setTimeout(() => {
      coalesced = undefined;
      wake?.();
    }, due);
  });
  let idleWaiters: Array<() => void> = [];

  const loop = (async () => {
    while (!stopped) {
      let outcome: BatchOutcome | undefined;
      lastAttemptAt = Date.now();
      try {
        await options.beforeBatch?.();
        outcome = await processBatch(store, handler, batchSize);
        failures = 0;
        await options.afterBatch?.(outcome);
      } catch (err) {
        failures += 1;
        // The error hook must not end the loop either.
        await Promise.resolve()
          .then(() => onError(err, failures))
          .catch((hookError: unknown) => backgroundLogger().error({ subscription: handler.name, err: hookError }, 'subscription error hook failed'));
      }
      if (stopped) break;
      // A full batch: more is waiting. A partial one under coalescing: what came meanwhile is read
      // once the coalescing interval is up, not at once (under load that re-read finds a handful of
      // events, or none, and costs a transaction all the same).
      const caughtUp = outcome?.kind === 'processed' && outcome.count < batchSize && coalesceMs > 0;
      if (outcome?.kind === 'processed' && failures === 0 && !caughtUp) continue;
      if (outcome?.kind === 'idle') {
        for (const resolve of idleWaiters) resolve();
        idleWaiters = [];
      }
      const backingOff = failures > 0 && options.backoff !== undefined;
      const waitMs = backingOff
        ? backoffDelayMs(failures, options.backoff)
        : caughtUp
          ? Math.max(0, lastAttemptAt + coalesceMs - Date.now())
          : pollIntervalMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        wake = backingOff ? undefined : done;
        stopWaiting = done;
      });
      wake = undefined;
      stopWaiting = undefined;
    }
  })();

  return {
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(coalesced);
      stopWaiting?.();
      await loop;
    },
    async settled() {
      await store.waitForCommitted();
      await new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        wake?.();
      });
    },
    wake() {
      wake?.();
    },
  };
}

export async function readCheckpoint(store: EventStore, name: string): Promise<Checkpoint> {
  return readCheckpointIn(store.sql, name);
}

async function readCheckpointIn(tx: SqlExecutor, name: string): Promise<Checkpoint> {
  const { rows } = await tx.query<{ transaction_id: string; position: number }>(
    'SELECT transaction_id::text AS transaction_id, position FROM subscription_checkpoints WHERE name = $1',
    [name],
  );
  return rows[0] ? { transactionId: rows[0].transaction_id, position: Number(rows[0].position) } : START;
}

/** Sent with the COMMIT: nothing reads it before. */
function writeCheckpointIn(tx: TransactionExecutor, name: string, cp: Checkpoint): void {
  tx.deferWrite(
    `INSERT INTO subscription_checkpoints (name, transaction_id, position, updated_at)
     VALUES ($1, $2::xid8, $3, now())
     ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id,
       position = EXCLUDED.position, updated_at = now()`,
    [name, cp.transactionId, cp.position],
  );
}

/** Back to position 0: the handler's own reset (clearing its tables) runs in the same transaction. */
export async function resetSubscription(
  store: EventStore,
  name: string,
  clear: (tx: SqlExecutor) => Promise<void>,
): Promise<void> {
  await store.sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [subscriptionLockKey(name)]);
    await clear(tx);
    await tx.query('DELETE FROM subscription_checkpoints WHERE name = $1', [name]);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
