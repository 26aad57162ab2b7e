import { newEvent, streams, type WatchDeletedReason } from '../../contracts/events';
import type { StoreTransaction } from '../eventstore/event-store';

/** Which watches end, and so the reason each one's WatchDeleted gives. */
type WatchesToDelete = { watchId: string } | { endpointId: string } | { keyId: string };

function selection(which: WatchesToDelete): [column: string, value: string, reason: WatchDeletedReason] {
  if ('watchId' in which) return ['id', which.watchId, 'watch_deleted'];
  if ('endpointId' in which) return ['webhook_endpoint_id', which.endpointId, 'webhook_endpoint_deleted'];
  return ['key_id', which.keyId, 'key_revoked'];
}

/**
 * The one way a watch ends: its row leaves the schedule and its stream gets WatchDeleted, saying
 * why. One watch by id (its own DELETE), all of an endpoint's (the endpoint deleted), or all a
 * key created (the key revoked). Returns the ids, oldest first.
 */
export async function deleteWatches(tx: StoreTransaction, workspaceId: string, which: WatchesToDelete): Promise<string[]> {
  const [column, value, reason] = selection(which);
  const { rows } = await tx.sql.query<{ id: string }>(`UPDATE watches SET deleted_at = now() WHERE ${column} = $1 AND workspace_id = $2 AND deleted_at IS NULL RETURNING id`, [value, workspaceId]);
  // Watch ids are ULIDs: sorted, they are in the order the watches were created.
  const ids = rows.map((r) => r.id).sort();
  for (const id of ids) await tx.append(streams.watch(id), [newEvent('WatchDeleted', { watch_id: id, workspace_id: workspaceId, reason })]);
  return ids;
}
