import type { EventData } from '../../contracts/events';
import type { TransactionExecutor } from '../eventstore/sql';
import type { SubscriptionHandler } from '../eventstore/subscription';
import type { RecordedEvent } from '../eventstore/types';

/** UTC calendar day of an event, the unit of usage rows. */
export const usageDay = (at: Date) => at.toISOString().slice(0, 10);

/** The one rule of what an error is (contracts/http.ts ERRORS_MEANING): a call that ran and failed; a not-found is not one. */
export const endedInError = (completed: Pick<EventData<'LookupCompleted'>, 'outcome'>) => completed.outcome === 'error';

interface UsageDelta {
  calls: number;
  charged: number;
  refunded: number;
  errors: number;
}

/** Pure: the usage row an event adds to, and by how much (null: no usage effect). */
export function usageDelta(e: RecordedEvent): { workspaceId: string; day: string; keyId: string; operation: string; delta: UsageDelta } | null {
  const day = usageDay(e.recordedAt);
  switch (e.type) {
    case 'LookupCompleted': {
      const d = e.data as EventData<'LookupCompleted'>;
      return { workspaceId: d.workspace_id, day, keyId: d.key_id, operation: d.operation, delta: { calls: 1, charged: 0, refunded: 0, errors: endedInError(d) ? 1 : 0 } };
    }
    case 'LookupCharged': {
      const d = e.data as EventData<'LookupCharged'>;
      return { workspaceId: d.workspace_id, day, keyId: d.key_id, operation: d.operation, delta: { calls: 0, charged: d.credits, refunded: 0, errors: 0 } };
    }
    case 'LookupRefunded': {
      const d = e.data as EventData<'LookupRefunded'>;
      return { workspaceId: d.workspace_id, day, keyId: d.key_id, operation: d.operation, delta: { calls: 0, charged: 0, refunded: d.credits, errors: 0 } };
    }
    default:
      return null;
  }
}

/**
 * Async projection (checkpointed subscription): usage per key per day per operation and each
 * key's last use. Keeps writes off the request path; may lag by a poll interval.
 */
export const usageProjection: SubscriptionHandler & { tables: string[] } = {
  name: 'usage',
  tables: ['usage_daily', 'key_last_used'],
  async handle(tx: TransactionExecutor, events: RecordedEvent[]) {
    const rows = new Map<string, { workspaceId: string; day: string; keyId: string; operation: string; delta: UsageDelta }>();
    const lastUsed = new Map<string, Date>();
    for (const e of events) {
      const u = usageDelta(e);
      if (!u) continue;
      const id = `${u.workspaceId}|${u.day}|${u.keyId}|${u.operation}`;
      const row = rows.get(id);
      if (row) {
        row.delta.calls += u.delta.calls;
        row.delta.charged += u.delta.charged;
        row.delta.refunded += u.delta.refunded;
        row.delta.errors += u.delta.errors;
      } else rows.set(id, u);
      if (e.type === 'LookupCompleted') {
        const prev = lastUsed.get(u.keyId);
        if (!prev || prev < e.recordedAt) lastUsed.set(u.keyId, e.recordedAt);
      }
    }
    const list = [...rows.values()];
    // Nobody reads these writes' results: they go with the checkpoint and the COMMIT.
    if (list.length > 0) {
      tx.deferWrite(
        `INSERT INTO usage_daily (workspace_id, day, key_id, operation, calls, credits_charged, credits_refunded, errors)
         SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
         ON CONFLICT (workspace_id, day, key_id, operation) DO UPDATE SET
           calls = usage_daily.calls + EXCLUDED.calls,
           credits_charged = usage_daily.credits_charged + EXCLUDED.credits_charged,
           credits_refunded = usage_daily.credits_refunded + EXCLUDED.credits_refunded,
           errors = usage_daily.errors + EXCLUDED.errors`,
        [
          list.map((r) => r.workspaceId), list.map((r) => r.day), list.map((r) => r.keyId), list.map((r) => r.operation),
          list.map((r) => r.delta.calls), list.map((r) => r.delta.charged), list.map((r) => r.delta.refunded), list.map((r) => r.delta.errors),
        ],
      );
    }
    if (lastUsed.size > 0) {
      tx.deferWrite(
        `INSERT INTO key_last_used (key_id, last_used_at) SELECT * FROM unnest($1::text[], $2::timestamptz[])
         ON CONFLICT (key_id) DO UPDATE SET last_used_at = GREATEST(key_last_used.last_used_at, EXCLUDED.last_used_at)`,
        [[...lastUsed.keys()], [...lastUsed.values()].map((d) => d.toISOString())],
      );
    }
  },
};
