import type { NewEvent } from '../../eventstore/types';
import type { BatchingWriter, Decision } from '../batching-writer';
import { completedEvent, type CallRef, type CompletedOutcome } from './lookup-completed';

/** A call that charged nothing (refused, or a free not-found from cache), for usage. */
export interface RecordUnchargedCommand extends CallRef {
  completed: CompletedOutcome;
}

/**
 * Only the completion: the balance stays as it is, whatever it is. `events` are the command's
 * (built ahead, outside the locks).
 */
export function decideRecordUncharged(cmd: RecordUnchargedCommand, events: NewEvent[] = [completedEvent(cmd, cmd.completed)]): Decision<void> {
  return { events, result: undefined };
}

export function recordUncharged(writer: BatchingWriter, cmd: RecordUnchargedCommand): Promise<void> {
  const events = [completedEvent(cmd, cmd.completed)];
  return writer.submit({ workspaceId: cmd.workspaceId, decide: () => decideRecordUncharged(cmd, events) });
}
