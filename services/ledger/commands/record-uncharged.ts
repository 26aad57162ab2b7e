import type { NewEvent } from '../../eventstore/types';
import type { BatchingWriter, Decision, LockedState } from '../batching-writer';
import { completedEvent, type CallRef, type CompletedOutcome } from './lookup-completed';

/** A call that charged nothing (refused, or a free not-found from cache), for usage. */
export interface RecordUnchargedCommand extends CallRef {
  completed: CompletedOutcome;
}

/**
 * Only the completion: the balance stays as it is, whatever it is, and is answered (null: no such
 * workspace) so the caller need not read it again. `events` are the command's (built ahead,
 * outside the locks).
 */
export function decideRecordUncharged(
  { workspace }: Pick<LockedState, 'workspace'>,
  cmd: RecordUnchargedCommand,
  events: NewEvent[] = [completedEvent(cmd, cmd.completed)],
): Decision<number | null> {
  return { events, result: workspace?.balance ?? null };
}

/** Records the uncharged call; resolves with the workspace's balance (null: no such workspace). */
export function recordUncharged(writer: BatchingWriter, cmd: RecordUnchargedCommand): Promise<number | null> {
  const events = [completedEvent(cmd, cmd.completed)];
  return writer.submit({ workspaceId: cmd.workspaceId, decide: (locked) => decideRecordUncharged(locked, cmd, events) });
}
