import { newEvent, streams } from '../../contracts/events';
import type { EventStore } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';
import { recordWatchesDeleted } from '../metrics/metrics';
import { deleteWatches } from '../watches/delete-watches';
import { KEY_CHANGES_CHANNEL } from './authenticator';

export class UnknownKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`no API key ${keyId}`);
  }
}

/** A key as its revocation sees it. */
export interface KeyState {
  workspaceId: string;
  revoked: boolean;
}

/**
 * Revokes once: a revoked key stays as it is (no second event). With `ofWorkspace` (the console's
 * scope), a key of another workspace is as unknown as no key.
 */
export function decideRevokeKey(key: KeyState | undefined, keyId: string, ofWorkspace?: string): NewEvent[] {
  if (!key || (ofWorkspace !== undefined && key.workspaceId !== ofWorkspace)) throw new UnknownKeyError(keyId);
  if (key.revoked) return [];
  return [newEvent('ApiKeyRevoked', { key_id: keyId, workspace_id: key.workspaceId })];
}

/**
 * Other instances are told at commit (their caches drop the key). The watches the key created end
 * with it (docs/api.md "Watches": their refreshes are calls made with the key); returns their ids,
 * none when the key was revoked already. `ofWorkspace`: see decideRevokeKey.
 */
export async function revokeKey(store: EventStore, keyId: string, ofWorkspace?: string): Promise<{ deletedWatches: string[] }> {
  const deletedWatches = await store.transaction(async (tx) => {
    // Under the row lock, so two concurrent revocations append one ApiKeyRevoked, not two.
    const found = await tx.sql.query<{ workspace_id: string; revoked_at: Date | null }>(
      'SELECT workspace_id, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE',
      [keyId],
    );
    const row = found.rows[0];
    const events = decideRevokeKey(row && { workspaceId: row.workspace_id, revoked: row.revoked_at !== null }, keyId, ofWorkspace);
    if (events.length === 0) return [];
    await tx.append(streams.apiKey(keyId), events);
    await tx.sql.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, keyId]);
    return deleteWatches(tx, row!.workspace_id, { keyId });
  });
  recordWatchesDeleted('key_revoked', deletedWatches.length);
  return { deletedWatches };
}
