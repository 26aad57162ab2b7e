import type { AuditJobResponse } from '../../contracts/http';

/** Pure: plain-text renderings of admin API answers for a terminal. */

type Cell = string | number | boolean | null | undefined;

const show = (value: Cell) => (value === null || value === undefined ? '-' : String(value));

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(headers: string[], rows: Cell[][]): string {
  const cells = rows.map((row) => row.map(show));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.some((row) => typeof row[i] === 'number') && rows.every((row) => typeof row[i] === 'number' || row[i] === null || row[i] === undefined));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** `field  value` lines for one object. */
export function fields(record: Record<string, unknown>): string {
  const width = Math.max(0, ...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${typeof v === 'object' && v !== null ? JSON.stringify(v) : show(v as Cell)}`)
    .join('\n');
}

/** Seconds with one decimal, for the waiting line. */
export const elapsed = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

const cellOf = (value: unknown): Cell => (value === null || value === undefined || typeof value !== 'object' ? (value as Cell) : JSON.stringify(value));

export interface AuditReportLike {
  ok: boolean;
  events: number;
  workspaces: number;
  mismatches: ReadonlyArray<object>;
  /** Absent from servers older than the ledger chains. */
  chains?: { checked: number; broken: ReadonlyArray<object> };
}

export function auditReport(report: AuditReportLike): string {
  const broken = report.chains?.broken ?? [];
  const chains = report.chains ? `, ${report.chains.checked} ledger chains` : '';
  const head = report.ok
    ? `audit ok: ${report.events} events, ${report.workspaces} workspaces${chains}, every projection matches the log`
    : `audit FAILED: ${report.mismatches.length} mismatch${report.mismatches.length === 1 ? '' : 'es'}${report.chains ? `, ${broken.length} broken ledger chain${broken.length === 1 ? '' : 's'}` : ''} (${report.events} events, ${report.workspaces} workspaces)`;
  const parts = [head];
  if (broken.length > 0) parts.push(`first broken link of each broken ledger chain:\n${rowsTable(broken)}`);
  if (report.mismatches.length > 0) parts.push(rowsTable(report.mismatches));
  return parts.join('\n');
}

/** Columns from the answer itself, so a change of its shape still prints in full. */
function rowsTable(objects: ReadonlyArray<object>): string {
  const rows = objects as ReadonlyArray<Record<string, unknown>>;
  const columns = [...new Set(rows.flatMap((m) => Object.keys(m)))];
  return table(columns.map((c) => c.toUpperCase()), rows.map((m) => columns.map((c) => cellOf(m[c]))));
}

/** One line of an audit job's progress, for stderr. */
export function auditProgressLine(job: AuditJobResponse): string {
  const head = `audit ${job.id}:`;
  const took = elapsed(job.elapsed_ms);
  if (job.state === 'done') return `${head} done, ${job.events_read} events read in ${took} (${job.events_per_second} events/s)`;
  if (job.state === 'failed') return `${head} FAILED after ${took}: ${job.error}`;
  if (job.phase === 'catching_up' || job.head_position === null) return `${head} catching the usage projection up to the end of the log, ${took}`;
  const read = `${job.events_read} events read, ${(job.percent ?? 0).toFixed(1)}% of the log (position ${job.position} of ${job.head_position}), ${job.events_per_second} events/s, ${took}`;
  return job.phase === 'comparing' ? `${head} ${read}; comparing the projections` : `${head} ${read}`;
}
