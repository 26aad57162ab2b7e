import type { EventStore } from '../eventstore/event-store';
import { readCheckpoint } from '../eventstore/subscription';

/** Counting events behind stops here: past any sensible bound, and the count stays cheap. */
export const LAG_COUNT_CAP = 1_000_000;

/**
 * Events committed after the subscription's checkpoint, counted up to LAG_COUNT_CAP: the
 * `lookup_api_subscription_lag_events` gauge and its alerts (infra/prometheus/alerts.yml). Like the
 * subscription's own reading, only events older than every transaction still running count: one a
 * batch could not yet take is not lag.
 */
export async function eventsBehind(store: EventStore, subscription: string): Promise<number> {
  const checkpoint = await readCheckpoint(store, subscription);
  const { rows } = await store.sql.query<{ behind: number }>(
    `SELECT count(*)::int AS behind FROM (
       SELECT 1 FROM events
        WHERE (events.transaction_id, events.position) > ($1::xid8, $2::bigint)
          AND events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        LIMIT $3) AS pending`,
    [checkpoint.transactionId, checkpoint.position, LAG_COUNT_CAP],
  );
  return Number(rows[0]?.behind ?? 0);
}
