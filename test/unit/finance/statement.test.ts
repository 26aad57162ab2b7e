import { describe, expect, it } from 'vitest';
import { replayWorkspace } from '../../../services/finance/as-of';
import { ApiError } from '../../../contracts/errors';
import { forwardPeriod, statementCsv, statementCsvFileName, statementOf, UnknownLedgerLineError, type StatementLine } from '../../../services/finance/statement';
import type { RecordedEvent } from '../../../services/eventstore/types';

let position = 0;
const line = (type: string, credits: number, operation: string | null = null): StatementLine => ({
  position: ++position, recorded_at: '2025-06-01T00:00:00.000Z', type, operation, request_id: null, key_id: null, credits, balance_after: 0, event_hash: null,
});
const PERIOD = { from: '2025-06-01T00:00:00Z', to: '2025-07-01T00:00:00Z' };

describe('a statement', () => {
  it('given grants, charges and refunds, when totalled, then opening + granted − charged + refunded = closing, by operation too', () => {
    const lines = [
      line('CreditsGranted', 50),
      line('LookupCharged', -3, 'person_name'),
      line('LookupRefunded', 2, 'person_name'),
      line('LookupCharged', -1, 'company'),
      line('LookupCharged', 0, 'company'),
    ];
    const s = statementOf('ws_1', PERIOD, 10, lines);
    expect(s).toEqual({
      workspace_id: 'ws_1', from: PERIOD.from, to: PERIOD.to,
      opening_balance: 10, credits_granted: 50, charged: 4, refunded: 2, closing_balance: 58, calls: 3,
      by_operation: [
        { operation: 'company', calls: 2, charged: 1, refunded: 0 },
        { operation: 'person_name', calls: 1, charged: 3, refunded: 2 },
      ],
      entries: 5, first_position: lines[0]!.position, last_position: lines[4]!.position,
    });
  });

  it('given no lines, when totalled, then closing is opening and no position is named', () => {
    expect(statementOf('ws_1', PERIOD, 7, [])).toMatchObject({ opening_balance: 7, closing_balance: 7, calls: 0, by_operation: [], entries: 0, first_position: null, last_position: null });
  });

  it('given a line of a type the ledger does not hold, when totalled, then it refuses rather than drop it', () => {
    expect(() => statementOf('ws_1', PERIOD, 0, [line('LimitsChanged', 0)])).toThrow(UnknownLedgerLineError);
  });
});

describe("a statement's period and CSV", () => {
  it('given a period that runs forward or is empty, when checked, then it is kept as asked; given one that runs backwards, then it is refused on `to`', () => {
    expect(forwardPeriod(PERIOD)).toEqual(PERIOD);
    expect(forwardPeriod({ from: PERIOD.from, to: PERIOD.from })).toEqual({ from: PERIOD.from, to: PERIOD.from });
    const backwards = () => forwardPeriod({ from: PERIOD.to, to: PERIOD.from });
    expect(backwards).toThrow(ApiError);
    expect(backwards).toThrow(expect.objectContaining({ code: 'invalid_request', details: [expect.objectContaining({ field: 'to', issue: 'too_small' })] }));
  });

  it('given lines, when written as CSV, then one line each under the header; the file is named without colons', () => {
    const csv = statementCsv([{ ...line('LookupCharged', -3, 'person_name'), position: 7, request_id: 'req_1', key_id: 'key_1', balance_after: 5, event_hash: 'ab' }]);
    expect(csv).toBe('position,recorded_at,type,operation,request_id,key_id,credits,balance_after,event_hash\r\n7,2025-06-01T00:00:00.000Z,LookupCharged,person_name,req_1,key_1,-3,5,ab\r\n');
    expect(statementCsvFileName('ws_1', PERIOD)).toBe('statement-ws_1-2025-06-01T000000Z-2025-07-01T000000Z.csv');
  });
});

describe('a workspace replayed to an instant', () => {
  const at = new Date('2025-06-01T00:00:00Z');
  const event = (version: number, type: string, data: Record<string, unknown>, requestId?: string): RecordedEvent => ({
    position: 100 + version, stream: 'workspace-ws_1', version, type, data, metadata: requestId ? { request_id: requestId } : {}, transactionId: '1', recordedAt: at,
  });
  const call = { workspace_id: 'ws_1', request_id: 'req_1', key_id: 'key_1', operation: 'person_name' };

  it('given its events so far, when replayed, then the balance, the limits and each entry with its running balance', () => {
    const { workspace, ledger } = replayWorkspace([
      event(1, 'WorkspaceCreated', { workspace_id: 'ws_1', name: 'Acme', max_concurrency: 8 }),
      event(2, 'CreditsGranted', { workspace_id: 'ws_1', amount: 10, reason: null }),
      event(3, 'LimitsChanged', { workspace_id: 'ws_1', max_concurrency: 2 }),
      event(4, 'LookupCharged', { ...call, credits: 3 }, 'req_1'),
      event(5, 'LookupRefunded', { ...call, credits: 2, cause: 'not_found' }, 'req_1'),
    ]);
    expect(workspace).toEqual({ id: 'ws_1', name: 'Acme', balance: 9, max_concurrency: 2, created_at: at.toISOString() });
    expect(ledger.map((l) => [l.position, l.type, l.request_id, l.key_id, l.credits, l.balance_after])).toEqual([
      [102, 'CreditsGranted', null, null, 10, 10],
      [104, 'LookupCharged', 'req_1', 'key_1', -3, 7],
      [105, 'LookupRefunded', 'req_1', 'key_1', 2, 9],
    ]);
  });

  it('given nothing recorded yet, when replayed, then there is no workspace', () => {
    expect(replayWorkspace([])).toEqual({ workspace: undefined, ledger: [] });
  });
});
