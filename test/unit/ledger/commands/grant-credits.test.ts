import { describe, expect, it } from 'vitest';
import { BALANCE_MAX } from '../../../../contracts/http';
import { decideGrant } from '../../../../services/ledger/commands/grant-credits';
import { UnknownWorkspaceError } from '../../../../services/ledger/errors';
import { WS, shape, workspace } from './support';

const grant = (amount: number, reason?: string) => ({ workspaceId: WS, amount, reason });

describe('grant credits', () => {
  it('given a balance, when granting, then CreditsGranted is appended and the grant adds to it', () => {
    const decision = decideGrant(workspace(10), grant(5, 'trial'));
    expect(shape(decision.events, 'amount', 'reason')).toEqual([['CreditsGranted', 5, 'trial']]);
    expect(decision.result).toEqual({ kind: 'granted', balance: 15 });
  });

  it('given no reason, when granting, then the event says null', () => {
    expect(shape(decideGrant(workspace(0), grant(1)).events, 'reason')).toEqual([['CreditsGranted', null]]);
  });

  it('the most a balance may hold is 10^15, well below 2^53 where numbers stop being exact', () => {
    expect(BALANCE_MAX).toBe(1e15);
    expect(BALANCE_MAX).toBeLessThan(Number.MAX_SAFE_INTEGER);
  });

  it('given a grant that lands exactly on the maximum, then it is granted', () => {
    expect(decideGrant(workspace(BALANCE_MAX - 7), grant(7)).result).toEqual({ kind: 'granted', balance: BALANCE_MAX });
    expect(decideGrant(workspace(0), grant(BALANCE_MAX)).result).toEqual({ kind: 'granted', balance: BALANCE_MAX });
  });

  it('given a grant one past the maximum, then it is refused whole with nothing appended', () => {
    expect(decideGrant(workspace(BALANCE_MAX - 7), grant(8))).toEqual({ events: [], result: { kind: 'balance_too_big', balance: BALANCE_MAX - 7, max: BALANCE_MAX } });
    expect(decideGrant(workspace(BALANCE_MAX), grant(1)).result).toEqual({ kind: 'balance_too_big', balance: BALANCE_MAX, max: BALANCE_MAX });
  });

  it('given 2^53 - 1 to a balance of 10 (which would round), then it is refused', () => {
    expect(decideGrant(workspace(10), grant(Number.MAX_SAFE_INTEGER)).result).toEqual({ kind: 'balance_too_big', balance: 10, max: BALANCE_MAX });
  });

  it('given an amount that is no positive safe integer, when granting, then it is a programming error', () => {
    for (const amount of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) expect(() => decideGrant(workspace(0), grant(amount))).toThrow(RangeError);
  });

  it('given no workspace, when granting, then it fails with UnknownWorkspaceError', () => {
    expect(() => decideGrant(undefined, grant(1))).toThrow(UnknownWorkspaceError);
  });

  it('given any balance within bounds and any grant, then the result is exact and never past the maximum', () => {
    for (const balance of [0, 1, 999, BALANCE_MAX - 1_000_000_000_000, BALANCE_MAX - 1, BALANCE_MAX]) {
      for (const amount of [1, 2, 1_000_000_000_000, BALANCE_MAX]) {
        const { result } = decideGrant(workspace(balance), grant(amount));
        if (result.kind === 'granted') {
          expect(result.balance).toBeLessThanOrEqual(BALANCE_MAX);
          expect(BigInt(result.balance)).toBe(BigInt(balance) + BigInt(amount));
        } else expect(BigInt(balance) + BigInt(amount)).toBeGreaterThan(BigInt(BALANCE_MAX));
      }
    }
  });
});
