import {
  BALANCE_MESSAGE_TYPE,
  BALANCE_MESSAGE_VERSION,
  CLOUDEVENTS,
  cloudEventType,
  eventId,
  type WorkspaceBalanceMessage,
} from '../../contracts/jsonschema';
import type { SqlExecutor } from '../eventstore/sql';
import { opensOrMovesBalance } from '../ledger/workspace-state';
import type { RecordedEvent } from '../eventstore/types';
import { cloudEventHeaders } from './cloudevents';
import type { OutgoingMessage, TopicNames } from './routing';

/**
 * The compacted balances topic: for every workspace whose balance a batch of the log opens or
 * moves, one message keyed by the workspace id whose value is the balance the service holds.
 *
 * The balance is read from the `workspaces` projection, inside the relay's batch transaction,
 * rather than summed from the events: the projection is written in the transaction that appends
 * each event, so a read made after an event committed includes it, and the read costs one indexed
 * lookup per workspace, whatever the length of its history or of the relay's lag. (Summing deltas
 * in the relay's order would be exact per event but needs the history or the unread tail each
 * batch.) The last message of a key is therefore read after the workspace's last event committed:
 * once the relay has caught up it equals the admin API's balance.
 */

/** Per workspace, the newest event of the batch that opens or moves its balance, in batch order. */
export function balanceEventsByWorkspace(events: readonly RecordedEvent[]): Map<string, RecordedEvent> {
  const newest = new Map<string, RecordedEvent>();
  for (const event of events) {
    if (!opensOrMovesBalance(event)) continue;
    const workspaceId = (event.data as { workspace_id?: unknown } | null)?.workspace_id;
    if (typeof workspaceId !== 'string' || workspaceId === '') continue;
    // Deleted and set again: the map keeps the order of each workspace's newest event.
    newest.delete(workspaceId);
    newest.set(workspaceId, event);
  }
  return newest;
}

export function toBalanceMessage(workspaceId: string, balance: number, lastEvent: RecordedEvent, topics: TopicNames): OutgoingMessage {
  const value: WorkspaceBalanceMessage = {
    workspace_id: workspaceId,
    balance,
    last_event_id: eventId(lastEvent.stream, lastEvent.version),
    last_event_position: lastEvent.position,
    last_event_recorded_at: lastEvent.recordedAt.toISOString(),
  };
  const headers = cloudEventHeaders({
    id: value.last_event_id,
    type: cloudEventType(BALANCE_MESSAGE_TYPE, BALANCE_MESSAGE_VERSION),
    source: CLOUDEVENTS.balancesSource,
    subject: workspaceId,
    time: value.last_event_recorded_at,
  });
  return { topic: topics.balances, key: workspaceId, value: JSON.stringify(value), headers };
}

/**
 * The balance messages of one batch, read in the batch's transaction `tx`. A workspace the
 * projection does not hold (an event without a valid workspace) has no balance to publish.
 */
export async function balanceMessages(tx: SqlExecutor, events: readonly RecordedEvent[], topics: TopicNames): Promise<OutgoingMessage[]> {
  const newest = balanceEventsByWorkspace(events);
  if (newest.size === 0) return [];
  const { rows } = await tx.query<{ id: string; balance: number | string }>('SELECT id, balance FROM workspaces WHERE id = ANY($1::text[])', [
    [...newest.keys()],
  ]);
  const balances = new Map(rows.map((r) => [r.id, Number(r.balance)]));
  const messages: OutgoingMessage[] = [];
  for (const [workspaceId, event] of newest) {
    const balance = balances.get(workspaceId);
    if (balance !== undefined) messages.push(toBalanceMessage(workspaceId, balance, event, topics));
  }
  return messages;
}
