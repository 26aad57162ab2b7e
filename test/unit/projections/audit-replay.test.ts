import { describe, expect, it } from 'vitest';
import { compareRows, evolveCharge, evolveKey, evolveWorkspace, ledgerEntryOf, ReplayState, usageContribution, type AuditedEvent } from '../../../services/projections/audit';

let position = 0;
const event = (type: string, data: Record<string, unknown>, at = '2025-03-04T05:06:07.000Z'): AuditedEvent => ({
  position: ++position,
  stream: 's',
  version: position,
  type,
  data,
  prevHash: null,
  hash: null,
  recordedAtMs: Date.parse(at),
});

const ws = 'ws_A';
const money = { workspace_id: ws, request_id: 'req_1', key_id: 'key_1', operation: 'domain' };

describe('replaying a workspace', () => {
  it('given a created workspace, when credits are granted, charged and refunded, then the balance follows', () => {
    let state = evolveWorkspace(undefined, event('WorkspaceCreated', { workspace_id: ws, name: 'A', max_concurrency: 8 }));
    expect(state).toEqual({ name: 'A', balance: 0, max_concurrency: 8 });
    state = evolveWorkspace(state, event('CreditsGranted', { workspace_id: ws, amount: 10, reason: null }));
    state = evolveWorkspace(state, event('LookupCharged', { ...money, credits: 4 }));
    state = evolveWorkspace(state, event('LookupRefunded', { ...money, credits: 4, cause: 'timeout' }));
    state = evolveWorkspace(state, event('LimitsChanged', { workspace_id: ws, max_concurrency: 2 }));
    expect(state).toEqual({ name: 'A', balance: 10, max_concurrency: 2 });
  });

  it('given no workspace, when a grant arrives, then there is still no workspace', () => {
    expect(evolveWorkspace(undefined, event('CreditsGranted', { workspace_id: ws, amount: 10, reason: null }))).toBeUndefined();
  });

  it('given a money event, then its ledger line is signed and carries the balance after it', () => {
    const after = { name: 'A', balance: 6, max_concurrency: 8 };
    expect(ledgerEntryOf(event('LookupCharged', { ...money, credits: 4 }), after)).toEqual({ workspace_id: ws, type: 'LookupCharged', credits: -4, balance_after: 6 });
    expect(ledgerEntryOf(event('CreditsGranted', { workspace_id: ws, amount: 3, reason: 'x' }), after)).toMatchObject({ credits: 3 });
    expect(ledgerEntryOf(event('LimitsChanged', { workspace_id: ws, max_concurrency: 2 }), after)).toBeNull();
  });

  it('given a key, when it is revoked, then it stays revoked', () => {
    let key = evolveKey(undefined, event('ApiKeyCreated', { key_id: 'key_1', workspace_id: ws, name: null, prefix: 'lk_live_abcd', key_hash: 'a'.repeat(64), rate_limit_per_minute: 60 }));
    key = evolveKey(key, event('ApiKeyRevoked', { key_id: 'key_1', workspace_id: ws }));
    key = evolveKey(key, event('ApiKeyRevoked', { key_id: 'key_1', workspace_id: ws }));
    expect(key).toEqual({ workspace_id: ws, rate_limit_per_minute: 60, revoked: true });
  });

  it('given a charge, when it is refunded, then the refund is recorded on it', () => {
    const charge = evolveCharge(undefined, event('LookupCharged', { ...money, credits: 3 }));
    const refunded = evolveCharge(charge, event('LookupRefunded', { ...money, credits: 2, cause: 'not_found_price' }));
    expect(refunded).toEqual({ credits: 3, refunded_credits: 2, settled: false });
    const completed = event('LookupCompleted', { ...money, outcome: 'not_found', cache_status: 'MISS', credits_charged: 1, error_code: 'not_found' });
    expect(evolveCharge(refunded, completed)).toEqual({ credits: 3, refunded_credits: 2, settled: true });
    expect(evolveCharge(undefined, completed)).toBeUndefined();
  });

  it('given lookup events, then usage is counted per workspace, UTC day, key and operation', () => {
    const completed = event('LookupCompleted', { ...money, outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'timeout' }, '2025-03-04T23:59:59.999Z');
    expect(usageContribution(completed)).toEqual({ key: `${ws}|2025-03-04|key_1|domain`, add: { calls: 1, credits_charged: 0, credits_refunded: 0, errors: 1 } });
    expect(usageContribution(event('LookupCharged', { ...money, credits: 4 }))!.add).toEqual({ calls: 0, credits_charged: 4, credits_refunded: 0, errors: 0 });
    expect(usageContribution(event('CreditsGranted', { workspace_id: ws, amount: 1, reason: null }))).toBeNull();
  });
});

describe('the replay state', () => {
  it('given an alias fetched, then not found, then fetched again, then the last event decides where it points', () => {
    const state = new ReplayState();
    const fetched = (entity: string) => event('ProfileFetched', { entity, kind: 'company', data: {}, content_hash: `sha256:${entity}`, fetched_at: '2025-01-01T00:00:00.000Z', aliases: ['acme', entity] });
    state.apply(fetched('1'), true);
    state.apply(event('ProfileNotFound', { kind: 'company', alias: 'acme', code: 'not_found', reason: 'no_company', fetched_at: '2025-01-01T00:00:00.000Z' }), true);
    expect(state.aliases.get('acme')).toEqual({ entity: null, code: 'not_found' });
    state.apply(fetched('2'), true);
    expect(state.aliases.get('acme')).toEqual({ entity: '2', code: null });
    expect(state.aliases.get('1')).toEqual({ entity: '1', code: null });
    expect([...state.entities]).toEqual([['1', 'sha256:1'], ['2', 'sha256:2']]);
  });

  it('given events the usage subscription has not reached, then they count for balances but not for usage', () => {
    const state = new ReplayState();
    state.apply(event('WorkspaceCreated', { workspace_id: ws, name: 'A', max_concurrency: 8 }), true);
    state.apply(event('CreditsGranted', { workspace_id: ws, amount: 5, reason: null }), true);
    state.apply(event('LookupCharged', { ...money, credits: 1 }), false);
    state.apply(event('LookupCompleted', { ...money, outcome: 'success', cache_status: 'MISS', credits_charged: 1, error_code: null }), false);
    expect(state.workspaces.get(ws)!.balance).toBe(4);
    expect(state.charges.get('req_1')).toEqual({ credits: 1, refunded_credits: null, settled: true });
    expect(state.usage.size).toBe(0);
    expect(state.keyLastUsed.size).toBe(0);
  });
});

describe('comparing rows', () => {
  it('given equal rows, then nothing is reported', () => {
    const rows = new Map([['k', { a: 1, b: 'x' }]]);
    expect(compareRows('t', rows, new Map([['k', { a: 1, b: 'x', extra_column: 5 }]]))).toEqual([]);
  });

  it('given a differing field, a missing row and an extra row, then each is reported', () => {
    const expected = new Map([['k1', { a: 1 }], ['k2', { a: 2 }]]);
    const actual = new Map([['k1', { a: 9 }], ['k3', { a: 3 }]]);
    expect(compareRows('t', expected, actual)).toEqual([
      { projection: 't', key: 'k1', field: 'a', expected: 1, actual: 9 },
      { projection: 't', key: 'k2', field: 'row', expected: { a: 2 }, actual: null },
      { projection: 't', key: 'k3', field: 'row', expected: null, actual: { a: 3 } },
    ]);
  });

  it('given mismatches found in any order, then they come by key as text (ledger positions too), each row with its fields in column order', () => {
    const expected = new Map([['9', { a: 1, b: 1 }], ['10', { a: 1, b: 1 }], ['b', { a: 1, b: 1 }], ['11', { a: 1, b: 1 }]]);
    const actual = new Map([['a', { a: 0, b: 0 }], ['b', { a: 2, b: 2 }], ['10', { a: 1, b: 3 }], ['9', { a: 4, b: 4 }]]);
    expect(compareRows('t', expected, actual).map((m) => `${m.key} ${m.field}`)).toEqual(['10 b', '11 row', '9 a', '9 b', 'a row', 'b a', 'b b']);
  });

  it('given null where a number is expected, then it is a mismatch', () => {
    expect(compareRows('t', new Map([['k', { a: 0 }]]), new Map([['k', { a: null }]]))).toHaveLength(1);
  });
});
