import { newEvent, streams } from '../../contracts/events';
import type { EventStore } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';
import { KEY_CHANGES_CHANNEL } from '../keys/authenticator';
import { UnknownWorkspaceError } from '../ledger/errors';
import type { WorkspaceState } from '../ledger/workspace-state';

export interface ChangeLimitsCommand {
  workspaceId: string;
  maxConcurrency: number;
}

export function decideChangeLimits(state: WorkspaceState | undefined, cmd: ChangeLimitsCommand): NewEvent[] {
  if (!state) throw new UnknownWorkspaceError(cmd.workspaceId);
  return [newEvent('LimitsChanged', { workspace_id: cmd.workspaceId, max_concurrency: cmd.maxConcurrency })];
}

/**
 * Its own transaction rather than the batching writer's: instances cache a key's limits with the
 * key, and the notification that makes them forget must go out with this commit.
 */
export async function changeLimits(store: EventStore, cmd: ChangeLimitsCommand): Promise<void> {
  await store.transaction(async (tx) => {
    // The row lock first, before the stream lock of the append: the order every writer takes.
    const { rows } = await tx.sql.query<{ balance: number; max_concurrency: number }>(
      'SELECT balance, max_concurrency FROM workspaces WHERE id = $1 FOR UPDATE',
      [cmd.workspaceId],
    );
    const state = rows[0] && { balance: Number(rows[0].balance), maxConcurrency: Number(rows[0].max_concurrency) };
    await tx.append(streams.workspace(cmd.workspaceId), decideChangeLimits(state, cmd));
    await tx.sql.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, cmd.workspaceId]);
  });
}
