import { newEvent, streams, type KeyMode } from '../../contracts/events';
import { RATE_LIMIT_PER_MINUTE_DEFAULT } from '../../contracts/http';
import { newKeyId } from '../common/ids';
import { modeField } from '../common/key-mode';
import type { EventStore } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';
import { UnknownWorkspaceError } from '../ledger/errors';
import { generateApiKey, hashApiKey, keyDisplayPrefix, modeOfKey } from './key-material';

export interface CreateKeyCommand {
  keyId: string;
  workspaceId: string;
  /** The secret itself: only its hash goes into the event. */
  key: string;
  name?: string;
  rateLimitPerMinute?: number;
  /** The console member who made it, recorded with the key (ApiKeyCreatedBy); none from the admin API. */
  createdBy?: string;
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string | null;
  rate_limit_per_minute: number;
  mode: KeyMode;
  created_at: string;
}

/** A key of an existing workspace; the secret never reaches the log, its hash and display prefix do. */
export function decideCreateKey(workspaceExists: boolean, cmd: CreateKeyCommand): NewEvent[] {
  if (!workspaceExists) throw new UnknownWorkspaceError(cmd.workspaceId);
  const createdBy = cmd.createdBy === undefined ? [] : [newEvent('ApiKeyCreatedBy', { key_id: cmd.keyId, workspace_id: cmd.workspaceId, actor: cmd.createdBy })];
  return [
    newEvent('ApiKeyCreated', {
      key_id: cmd.keyId,
      workspace_id: cmd.workspaceId,
      name: cmd.name ?? null,
      prefix: keyDisplayPrefix(cmd.key),
      key_hash: hashApiKey(cmd.key),
      rate_limit_per_minute: cmd.rateLimitPerMinute ?? RATE_LIMIT_PER_MINUTE_DEFAULT,
      // The mode is the key's own prefix.
      ...modeField(modeOfKey(cmd.key)),
    }),
    ...createdBy,
  ];
}

/**
 * A new key with a fresh secret, shown once in the answer: one append of all its events, so a key
 * never exists without its creator. `workspaceExists` is the caller's read.
 */
export async function createKey(
  store: EventStore,
  workspaceExists: boolean,
  input: { workspaceId: string; name?: string; rateLimitPerMinute?: number; createdBy?: string; mode?: KeyMode },
): Promise<CreatedKey> {
  const { mode = 'live', ...rest } = input;
  const cmd = { ...rest, keyId: newKeyId(), key: generateApiKey(mode) };
  const events = decideCreateKey(workspaceExists, cmd);
  const [recorded] = await store.append(streams.apiKey(cmd.keyId), events, 'no_stream');
  const data = events[0]!.data as { prefix: string; name: string | null; rate_limit_per_minute: number };
  return { id: cmd.keyId, key: cmd.key, prefix: data.prefix, name: data.name, rate_limit_per_minute: data.rate_limit_per_minute, mode, created_at: recorded!.recordedAt.toISOString() };
}
