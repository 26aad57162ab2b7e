import { newEvent, streams, type KeyMode } from '../../contracts/events';
import type { KeyRevokeResponse } from '../../contracts/http';
import type { EventStore } from '../eventstore/event-store';
import { getWorkspace, keyRevokedAt, listKeys } from '../read-models/queries';
import type { KeyAuthenticator } from './authenticator';
import { createKey, type CreatedKey } from './create-key';
import { revokeKey, UnknownKeyError } from './revoke-key';

/**
 * API keys, for the admin API and the console alike: each command is one transaction (one append,
 * or one SQL transaction), written once here.
 */
export class Keys {
  constructor(
    private readonly store: EventStore,
    /** This instance's cache and every instance's revocation marks. */
    private readonly authenticator: Pick<KeyAuthenticator, 'revoked'>,
  ) {}

  /** `createdBy`: the console member who made it. */
  async create(workspaceId: string, input: { name?: string; rateLimitPerMinute?: number; createdBy?: string; mode?: KeyMode }): Promise<CreatedKey> {
    const exists = (await getWorkspace(this.store.sql, workspaceId)) !== undefined;
    return createKey(this.store, exists, { workspaceId, ...input });
  }

  list(workspaceId: string) {
    return listKeys(this.store.sql, workspaceId);
  }

  /**
   * Revoked in the log (once: revoking again answers with the first revocation), with the watches
   * the key created, then marked for every instance. `ofWorkspace`: only a key of that workspace
   * (the console's scope).
   */
  async revoke(keyId: string, ofWorkspace?: string): Promise<KeyRevokeResponse> {
    const { deletedWatches } = await revokeKey(this.store, keyId, ofWorkspace);
    await this.authenticator.revoked(keyId);
    return { id: keyId, revoked_at: (await keyRevokedAt(this.store.sql, keyId))!, deleted_watches: deletedWatches };
  }

  async rename(workspaceId: string, keyId: string, name: string | null, actor: string): Promise<void> {
    await this.requireKeyOf(workspaceId, keyId);
    await this.store.append(streams.apiKey(keyId), [newEvent('ApiKeyRenamed', { key_id: keyId, workspace_id: workspaceId, name, actor })]);
  }

  /** Throws UnknownKeyError unless the key belongs to the workspace. */
  async requireKeyOf(workspaceId: string, keyId: string): Promise<void> {
    const { rows } = await this.store.sql.query('SELECT 1 FROM api_keys WHERE id = $1 AND workspace_id = $2', [keyId, workspaceId]);
    if (rows.length === 0) throw new UnknownKeyError(keyId);
  }
}
