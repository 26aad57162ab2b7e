import { describe, expect, it } from 'vitest';
import { decideCharge, decideRefund } from '../../../services/ledger/rules';

describe('decideCharge', () => {
  it('given a balance that covers the price, when charging, then the price is taken and the balance drops by it', () => {
    expect(decideCharge(10, 4)).toEqual({ kind: 'charge', credits: 4, balanceAfter: 6 });
  });

  it('given a balance exactly equal to the price, when charging, then it is charged down to zero', () => {
    expect(decideCharge(3, 3)).toEqual({ kind: 'charge', credits: 3, balanceAfter: 0 });
  });

  it('given a balance below the price, when charging, then it is refused with the balance unchanged', () => {
    expect(decideCharge(3, 4)).toEqual({ kind: 'insufficient_credits', balance: 3 });
  });

  it('given an empty balance, when charging a priced call, then it is refused', () => {
    expect(decideCharge(0, 1)).toEqual({ kind: 'insufficient_credits', balance: 0 });
  });

  it('given any balance, when charging a free call, then it passes at no cost', () => {
    expect(decideCharge(0, 0)).toEqual({ kind: 'charge', credits: 0, balanceAfter: 0 });
  });

  it('given a negative or fractional price, when charging, then it is a programming error', () => {
    expect(() => decideCharge(10, -1)).toThrow(RangeError);
    expect(() => decideCharge(10, 1.5)).toThrow(RangeError);
  });

  it('given any balance and price, then a charge never leaves the balance negative', () => {
    for (let balance = 0; balance <= 12; balance++) {
      for (let price = 0; price <= 12; price++) {
        const decision = decideCharge(balance, price);
        if (decision.kind === 'charge') {
          expect(decision.balanceAfter).toBeGreaterThanOrEqual(0);
          expect(decision.balanceAfter + decision.credits).toBe(balance);
        } else expect(price).toBeGreaterThan(balance);
      }
    }
  });
});

describe('decideRefund', () => {
  it('given an unrefunded charge, when a failure owes the whole charge, then the whole charge comes back', () => {
    expect(decideRefund({ credits: 4, refundedCredits: null }, 4)).toEqual({ kind: 'refund', credits: 4 });
  });

  it('given an unrefunded charge, when a cheaper not-found owes the difference, then only the difference comes back', () => {
    // person by name: 3 charged up front, a not-found costs 1
    expect(decideRefund({ credits: 3, refundedCredits: null }, 2)).toEqual({ kind: 'refund', credits: 2 });
  });

  it('given an already refunded charge, when asked to refund again, then nothing comes back', () => {
    expect(decideRefund({ credits: 4, refundedCredits: 4 }, 4)).toEqual({ kind: 'nothing' });
  });

  it('given a charge refunded with zero credits recorded, when asked again, then it still counts as refunded', () => {
    expect(decideRefund({ credits: 4, refundedCredits: 0 }, 4)).toEqual({ kind: 'nothing' });
  });

  it('given a charge, when more is owed than was charged, then no more than the charge comes back', () => {
    expect(decideRefund({ credits: 1, refundedCredits: null }, 5)).toEqual({ kind: 'refund', credits: 1 });
  });

  it('given no charge for the request, when asked to refund, then nothing comes back', () => {
    expect(decideRefund(undefined, 4)).toEqual({ kind: 'nothing' });
  });

  it('given a charge, when nothing is owed, then nothing comes back', () => {
    expect(decideRefund({ credits: 4, refundedCredits: null }, 0)).toEqual({ kind: 'nothing' });
    expect(decideRefund({ credits: 4, refundedCredits: null }, -2)).toEqual({ kind: 'nothing' });
  });

  it('given any charge and sequence of refund requests, then the total refunded is at most the charge and happens once', () => {
    for (let charged = 0; charged <= 6; charged++) {
      for (const owedSequence of [[1], [charged], [charged + 3, 1], [2, 2, 2], [0, charged]]) {
        let state = { credits: charged, refundedCredits: null as number | null };
        let refunds = 0;
        let total = 0;
        for (const owed of owedSequence) {
          const decision = decideRefund(state, owed);
          if (decision.kind === 'refund') {
            refunds++;
            total += decision.credits;
            state = { ...state, refundedCredits: decision.credits };
          }
        }
        expect(refunds).toBeLessThanOrEqual(1);
        expect(total).toBeLessThanOrEqual(charged);
      }
    }
  });
});
