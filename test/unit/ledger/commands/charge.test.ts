import { describe, expect, it } from 'vitest';
import { decideCharge } from '../../../../services/ledger/commands/charge';
import { UnknownWorkspaceError } from '../../../../services/ledger/errors';
import { evolveWorkspaceThrough } from '../../../../services/ledger/workspace-state';
import { call, shape, workspace } from './support';

const charge = (credits: number) => ({ ...call, credits });

describe('charge', () => {
  it('given a balance that covers the price, when charging, then LookupCharged is appended and the balance drops by the price', () => {
    const decision = decideCharge(workspace(10), charge(4));
    expect(shape(decision.events, 'credits', 'request_id')).toEqual([['LookupCharged', 4, call.requestId]]);
    expect(decision.result).toEqual({ kind: 'charged', balanceAfter: 6 });
  });

  it('given a balance exactly equal to the price, when charging, then it is charged down to zero', () => {
    expect(decideCharge(workspace(3), charge(3)).result).toEqual({ kind: 'charged', balanceAfter: 0 });
  });

  it('given a balance below the price, when charging, then it is refused with nothing appended', () => {
    expect(decideCharge(workspace(3), charge(4))).toEqual({ events: [], result: { kind: 'insufficient_credits', balance: 3 } });
    expect(decideCharge(workspace(0), charge(1))).toEqual({ events: [], result: { kind: 'insufficient_credits', balance: 0 } });
  });

  it('given any balance, when charging a free call, then it passes at no cost', () => {
    expect(decideCharge(workspace(0), charge(0)).result).toEqual({ kind: 'charged', balanceAfter: 0 });
  });

  it('given a cache hit known at charge time, when charging, then the completion is recorded with the charge', () => {
    const decision = decideCharge(workspace(5), { ...charge(1), completed: { outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null } });
    expect(shape(decision.events, 'request_id')).toEqual([['LookupCharged', call.requestId], ['LookupCompleted', call.requestId]]);
  });

  it('given no workspace, when charging, then it fails with UnknownWorkspaceError', () => {
    expect(() => decideCharge(undefined, charge(1))).toThrow(UnknownWorkspaceError);
  });

  it('given a negative or fractional price, when charging, then it is a programming error', () => {
    expect(() => decideCharge(workspace(10), charge(-1))).toThrow(RangeError);
    expect(() => decideCharge(workspace(10), charge(1.5))).toThrow(RangeError);
  });

  it('given any balance and price, then a charge never leaves the balance negative, and its events evolve to the answered balance', () => {
    for (let balance = 0; balance <= 12; balance++) {
      for (let price = 0; price <= 12; price++) {
        const decision = decideCharge(workspace(balance), charge(price));
        if (decision.result.kind === 'charged') {
          expect(decision.result.balanceAfter).toBeGreaterThanOrEqual(0);
          expect(decision.result.balanceAfter + price).toBe(balance);
          expect(evolveWorkspaceThrough(workspace(balance), decision.events)!.balance).toBe(decision.result.balanceAfter);
        } else expect(price).toBeGreaterThan(balance);
      }
    }
  });
});
