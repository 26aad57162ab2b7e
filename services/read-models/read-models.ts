import type { KeyMode } from '../../contracts/events';
import type { SqlExecutor } from '../eventstore/sql';
import * as queries from './queries';
import { type RequestStory, requestStoryOf } from './request-story';

/**
 * The reads of the admin API and the console, bound to one database: each method is one query of
 * queries.ts over the projection tables. Commands live with what they change (services/workspaces,
 * services/keys, services/ledger, services/members).
 */
export class ReadModels {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  workspace(id: string) {
    return queries.getWorkspace(this.sql, id);
  }

  /** Null for no such workspace. */
  balance(workspaceId: string) {
    return queries.balance(this.sql, workspaceId);
  }

  ledgerEntries(workspaceId: string, q: { requestId?: string; after?: number; limit: number; modes?: readonly KeyMode[] }) {
    return queries.ledgerEntries(this.sql, workspaceId, q);
  }

  ledgerBetween(workspaceId: string, from: Date, to: Date) {
    return queries.ledgerBetween(this.sql, workspaceId, from, to);
  }

  usage(workspaceId: string, q: { keyId?: string; from?: string; to?: string; modes?: readonly KeyMode[] }) {
    return queries.usage(this.sql, workspaceId, q);
  }

  listMembers(workspaceId: string) {
    return queries.listMembers(this.sql, workspaceId, this.clock());
  }

  keyCreators(workspaceId: string) {
    return queries.keyCreators(this.sql, workspaceId);
  }

  recentErrors(workspaceId: string, limit?: number) {
    return queries.recentErrors(this.sql, workspaceId, limit);
  }

  /** The operation of each charged call among `requestIds`. */
  operationsOf(workspaceId: string, requestIds: readonly string[]) {
    return queries.operationsOf(this.sql, workspaceId, requestIds);
  }

  /** The story of one call of the workspace, from the events it appended; null when it is not one of the workspace's. */
  async requestStory(workspaceId: string, requestId: string): Promise<RequestStory | null> {
    return requestStoryOf(await queries.requestEvents(this.sql, requestId), workspaceId);
  }
}
