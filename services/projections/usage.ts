import type { EventData } from '../../contracts/events';
import type { SubscriptionHandler } from '../eventstore/subscription';

/** The outcome of a call that ran and failed. */
const ERROR_OUTCOME = 'error';

/** The one rule of what an error is (contracts/http.ts ERRORS_MEANING): a call that ran and failed; a not-found is not one. */
export const endedInError = (completed: Pick<EventData<'LookupCompleted'>, 'outcome'>) => completed.outcome === ERROR_OUTCOME;

/** The events that add to usage: a completion is a call (an error when it ended in one), a charge or refund moves its credits. */
const USAGE_EVENT_TYPES = ['LookupCompleted', 'LookupCharged', 'LookupRefunded'] as const;

/**
 * Usage per key per UTC day per operation, and each key's last call (its latest completion),
 * summed in PostgreSQL from the events at `$1` (positions) in one pass: the service never reads
 * their data. The audit replays the same sums on its own (services/audit/audit.ts usageContribution).
 */
const ADD_USAGE = `
  WITH calls AS MATERIALIZED (
    SELECT type, data->>'workspace_id' AS workspace_id, data->>'key_id' AS key_id, data->>'operation' AS operation,
           (data->>'credits')::bigint AS credits, data->>'outcome' AS outcome, recorded_at
      FROM events WHERE position = ANY($1::bigint[])),
  usage AS (
    INSERT INTO usage_daily (workspace_id, day, key_id, operation, calls, credits_charged, credits_refunded, errors)
    SELECT workspace_id, (recorded_at AT TIME ZONE 'UTC')::date, key_id, operation,
           count(*) FILTER (WHERE type = 'LookupCompleted'),
           coalesce(sum(credits) FILTER (WHERE type = 'LookupCharged'), 0),
           coalesce(sum(credits) FILTER (WHERE type = 'LookupRefunded'), 0),
           count(*) FILTER (WHERE type = 'LookupCompleted' AND outcome = $2)
      FROM calls GROUP BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, day, key_id, operation) DO UPDATE SET
      calls = usage_daily.calls + EXCLUDED.calls,
      credits_charged = usage_daily.credits_charged + EXCLUDED.credits_charged,
      credits_refunded = usage_daily.credits_refunded + EXCLUDED.credits_refunded,
      errors = usage_daily.errors + EXCLUDED.errors)
  INSERT INTO key_last_used (key_id, last_used_at)
  SELECT key_id, max(recorded_at) FROM calls WHERE type = 'LookupCompleted' GROUP BY 1
  ON CONFLICT (key_id) DO UPDATE SET last_used_at = GREATEST(key_last_used.last_used_at, EXCLUDED.last_used_at)`;

const USAGE_EVENTS: ReadonlySet<string> = new Set(USAGE_EVENT_TYPES);

/**
 * Async projection (checkpointed subscription): usage per key per day per operation and each
 * key's last use. Keeps writes off the request path; may lag by a poll interval. Only the events'
 * places are read: reading every call's two events whole cost the service more CPU than the calls
 * themselves (docs/performance.md, issue 24).
 */
export const usageProjection: SubscriptionHandler & { tables: string[] } = {
  name: 'usage',
  tables: ['usage_daily', 'key_last_used'],
  eventTypes: USAGE_EVENT_TYPES,
  reads: { data: false, metadata: false },
  // Counters nothing outside acts on: a crash loses them with their checkpoint, and they are summed again.
  commitsWithoutFlush: true,
  async handle(tx, events) {
    const positions = events.filter((e) => USAGE_EVENTS.has(e.type)).map((e) => e.position);
    if (positions.length === 0) return;
    // Nobody reads these writes' results: they go with the checkpoint and the COMMIT.
    tx.deferWrite(ADD_USAGE, [positions, ERROR_OUTCOME]);
  },
};
