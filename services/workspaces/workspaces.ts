import type { EventStore } from '../eventstore/event-store';
import { getWorkspace, type Workspace } from '../read-models/queries';
import { changeLimits } from './change-limits';
import { createWorkspace } from './create-workspace';

/** Workspaces as the admin API manages them: each command answers with the workspace it left. */
export class Workspaces {
  constructor(private readonly store: EventStore) {}

  async create(input: { name: string; credits?: number; maxConcurrency?: number }): Promise<Workspace> {
    const id = await createWorkspace(this.store, input);
    return (await this.get(id))!;
  }

  get(id: string): Promise<Workspace | undefined> {
    return getWorkspace(this.store.sql, id);
  }

  async changeLimits(id: string, maxConcurrency: number): Promise<Workspace> {
    await changeLimits(this.store, { workspaceId: id, maxConcurrency });
    return (await this.get(id))!;
  }
}
