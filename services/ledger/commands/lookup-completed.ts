import { newEvent, type EventData, type KeyMode, type Operation } from '../../../contracts/events';
import { modeField } from '../../common/key-mode';
import type { NewEvent } from '../../eventstore/types';

/** The call a ledger command is about. */
export interface CallRef {
  workspaceId: string;
  requestId: string;
  keyId: string;
  operation: Operation;
  /** The calling key's mode; absent: live. A test call's events say `mode: "test"`. */
  mode?: KeyMode;
}

/** What a call ended in, short of the call's own identifiers. */
export type CompletedOutcome = Omit<EventData<'LookupCompleted'>, 'workspace_id' | 'request_id' | 'key_id' | 'operation'>;

export const callFields = (call: CallRef) => ({
  workspace_id: call.workspaceId,
  request_id: call.requestId,
  key_id: call.keyId,
  operation: call.operation,
  ...modeField(call.mode ?? 'live'),
});

/** The LookupCompleted of a call (what usage counts). */
export function completedEvent(call: CallRef, completed: CompletedOutcome): NewEvent {
  return newEvent('LookupCompleted', { ...callFields(call), ...completed }, call.requestId);
}
