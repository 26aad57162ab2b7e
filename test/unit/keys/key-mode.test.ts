// The rules of test keys (services/common/key-mode.ts, key-material.ts), given/when/then.
import { describe, expect, it } from 'vitest';
import { newEvent } from '../../../contracts/events';
import { completedEvent } from '../../../services/ledger/commands/lookup-completed';
import { chargeEvents } from '../../../services/ledger/commands/charge';
import { isTestCall, mayStartWatches, modesShown, modeField, priceInMode, scopeInMode, sourceForMode, usesCache } from '../../../services/common/key-mode';
import { API_KEY_PATTERN, generateApiKey, modeOfKey } from '../../../services/keys/key-material';
import { decideCreateKey } from '../../../services/keys/create-key';

describe('key material', () => {
  it('given the mode test, when a key is generated, then it is lk_test_ and 32 base62 characters, and its prefix names its mode', () => {
    const key = generateApiKey('test');
    expect(key).toMatch(/^lk_test_[A-Za-z0-9]{32}$/);
    expect(API_KEY_PATTERN.test(key)).toBe(true);
    expect(modeOfKey(key)).toBe('test');
  });

  it('given no mode, when a key is generated, then it is a live key as before', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^lk_live_[A-Za-z0-9]{32}$/);
    expect(modeOfKey(key)).toBe('live');
  });

  it('given another prefix, when matched, then it is no key', () => {
    expect(API_KEY_PATTERN.test(`lk_prod_${'a'.repeat(32)}`)).toBe(false);
    expect(API_KEY_PATTERN.test(`lk_test_${'a'.repeat(31)}`)).toBe(false);
  });

  it('given a test key created, when decided, then its ApiKeyCreated says mode test; a live key\'s carries no mode (absent means live)', () => {
    const test = decideCreateKey(true, { keyId: 'key_t', workspaceId: 'ws_1', key: generateApiKey('test') });
    const live = decideCreateKey(true, { keyId: 'key_l', workspaceId: 'ws_1', key: generateApiKey('live') });
    expect(test[0]!.data).toMatchObject({ mode: 'test', prefix: expect.stringMatching(/^lk_test_/) });
    expect(live[0]!.data).not.toHaveProperty('mode');
  });
});

describe('pricing in a mode', () => {
  it.each([0, 1, 3, 4])('given a price of %i, when the call is a test key\'s, then it costs 0; a live key\'s pays it', (price) => {
    expect(priceInMode('test', price)).toBe(0);
    expect(priceInMode('live', price)).toBe(price);
  });
});

describe('which source, which cache', () => {
  it('given a test key, when it fetches, then it goes to the sandbox and never through the cache', () => {
    expect(sourceForMode('test')).toBe('sandbox');
    expect(usesCache('test')).toBe(false);
  });

  it('given a live key, when it fetches, then it goes to the configured source through the cache', () => {
    expect(sourceForMode('live')).toBe('configured');
    expect(usesCache('live')).toBe(true);
  });
});

describe('watches', () => {
  it('given a test key, when it would create or run a watch, then it may not; a live key may', () => {
    expect(mayStartWatches('test')).toBe(false);
    expect(mayStartWatches('live')).toBe(true);
  });
});

describe('kept apart', () => {
  it('given a call event, when a balance watcher reads it, then only mode test marks a test call (absent is live)', () => {
    expect(isTestCall({ mode: 'test' })).toBe(true);
    expect(isTestCall({ mode: 'live' })).toBe(false);
    expect(isTestCall({})).toBe(false);
  });

  it('given the filters, when read, then live is live only, test test only, all both', () => {
    expect(modesShown('live')).toEqual(['live']);
    expect(modesShown('test')).toEqual(['test']);
    expect(modesShown('all')).toEqual(['live', 'test']);
  });

  it('given a workspace, when a test key calls, then its Idempotency-Keys and slots live in a scope of their own', () => {
    expect(scopeInMode('ws_1', 'live')).toBe('ws_1');
    expect(scopeInMode('ws_1', 'test')).not.toBe('ws_1');
  });

  it('given a test call, when its events are built, then each says mode test; a live call\'s are as before', () => {
    const call = { workspaceId: 'ws_1', requestId: 'req_1', keyId: 'key_1', operation: 'company' as const };
    const completed = { outcome: 'success' as const, cache_status: 'MISS' as const, credits_charged: 0, error_code: null };
    expect(chargeEvents({ ...call, mode: 'test', credits: 0 })[0]!.data).toMatchObject({ mode: 'test', credits: 0 });
    expect(completedEvent({ ...call, mode: 'test' }, completed).data).toMatchObject({ mode: 'test' });
    expect(chargeEvents({ ...call, credits: 1 })[0]!.data).not.toHaveProperty('mode');
    expect(modeField('live')).toEqual({});
  });

  it('given an event with a mode that is no mode, when built, then the contract refuses it', () => {
    expect(() => newEvent('LookupCharged', { workspace_id: 'ws_1', request_id: 'req_1', key_id: 'key_1', operation: 'company', credits: 0, mode: 'staging' as never })).toThrow();
  });
});
