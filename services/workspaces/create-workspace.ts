import { MAX_CONCURRENCY_DEFAULT } from '../../contracts/http';
import { newEvent, streams } from '../../contracts/events';
import { newWorkspaceId } from '../common/ids';
import type { EventStore } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';
import { chainLedgerEvents } from '../ledger/ledger-chain';
import type { WorkspaceState } from '../ledger/workspace-state';

export interface CreateWorkspaceCommand {
  workspaceId: string;
  name: string;
  /** Initial credits (none when absent or 0). */
  credits?: number;
  maxConcurrency?: number;
}

/** A new workspace, with its initial credits when it has some. Only a workspace not yet there can be created. */
export function decideCreateWorkspace(existing: WorkspaceState | undefined, cmd: CreateWorkspaceCommand): NewEvent[] {
  if (existing) throw new Error(`workspace ${cmd.workspaceId} exists already`);
  const events: NewEvent[] = [
    newEvent('WorkspaceCreated', { workspace_id: cmd.workspaceId, name: cmd.name, max_concurrency: cmd.maxConcurrency ?? MAX_CONCURRENCY_DEFAULT }),
  ];
  if (cmd.credits && cmd.credits > 0) events.push(newEvent('CreditsGranted', { workspace_id: cmd.workspaceId, amount: cmd.credits, reason: 'initial credits' }));
  return events;
}

/** Creates a workspace under a new id and returns the id. */
export async function createWorkspace(store: EventStore, input: Omit<CreateWorkspaceCommand, 'workspaceId'>): Promise<string> {
  const workspaceId = newWorkspaceId();
  // A new id has no stream: `no_stream` holds that state, so no read is needed to decide; its
  // ledger chain starts here.
  const stream = streams.workspace(workspaceId);
  await store.append(stream, chainLedgerEvents(null, stream, decideCreateWorkspace(undefined, { ...input, workspaceId })).events, 'no_stream');
  return workspaceId;
}
