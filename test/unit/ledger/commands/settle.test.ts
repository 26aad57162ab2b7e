import { describe, expect, it } from 'vitest';
import { newEvent, streams } from '../../../../contracts/events';
import { decideSettle, refundDue, type SettleCommand } from '../../../../services/ledger/commands/settle';
import { UnknownWorkspaceError } from '../../../../services/ledger/errors';
import { call, locked, shape, workspace } from './support';

const failed = (owed: number): SettleCommand => ({
  ...call,
  refund: { owed, cause: 'upstream_error' },
  completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'upstream_error' },
});
const success: SettleCommand = { ...call, completed: { outcome: 'success', cache_status: 'MISS', credits_charged: 4, error_code: null } };
const charged = (credits: number, refundedCredits: number | null = null, settled = false) => ({ credits, refundedCredits, settled });

describe('refundDue', () => {
  it('given an unrefunded charge, when a failure owes the whole charge, then the whole charge comes back', () => {
    expect(refundDue(charged(4), 4)).toBe(4);
  });

  it('given an unrefunded charge, when a cheaper not-found owes the difference, then only the difference comes back', () => {
    // person by name: 3 charged up front, a not-found costs 1
    expect(refundDue(charged(3), 2)).toBe(2);
  });

  it('given an already refunded charge, or one refunded with zero credits, when asked again, then nothing comes back', () => {
    expect(refundDue(charged(4, 4), 4)).toBe(0);
    expect(refundDue(charged(4, 0), 4)).toBe(0);
  });

  it('given a charge, when more is owed than was charged, then no more than the charge comes back', () => {
    expect(refundDue(charged(1), 5)).toBe(1);
  });

  it('given no charge for the request, or nothing owed, then nothing comes back', () => {
    expect(refundDue(undefined, 4)).toBe(0);
    expect(refundDue(charged(4), 0)).toBe(0);
    expect(refundDue(charged(4), -2)).toBe(0);
  });
});

describe('settle', () => {
  it('given a charge of 4, when the lookup failed, then it is refunded and completed, and the balance is back', () => {
    const decision = decideSettle(locked(workspace(6), charged(4)), failed(4));
    expect(shape(decision.events, 'credits', 'cause', 'error_code')).toEqual([
      ['LookupRefunded', 4, 'upstream_error', undefined],
      ['LookupCompleted', undefined, undefined, 'upstream_error'],
    ]);
    expect(decision.result).toEqual({ balance: 10, refunded: 4 });
  });

  it('given a success, when settling, then only the completion is recorded and the charge row is not needed', () => {
    const decision = decideSettle(locked(workspace(6)), success);
    expect(shape(decision.events, 'outcome')).toEqual([['LookupCompleted', 'success']]);
    expect(decision.result).toEqual({ balance: 6, refunded: 0 });
  });

  it('given a charge already refunded, when settled again, then it completes again without a second refund', () => {
    const decision = decideSettle(locked(workspace(10), charged(4, 4, true)), failed(4));
    expect(shape(decision.events)).toEqual([['LookupCompleted']]);
    expect(decision.result).toEqual({ balance: 10, refunded: 0 });
  });

  it('given what a live fetch learned, when settling, then its events go to their own streams', () => {
    const fetched = newEvent('ProfileNotFound', { kind: 'company', alias: 'ghost', code: 'not_found', reason: 'no_company', fetched_at: new Date(0).toISOString() });
    const decision = decideSettle(locked(workspace(1)), { ...success, entityEvents: [{ stream: streams.notFound('ghost'), event: fetched }] });
    expect(decision.entityEvents).toEqual([{ stream: 'notfound-ghost', event: fetched }]);
  });

  it('given a recovery of a charge settled meanwhile, or of no charge, when settling only if unsettled, then nothing is appended', () => {
    expect(decideSettle(locked(workspace(3), charged(4, null, true)), { ...failed(4), onlyIfUnsettled: true })).toEqual({ events: [], result: { balance: 3, refunded: 0 } });
    expect(decideSettle(locked(workspace(3)), { ...failed(4), onlyIfUnsettled: true })).toEqual({ events: [], result: { balance: 3, refunded: 0 } });
  });

  it('given a recovery of an unsettled charge, when settling only if unsettled, then it is refunded and completed', () => {
    expect(decideSettle(locked(workspace(3), charged(4)), { ...failed(Number.MAX_SAFE_INTEGER), onlyIfUnsettled: true }).result).toEqual({ balance: 7, refunded: 4 });
  });

  it('given no workspace, when settling, then it fails with UnknownWorkspaceError', () => {
    expect(() => decideSettle(locked(undefined), success)).toThrow(UnknownWorkspaceError);
  });

  it('given any charge and sequence of settles, then the total refunded is at most the charge and happens once', () => {
    for (let credits = 0; credits <= 6; credits++) {
      for (const owedSequence of [[1], [credits], [credits + 3, 1], [2, 2, 2], [0, credits]]) {
        let charge = charged(credits);
        let refunds = 0;
        let total = 0;
        for (const owed of owedSequence) {
          const { result } = decideSettle(locked(workspace(0), charge), failed(owed));
          if (result.refunded > 0) {
            refunds++;
            total += result.refunded;
            charge = { ...charge, refundedCredits: result.refunded };
          }
        }
        expect(refunds).toBeLessThanOrEqual(1);
        expect(total).toBeLessThanOrEqual(credits);
      }
    }
  });
});
