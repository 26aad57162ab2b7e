import type { Sql, SqlExecutor } from '../eventstore/sql';
import { EVENT_COLUMNS, toRecorded, type EventRow } from '../eventstore/event-store';
import { UnknownWorkspaceError } from '../ledger/errors';
import { WORKSPACE_EVENT_TYPES } from '../ledger/workspace-state';
import type { KeyMode } from '../../contracts/events';
import { LEDGER_LINE_MODE, requireWorkspace, USAGE_ROW_MODE } from '../read-models/queries';
import type { LedgerEntry, WorkspaceResponse } from '../../contracts/http';
import { replayWorkspace } from './as-of';
import { statementOf, type Statement, type StatementLine } from './statement';

/** The finance reads: statements, balances at an instant, exports. Plain reads; the rules are pure (statement.ts, as-of.ts). */

const iso = (d: Date | string) => new Date(d).toISOString();

interface LineRow {
  position: string | number;
  workspace_id: string;
  recorded_at: Date | string;
  type: string;
  operation: string | null;
  request_id: string | null;
  key_id: string | null;
  credits: string | number;
  balance_after: string | number;
  event_hash: string | null;
}

const toLine = (r: LineRow): StatementLine => ({
  position: Number(r.position),
  recorded_at: iso(r.recorded_at),
  type: r.type,
  operation: r.operation,
  request_id: r.request_id,
  key_id: r.key_id,
  credits: Number(r.credits),
  balance_after: Number(r.balance_after),
  event_hash: r.event_hash,
});

/**
 * A ledger line with what ties it to its call (the operation, which a charge's and a refund's event
 * carry, a grant's not) and its event (the chain hash).
 */
const LINE_SELECT = `SELECT le.position, le.workspace_id, le.recorded_at, le.type, e.data->>'operation' AS operation, le.request_id, le.key_id, le.credits, le.balance_after,
                            e.metadata->>'hash' AS event_hash
                       FROM ledger_entries le
                       JOIN events e ON e.position = le.position`;

/**
 * The statement of `[from, to)`, read in one snapshot so the opening and the lines agree. Instants
 * go to SQL as text: the log records microseconds.
 */
export async function statement(sql: Sql, workspaceId: string, from: string, to: string, modes: readonly KeyMode[] = ['live']): Promise<{ statement: Statement; lines: StatementLine[] }> {
  return sql.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await requireWorkspace(tx, workspaceId);
    const { rows: opening } = await tx.query<{ balance: string }>(
      'SELECT coalesce(sum(credits), 0)::text AS balance FROM ledger_entries WHERE workspace_id = $1 AND recorded_at < $2::timestamptz',
      [workspaceId, from],
    );
    const { rows } = await tx.query<LineRow>(
      // A test call's lines (0 credits) only when asked for: the balances are the same either way.
      `${LINE_SELECT} WHERE le.workspace_id = $1 AND le.recorded_at >= $2::timestamptz AND le.recorded_at < $3::timestamptz
         AND ${LEDGER_LINE_MODE} = ANY($4::text[]) ORDER BY le.position`,
      [workspaceId, from, to, modes],
    );
    const lines = rows.map(toLine);
    return { statement: statementOf(workspaceId, { from, to }, Number(opening[0]!.balance), lines), lines };
  });
}

/**
 * The workspace and its ledger as they stood at `asOf` (inclusive), replayed from its stream. To
 * the millisecond, as the ledger view records them (events of older logs carry microseconds).
 */
export async function workspaceAt(sql: SqlExecutor, workspaceId: string, asOf: string): Promise<{ workspace: WorkspaceResponse; ledger: LedgerEntry[] }> {
  const { rows } = await sql.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE stream = $1 AND type = ANY($2::text[]) AND date_trunc('milliseconds', recorded_at) <= $3::timestamptz ORDER BY version`,
    [`workspace-${workspaceId}`, WORKSPACE_EVENT_TYPES, asOf],
  );
  const { workspace, ledger } = replayWorkspace(rows.map(toRecorded));
  // Unknown then: not created yet, or never.
  if (!workspace) throw new UnknownWorkspaceError(workspaceId);
  return { workspace, ledger };
}

export interface ExportLine extends StatementLine {
  workspace_id: string;
}

/** Every workspace's ledger lines recorded in `[from, to)`, by position, paged; live calls' only. */
export async function ledgerExportPage(sql: SqlExecutor, q: { from: string; to: string; after?: number; limit: number }): Promise<{ data: ExportLine[]; next: number | null }> {
  const { rows } = await sql.query<LineRow>(
    // Finance exports: live lines only (a test call's are 0 credits and no business of billing).
    `${LINE_SELECT} WHERE le.recorded_at >= $1::timestamptz AND le.recorded_at < $2::timestamptz AND le.position > $3
       AND ${LEDGER_LINE_MODE} = 'live' ORDER BY le.position LIMIT $4`,
    [q.from, q.to, q.after ?? 0, q.limit + 1],
  );
  const data = rows.slice(0, q.limit).map((r) => ({ workspace_id: r.workspace_id, ...toLine(r) }));
  return { data, next: rows.length > q.limit ? data.at(-1)!.position : null };
}

/** Every workspace's usage rows of the UTC days `[from, to)`, live keys' only. */
export async function usageExport(sql: SqlExecutor, q: { from: string; to: string }) {
  const { rows } = await sql.query<{ workspace_id: string; day: string; key_id: string; operation: string; calls: string; credits_charged: string; credits_refunded: string; errors: string }>(
    `SELECT u.workspace_id, u.day::text AS day, u.key_id, u.operation, u.calls, u.credits_charged, u.credits_refunded, u.errors
       FROM usage_daily u LEFT JOIN api_keys k ON k.id = u.key_id
      WHERE ${USAGE_ROW_MODE} = 'live' AND u.day >= ($1::timestamptz AT TIME ZONE 'UTC')::date AND u.day < ($2::timestamptz AT TIME ZONE 'UTC')::date
      ORDER BY u.day, u.workspace_id, u.key_id, u.operation`,
    [q.from, q.to],
  );
  return rows.map((r) => ({
    workspace_id: r.workspace_id,
    day: String(r.day),
    key_id: r.key_id,
    operation: r.operation,
    calls: Number(r.calls),
    credits_charged: Number(r.credits_charged),
    credits_refunded: Number(r.credits_refunded),
    errors: Number(r.errors),
  }));
}
