/**
 * Statements: what a workspace's ledger did over a half-open period `[from, to)` of recording
 * time. Pure: from the period's ledger lines and the opening balance (the sum of every line
 * recorded before `from`), so adjacent periods chain (one's closing is the next one's opening)
 * and `opening + granted − charged + refunded = closing` holds exactly, line by line.
 */

import { ApiError } from '../../contracts/errors';
import { STATEMENT_CSV_COLUMNS } from '../../contracts/http';
import { toCsv } from '../common/csv';

/** One ledger entry, as it goes to the statement's CSV: each is one event of the log. */
export interface StatementLine {
  /** The event's log position. */
  position: number;
  recorded_at: string;
  type: string;
  /** The operation of the call a charge or refund belongs to; null for a grant. */
  operation: string | null;
  request_id: string | null;
  key_id: string | null;
  /** Signed: positive adds to the balance, negative draws on it. */
  credits: number;
  balance_after: number;
  /** The event's ledger-chain hash (services/ledger/ledger-chain.ts). */
  event_hash: string | null;
}

export interface OperationTotals {
  operation: string;
  /** Calls charged (LookupCharged lines). */
  calls: number;
  charged: number;
  refunded: number;
}

export interface Statement {
  workspace_id: string;
  from: string;
  to: string;
  opening_balance: number;
  credits_granted: number;
  charged: number;
  refunded: number;
  closing_balance: number;
  /** Calls charged in the period (a free call that charged nothing is not in the ledger). */
  calls: number;
  by_operation: OperationTotals[];
  /** Ledger lines in the period, and the log positions of the first and last. */
  entries: number;
  first_position: number | null;
  last_position: number | null;
}

/** Thrown for a line the statement cannot place: the ledger holds nothing else. */
export class UnknownLedgerLineError extends Error {}

/** `period`: the instants as asked (kept as given: the log records microseconds, a Date holds milliseconds). */
export function statementOf(workspaceId: string, period: { from: string; to: string }, openingBalance: number, lines: readonly StatementLine[]): Statement {
  let granted = 0;
  let charged = 0;
  let refunded = 0;
  let calls = 0;
  const byOperation = new Map<string, OperationTotals>();
  const totalsOf = (operation: string | null) => {
    const name = operation ?? 'unknown';
    let totals = byOperation.get(name);
    if (!totals) byOperation.set(name, (totals = { operation: name, calls: 0, charged: 0, refunded: 0 }));
    return totals;
  };
  for (const line of lines) {
    switch (line.type) {
      case 'CreditsGranted':
        granted += line.credits;
        break;
      case 'LookupCharged': {
        const totals = totalsOf(line.operation);
        charged -= line.credits;
        totals.charged -= line.credits;
        totals.calls++;
        calls++;
        break;
      }
      case 'LookupRefunded':
        refunded += line.credits;
        totalsOf(line.operation).refunded += line.credits;
        break;
      default:
        throw new UnknownLedgerLineError(`ledger line of type ${line.type} at position ${line.position}`);
    }
  }
  return {
    workspace_id: workspaceId,
    from: period.from,
    to: period.to,
    opening_balance: openingBalance,
    credits_granted: granted,
    charged,
    refunded,
    closing_balance: openingBalance + granted - charged + refunded,
    calls,
    by_operation: [...byOperation.values()].sort((a, b) => a.operation.localeCompare(b.operation)),
    entries: lines.length,
    first_position: lines[0]?.position ?? null,
    last_position: lines.at(-1)?.position ?? null,
  };
}


const statementCsvRow = (l: StatementLine) => [l.position, l.recorded_at, l.type, l.operation, l.request_id, l.key_id, l.credits, l.balance_after, l.event_hash];

/** The statement's CSV (admin API and console alike): one line per ledger entry of the period, with its log position and chain hash. */
export const statementCsv = (lines: readonly StatementLine[]): string => toCsv(STATEMENT_CSV_COLUMNS, lines.map(statementCsvRow));

/** `statement-<workspace>-<from>-<to>.csv`, without the colons of the instants (not allowed in file names everywhere). */
export const statementCsvFileName = (workspaceId: string, period: { from: string; to: string }): string =>
  `statement-${workspaceId}-${period.from}-${period.to}.csv`.replace(/:/g, '');

/** `[from, to)` as asked (text: the log records microseconds); a backwards period is the caller's mistake. */
export function forwardPeriod(query: { from: string; to: string }): { from: string; to: string } {
  if (new Date(query.to) < new Date(query.from)) {
    throw new ApiError('invalid_request', { details: [{ field: 'to', issue: 'too_small', message: '`to` must not be before `from`.' }] });
  }
  return { from: query.from, to: query.to };
}
