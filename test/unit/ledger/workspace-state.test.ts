import { describe, expect, it } from 'vitest';
import { evolveCharge } from '../../../services/ledger/charge-state';
import { balanceChange, evolveWorkspace, evolveWorkspaceThrough, opensOrMovesBalance, workspaceChangedBy } from '../../../services/ledger/workspace-state';

const WS = 'ws_a';
const e = (type: string, data: Record<string, unknown> = {}) => ({ type, data: { workspace_id: WS, request_id: 'req_1', ...data } });

describe('the balance change of an event (the one rule every reader takes it from)', () => {
  it.each([
    ['CreditsGranted', { amount: 10 }, 10],
    ['LookupCharged', { credits: 4 }, -4],
    ['LookupRefunded', { credits: 3 }, 3],
    ['WorkspaceCreated', { name: 'a', max_concurrency: 8 }, null],
    ['LimitsChanged', { max_concurrency: 2 }, null],
    ['LookupCompleted', { outcome: 'success' }, null],
  ] as const)('given %s %o, then the balance moves by %s', (type, data, change) => {
    expect(balanceChange(e(type, data))).toBe(change);
  });

  it('given a free charge, then the change is 0, never -0', () => {
    expect(Object.is(balanceChange(e('LookupCharged', { credits: 0 })), 0)).toBe(true);
  });

  it('given the events that open or move a balance, then they are the creation and the moves', () => {
    const types = ['WorkspaceCreated', 'CreditsGranted', 'LookupCharged', 'LookupRefunded', 'LimitsChanged', 'LookupCompleted', 'ApiKeyCreated'];
    expect(types.filter((type) => opensOrMovesBalance({ type }))).toEqual(['WorkspaceCreated', 'CreditsGranted', 'LookupCharged', 'LookupRefunded']);
  });
});

describe('the workspace state model', () => {
  it('given the life of a workspace, when evolved event by event, then balance and limit follow every move', () => {
    const state = evolveWorkspaceThrough(undefined, [
      e('WorkspaceCreated', { name: 'a', max_concurrency: 8 }),
      e('CreditsGranted', { amount: 10 }),
      e('LookupCharged', { credits: 4 }),
      e('LookupRefunded', { credits: 3 }),
      e('LimitsChanged', { max_concurrency: 2 }),
      e('LookupCompleted', { outcome: 'success' }),
      e('ApiKeyCreated', { key_id: 'key_1' }),
    ]);
    expect(state).toEqual({ balance: 9, maxConcurrency: 2 });
  });

  it('given no workspace, when an event other than its creation comes, then there is still none (the caller says whether that is an error)', () => {
    for (const type of ['CreditsGranted', 'LimitsChanged', 'LookupCharged', 'LookupRefunded']) {
      expect(evolveWorkspace(undefined, e(type, { amount: 1, credits: 1, max_concurrency: 1 }))).toBeUndefined();
    }
  });

  it('given a free charge, when evolved, then the balance is exactly as it was (0, never -0)', () => {
    expect(Object.is(evolveWorkspace({ balance: 0, maxConcurrency: 1 }, e('LookupCharged', { credits: 0 }))!.balance, 0)).toBe(true);
  });

  it('names the workspace of the events that change one, and of no other', () => {
    expect(['WorkspaceCreated', 'CreditsGranted', 'LimitsChanged', 'LookupCharged', 'LookupRefunded'].map((t) => workspaceChangedBy(e(t)))).toEqual(Array(5).fill(WS));
    expect(workspaceChangedBy(e('LookupCompleted'))).toBeUndefined();
    expect(workspaceChangedBy(e('ApiKeyRevoked'))).toBeUndefined();
  });
});

describe('the charge state model', () => {
  it('given a charge, when refunded and completed, then it carries its one refund and is settled', () => {
    let charge = evolveCharge(undefined, e('LookupCharged', { credits: 3 }));
    expect(charge).toEqual({ credits: 3, refundedCredits: null, settled: false });
    charge = evolveCharge(charge, e('LookupRefunded', { credits: 2 }));
    charge = evolveCharge(charge, e('LookupCompleted'));
    expect(charge).toEqual({ credits: 3, refundedCredits: 2, settled: true });
  });

  it('given no charge, when a refund or completion comes, then there is still none', () => {
    expect(evolveCharge(undefined, e('LookupRefunded', { credits: 2 }))).toBeUndefined();
    expect(evolveCharge(undefined, e('LookupCompleted'))).toBeUndefined();
  });
});
