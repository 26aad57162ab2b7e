import { describe, expect, it } from 'vitest';
import { decideVoid } from '../../../../services/ledger/commands/void-charge';
import { UnknownWorkspaceError } from '../../../../services/ledger/errors';
import { call, locked, shape, workspace } from './support';

const voidCall = { ...call, cacheStatus: 'MISS' as const };
const charged = (credits: number, refundedCredits: number | null, settled: boolean) => ({ credits, refundedCredits, settled });

describe('void a charge', () => {
  it('given no charge (it never committed), when voiding, then nothing is appended', () => {
    expect(decideVoid(locked(workspace(5)), voidCall)).toEqual({ events: [], result: { refunded: 0, kept: 0 } });
  });

  it('given a charge with no outcome recorded, when voiding, then all of it comes back and the outcome is recorded', () => {
    const decision = decideVoid(locked(workspace(5), charged(4, null, false)), voidCall);
    expect(shape(decision.events, 'credits', 'cause', 'error_code', 'cache_status')).toEqual([
      ['LookupRefunded', 4, 'service_unavailable', undefined, undefined],
      ['LookupCompleted', undefined, undefined, 'service_unavailable', 'MISS'],
    ]);
    expect(decision.result).toEqual({ refunded: 4, kept: 0 });
  });

  it('given a charge settled as a success (its commit was not confirmed), when voiding, then all of it comes back and nothing more is recorded', () => {
    const decision = decideVoid(locked(workspace(5), charged(3, null, true)), voidCall);
    expect(shape(decision.events, 'credits')).toEqual([['LookupRefunded', 3]]);
    expect(decision.result).toEqual({ refunded: 3, kept: 0 });
  });

  it('given a charge already refunded whole, when voiding, then nothing happens twice', () => {
    expect(decideVoid(locked(workspace(5), charged(1, 1, true)), voidCall)).toEqual({ events: [], result: { refunded: 0, kept: 0 } });
  });

  it('given a charge refunded but with no outcome recorded, when voiding, then only the outcome is recorded', () => {
    expect(shape(decideVoid(locked(workspace(5), charged(2, 2, false)), voidCall).events)).toEqual([['LookupCompleted']]);
  });

  it('given a not-found settled with a partial refund, when voiding, then its one refund is spent and the rest is kept', () => {
    expect(decideVoid(locked(workspace(5), charged(3, 2, true)), voidCall)).toEqual({ events: [], result: { refunded: 0, kept: 1 } });
  });

  it('given no workspace, when voiding, then it fails with UnknownWorkspaceError', () => {
    expect(() => decideVoid(locked(undefined), voidCall)).toThrow(UnknownWorkspaceError);
  });
});
