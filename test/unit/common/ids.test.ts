import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RequestId } from '../../../contracts/http';
import { newKeyId, newRequestId, newWorkspaceId } from '../../../services/common/ids';
import { API_KEY_PATTERN, generateApiKey, hashApiKey, keyDisplayPrefix } from '../../../services/keys/key-material';

describe('identifiers', () => {
  it('request ids are req_ + a 26-character ULID, unique, sortable by time', () => {
    const ids = Array.from({ length: 5000 }, () => newRequestId());
    for (const id of ids) expect(RequestId.safeParse(id).success, id).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]!.slice(4, 14) <= ids[ids.length - 1]!.slice(4, 14)).toBe(true);
  });

  it('workspace and key ids carry their prefixes', () => {
    expect(newWorkspaceId()).toMatch(/^ws_[0-9A-Z]{26}$/);
    expect(newKeyId()).toMatch(/^key_[0-9A-Z]{26}$/);
  });

  it('API keys are lk_live_ (or lk_test_) + 32 base62 characters, only their SHA-256 is kept', () => {
    const keys = Array.from({ length: 1000 }, () => generateApiKey());
    for (const key of keys) expect(key).toMatch(API_KEY_PATTERN);
    expect(new Set(keys).size).toBe(keys.length);
    const key = keys[0]!;
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(keyDisplayPrefix(key)).toBe(key.slice(0, 12));
    expect(API_KEY_PATTERN.test(`${key}x`)).toBe(false);
    expect(API_KEY_PATTERN.test(key.replace('lk_live_', 'lk_prod_'))).toBe(false);
    // A test key is a key too (docs/api.md, "Test keys").
    expect(API_KEY_PATTERN.test(key.replace('lk_live_', 'lk_test_'))).toBe(true);
  });
});
