import { describe, expect, it } from 'vitest';
import { compareTable, evolveCharge, evolveKey, evolveWorkspace, ledgerEntryOf, ReplayState, type TableCheck, usageContribution, type AuditedEvent } from '../../../services/audit/audit';

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
    expect(key).toEqual({ workspace_id: ws, rate_limit_per_minute: 60, mode: 'live', revoked: true });
  });

  it('given a test key created, when replayed, then its mode is test (absent means live)', () => {
    const key = evolveKey(undefined, event('ApiKeyCreated', { key_id: 'key_2', workspace_id: ws, name: null, prefix: 'lk_test_abcd', key_hash: 'b'.repeat(64), rate_limit_per_minute: 60, mode: 'test' }));
    expect(key).toEqual({ workspace_id: ws, rate_limit_per_minute: 60, mode: 'test', revoked: false });
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

/** A table keyed by its first column, whose replayed rows are `{a, b}`. */
const table = (expected: Map<string, { a: unknown; b: unknown }>): TableCheck<string, { a: unknown; b: unknown }> => ({
  table: 't',
  columns: ['k', 'a', 'b_text AS b', 'extra_column'],
  keyOf: (row) => String(row[0]),
  expected,
  fields: [
    { column: 'a', replayed: (v) => v.a },
    { column: 'b', replayed: (v) => v.b },
  ],
});

describe('comparing a table with the replay', () => {
  it('given equal rows, then nothing is reported, whatever other columns the table has', () => {
    expect(compareTable(table(new Map([['k', { a: 1, b: 'x' }]])), [['k', 1, 'x', 5]])).toEqual([]);
  });

  it('given a differing field, a missing row and an extra row, then each is reported, the extra row as the table holds it', () => {
    const expected = new Map([['k1', { a: 1, b: 'x' }], ['k2', { a: 2, b: 'y' }]]);
    expect(compareTable(table(expected), [['k1', 9, 'x', 0], ['k3', 3, 'z', 0]])).toEqual([
      { projection: 't', key: 'k1', field: 'a', expected: 1, actual: 9 },
      { projection: 't', key: 'k2', field: 'row', expected: { a: 2, b: 'y' }, actual: null },
      { projection: 't', key: 'k3', field: 'row', expected: null, actual: { k: 'k3', a: 3, b: 'z', extra_column: 0 } },
    ]);
  });

  it('given mismatches found in any order, then they come by key as text (ledger positions too), each row with its fields in column order', () => {
    const one = { a: 1, b: 1 };
    const expected = new Map([['9', one], ['10', one], ['b', one], ['11', one]]);
    const rows = [['a', 0, 0, 0], ['b', 2, 2, 0], ['10', 1, 3, 0], ['9', 4, 4, 0]];
    expect(compareTable(table(expected), rows).map((m) => `${m.key} ${m.field}`)).toEqual(['10 b', '11 row', '9 a', '9 b', 'a row', 'b a', 'b b']);
  });

  it('given numeric keys, then rows are found by number and named as text', () => {
    const check: TableCheck<number, number> = {
      table: 'n', columns: ['position', 'credits'], keyOf: (row) => row[0] as number, expected: new Map([[7, 5]]), fields: [{ column: 'credits', replayed: (credits) => credits }],
    };
    expect(compareTable(check, [[7, 5]])).toEqual([]);
    expect(compareTable(check, [[7, 6]])).toEqual([{ projection: 'n', key: '7', field: 'credits', expected: 5, actual: 6 }]);
  });

  it('given null where a number is expected, then it is a mismatch', () => {
    expect(compareTable(table(new Map([['k', { a: 0, b: 'x' }]])), [['k', null, 'x', 0]])).toHaveLength(1);
  });

  it('given a stored value read another way and a custom extra row, then both sides are compared and shown that way', () => {
    const iso = (at: unknown) => new Date(at as number | string).toISOString();
    const check: TableCheck<string, number> = {
      table: 'last', columns: ['key_id', 'at'], keyOf: (row) => String(row[0]), expected: new Map([['k', 0]]),
      fields: [{ column: 'at', replayed: iso, stored: iso }], extraRow: (row) => ({ at: iso(row[1]) }),
    };
    expect(compareTable(check, [['k', '1970-01-01T00:00:00Z']])).toEqual([]);
    expect(compareTable(check, [['k', '2001-01-01T00:00:00Z'], ['x', '1970-01-01T00:00:00Z']])).toEqual([
      { projection: 'last', key: 'k', field: 'at', expected: '1970-01-01T00:00:00.000Z', actual: '2001-01-01T00:00:00.000Z' },
      { projection: 'last', key: 'x', field: 'row', expected: null, actual: { at: '1970-01-01T00:00:00.000Z' } },
    ]);
  });

  it('given a compared field that is not read, then the check refuses to run', () => {
    const check: TableCheck<string, number> = { table: 't', columns: ['k'], keyOf: (row) => String(row[0]), expected: new Map(), fields: [{ column: 'a', replayed: (v) => v }] };
    expect(() => compareTable(check, [])).toThrow(/a is not among the columns read/);
  });
});

describe('which charges the audit expects a row of', () => {
  const call = (requestId: string) => ({ workspace_id: ws, request_id: requestId, key_id: 'key_1', operation: 'domain' });
  const inTransaction = (e: AuditedEvent, transactionId: string): AuditedEvent => ({ ...e, transactionId });

  it('given a charge completed in its own transaction, then it expects no row; completed in a later one, or not yet, then a row', () => {
    const state = new ReplayState();
    state.apply(event('WorkspaceCreated', { workspace_id: ws, name: 'A', max_concurrency: 8 }), true);
    state.apply(event('CreditsGranted', { workspace_id: ws, amount: 10, reason: null }), true);
    const done = { outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null };
    state.apply(inTransaction(event('LookupCharged', { ...call('req_hit'), credits: 1 }), '7'), true);
    state.apply(inTransaction(event('LookupCompleted', { ...call('req_hit'), ...done }), '7'), true);
    state.apply(inTransaction(event('LookupCharged', { ...call('req_live'), credits: 1 }), '7'), true);
    state.apply(inTransaction(event('LookupCompleted', { ...call('req_live'), ...done }), '9'), true);
    state.apply(inTransaction(event('LookupCharged', { ...call('req_open'), credits: 1 }), '9'), true);
    // A later void of the hit: still no row.
    state.apply(event('LookupRefunded', { ...call('req_hit'), credits: 1, cause: 'service_unavailable' }), true);
    expect([...state.chargesWithoutRow]).toEqual(['req_hit']);
    expect(state.charges.get('req_hit')).toEqual({ credits: 1, refunded_credits: 1, settled: true });
  });
});
