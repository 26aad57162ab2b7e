import { describe, expect, it } from 'vitest';
import { RATE_LIMIT_PER_MINUTE_DEFAULT } from '../../../contracts/http';
import { decideCreateKey } from '../../../services/keys/create-key';
import { generateApiKey, hashApiKey } from '../../../services/keys/key-material';
import { decideRevokeKey, UnknownKeyError } from '../../../services/keys/revoke-key';
import { UnknownWorkspaceError } from '../../../services/ledger/errors';

const WS = 'ws_01HZZZZZZZZZZZZZZZZZZZZZZZ';
const KEY_ID = 'key_01HZZZZZZZZZZZZZZZZZZZZZZZ';

describe('create a key', () => {
  it('given a workspace, when a key is created, then the log holds its hash and display prefix, never the secret', () => {
    const key = generateApiKey();
    const [event, ...rest] = decideCreateKey(true, { keyId: KEY_ID, workspaceId: WS, key, name: 'prod', rateLimitPerMinute: 60 });
    expect(rest).toEqual([]);
    expect(event!.type).toBe('ApiKeyCreated');
    expect(event!.data).toEqual({ key_id: KEY_ID, workspace_id: WS, name: 'prod', prefix: key.slice(0, 12), key_hash: hashApiKey(key), rate_limit_per_minute: 60 });
    expect(JSON.stringify(event)).not.toContain(key);
  });

  it('given no name or rate limit, when a key is created, then the name is null and the limit the contract default', () => {
    const [event] = decideCreateKey(true, { keyId: KEY_ID, workspaceId: WS, key: generateApiKey() });
    expect(event!.data).toMatchObject({ name: null, rate_limit_per_minute: RATE_LIMIT_PER_MINUTE_DEFAULT });
  });

  it('given a console member, when a key is created, then its creator is in the same events (one append, one transaction)', () => {
    const events = decideCreateKey(true, { keyId: KEY_ID, workspaceId: WS, key: generateApiKey(), createdBy: 'mem_ada' });
    expect(events.map((e) => e.type)).toEqual(['ApiKeyCreated', 'ApiKeyCreatedBy']);
    expect(events[1]!.data).toEqual({ key_id: KEY_ID, workspace_id: WS, actor: 'mem_ada' });
  });

  it('given no workspace, when a key is created, then it fails with UnknownWorkspaceError', () => {
    expect(() => decideCreateKey(false, { keyId: KEY_ID, workspaceId: WS, key: generateApiKey() })).toThrow(UnknownWorkspaceError);
  });
});

describe('revoke a key', () => {
  it('given an active key, when revoked, then ApiKeyRevoked names the key and its workspace', () => {
    expect(decideRevokeKey({ workspaceId: WS, revoked: false }, KEY_ID).map((e) => [e.type, e.data])).toEqual([
      ['ApiKeyRevoked', { key_id: KEY_ID, workspace_id: WS }],
    ]);
  });

  it('given a revoked key, when revoked again, then nothing is appended', () => {
    expect(decideRevokeKey({ workspaceId: WS, revoked: true }, KEY_ID)).toEqual([]);
  });

  it('given a key of another workspace, when revoked within this one (the console), then it fails with UnknownKeyError', () => {
    expect(() => decideRevokeKey({ workspaceId: WS, revoked: false }, KEY_ID, 'ws_01HYYYYYYYYYYYYYYYYYYYYYYY')).toThrow(UnknownKeyError);
    expect(decideRevokeKey({ workspaceId: WS, revoked: false }, KEY_ID, WS)).toHaveLength(1);
  });

  it('given no such key, when revoked, then it fails with UnknownKeyError', () => {
    expect(() => decideRevokeKey(undefined, KEY_ID)).toThrow(UnknownKeyError);
  });
});
