import { EVENT_COLUMNS, toRecorded, type EventRow, type EventStore, type InlineProjection } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import { catchUpToNow, resetSubscription } from '../eventstore/subscription';
import type { RecordedEvent } from '../eventstore/types';
import { INLINE_PROJECTIONS, INLINE_TABLES } from './inline';
import { usageProjection } from './usage';

const PAGE_SIZE = 1000;

/**
 * Every event that `executor` can see, after `afterPosition`, in position order. Positions of one
 * stream are allocated under that stream's lock, so they follow the order in which the stream's
 * events committed; every projection row derives from one stream, so position order reproduces
 * what the inline projections saw at append time. (The subscriptions' global order, by
 * transaction id, may put a batch that committed later before an earlier commit on the same
 * workspace, which would replay balances in the wrong order.)
 */
export async function readLogPage(executor: SqlExecutor, afterPosition: number, limit = PAGE_SIZE): Promise<RecordedEvent[]> {
  const { rows } = await executor.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`, [
    afterPosition,
    limit,
  ]);
  return rows.map(toRecorded);
}

/**
 * A page of readLogPage that splits no transaction: extended past `limit` with the events up to
 * the last one of each transaction it holds. The ledger projection leaves out the `charges` row of
 * a charge settled in its own transaction (ledger-plan.ts, chargeRowsToStore), which it can only
 * tell when both events are in one run, as they are at append time.
 */
export async function readWholeTransactions(executor: SqlExecutor, afterPosition: number, limit = PAGE_SIZE): Promise<RecordedEvent[]> {
  const page = await readLogPage(executor, afterPosition, limit);
  if (page.length < limit) return page;
  for (;;) {
    const last = page[page.length - 1]!.position;
    // Each transaction's last event by the (transaction_id, position) index, one probe each (a
    // max over `transaction_id = ANY(...)` scans the log backwards from its head instead).
    const { rows } = await executor.query<{ until: string | number | null }>(
      'SELECT max((SELECT max(position) FROM events WHERE transaction_id = t)) AS until FROM unnest($1::xid8[]) AS t',
      [[...new Set(page.map((e) => e.transactionId))]],
    );
    const until = rows[0]?.until == null ? last : Number(rows[0].until);
    if (until <= last) return page;
    const { rows: more } = await executor.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE position > $1 AND position <= $2 ORDER BY position`, [
      last,
      until,
    ]);
    page.push(...more.map(toRecorded));
  }
}

export interface RebuildResult {
  /** Events replayed through the inline projections. */
  events: number;
  /** Events the usage subscription processed after its reset. */
  usageEvents: number;
}

/**
 * Empties every projection table and replays the whole log through the same projection code.
 * The inline tables are rebuilt in one transaction holding exclusive locks on them, so appends
 * that write to them wait and land on the rebuilt rows; the usage subscription is reset (its
 * tables emptied, checkpoint removed) and caught up.
 */
export async function rebuildProjections(
  store: EventStore,
  projections: readonly InlineProjection[] = INLINE_PROJECTIONS,
): Promise<RebuildResult> {
  const tables = projections.flatMap((p) => {
    const owned = INLINE_TABLES[p.name];
    if (!owned) throw new Error(`inline projection ${p.name} has no entry in INLINE_TABLES`);
    return owned;
  });

  const events = await store.sql.transaction(async (tx) => {
    await tx.query(`LOCK TABLE ${tables.join(', ')} IN ACCESS EXCLUSIVE MODE`);
    await tx.query(`TRUNCATE ${tables.join(', ')}`);
    let replayed = 0;
    let after = 0;
    for (;;) {
      const page = await readWholeTransactions(tx, after);
      if (page.length === 0) return replayed;
      for (const projection of projections) await projection.apply(tx, page);
      replayed += page.length;
      after = page[page.length - 1]!.position;
    }
  });

  await resetSubscription(store, usageProjection.name, async (tx) => {
    await tx.query(`TRUNCATE ${usageProjection.tables.join(', ')}`);
  });
  const usageEvents = await catchUpToNow(store, usageProjection);
  return { events, usageEvents };
}
