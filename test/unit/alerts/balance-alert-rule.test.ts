import { describe, expect, it } from 'vitest';
import { decideBalanceAlert, type AlertState } from '../../../services/alerts/balance-alert-rule';

const armed: AlertState = { threshold: 100, armed: true };
const disarmed: AlertState = { threshold: 100, armed: false };

describe('decideBalanceAlert', () => {
  it('given an armed threshold, when a charge leaves the balance below it, then the alert fires once and disarms', () => {
    expect(decideBalanceAlert(armed, { kind: 'debit', balanceAfter: 99 })).toEqual({ next: disarmed, fire: true });
  });

  it('given a fired alert, when more charges follow below the threshold, then nothing fires (once per crossing)', () => {
    expect(decideBalanceAlert(disarmed, { kind: 'debit', balanceAfter: 50 })).toEqual({ next: disarmed, fire: false });
    expect(decideBalanceAlert(disarmed, { kind: 'debit', balanceAfter: 0 })).toEqual({ next: disarmed, fire: false });
  });

  it('given a fired alert, when a grant brings the balance back to the threshold or above, then it re-arms, and the next crossing fires again', () => {
    const rearmed = decideBalanceAlert(disarmed, { kind: 'credit', balanceAfter: 100 });
    expect(rearmed).toEqual({ next: armed, fire: false });
    expect(decideBalanceAlert(rearmed.next, { kind: 'debit', balanceAfter: 97 }).fire).toBe(true);
  });

  it('given a fired alert, when a refund or a grant leaves the balance still below, then it stays disarmed', () => {
    expect(decideBalanceAlert(disarmed, { kind: 'credit', balanceAfter: 99 })).toEqual({ next: disarmed, fire: false });
  });

  it('given an armed threshold, when a credit leaves the balance below it, then nothing fires (only a charge crosses downwards)', () => {
    expect(decideBalanceAlert(armed, { kind: 'credit', balanceAfter: 10 })).toEqual({ next: armed, fire: false });
  });

  it('given a charge that leaves the balance exactly at the threshold, then nothing fires (below means less than)', () => {
    expect(decideBalanceAlert(armed, { kind: 'debit', balanceAfter: 100 })).toEqual({ next: armed, fire: false });
  });

  it('given no threshold, when anything happens, then nothing fires', () => {
    const none: AlertState = { threshold: null, armed: true };
    expect(decideBalanceAlert(none, { kind: 'debit', balanceAfter: 0 })).toEqual({ next: none, fire: false });
  });
});
