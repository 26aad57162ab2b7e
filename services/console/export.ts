import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { LedgerExportLine, UsageExportResponse } from '../../contracts/http';
import { toCsv } from '../common/csv';

/**
 * `export ledger`: the ledger and usage of a period as files DuckDB, pandas or a spreadsheet read
 * directly. Parquet columns are typed (INT64 money, DATE days, TIMESTAMP instants adjusted to
 * UTC, so DuckDB and pandas read an instant, not a wall-clock time); CSV has a header line.
 */

type UsageRow = UsageExportResponse['data'][number];
export type ExportFormat = 'parquet' | 'csv';

interface Column<R> {
  name: string;
  type: 'STRING' | 'INT64' | 'TIMESTAMP' | 'DATE';
  of: (row: R) => string | number | null;
}

const LEDGER_COLUMNS: Column<LedgerExportLine>[] = [
  { name: 'workspace_id', type: 'STRING', of: (r) => r.workspace_id },
  { name: 'position', type: 'INT64', of: (r) => r.position },
  { name: 'recorded_at', type: 'TIMESTAMP', of: (r) => r.recorded_at },
  { name: 'type', type: 'STRING', of: (r) => r.type },
  { name: 'operation', type: 'STRING', of: (r) => r.operation },
  { name: 'request_id', type: 'STRING', of: (r) => r.request_id },
  { name: 'key_id', type: 'STRING', of: (r) => r.key_id },
  { name: 'credits', type: 'INT64', of: (r) => r.credits },
  { name: 'balance_after', type: 'INT64', of: (r) => r.balance_after },
  { name: 'event_hash', type: 'STRING', of: (r) => r.event_hash },
];

const USAGE_COLUMNS: Column<UsageRow>[] = [
  { name: 'workspace_id', type: 'STRING', of: (r) => r.workspace_id },
  { name: 'day', type: 'DATE', of: (r) => r.day },
  { name: 'key_id', type: 'STRING', of: (r) => r.key_id },
  { name: 'operation', type: 'STRING', of: (r) => r.operation },
  { name: 'calls', type: 'INT64', of: (r) => r.calls },
  { name: 'credits_charged', type: 'INT64', of: (r) => r.credits_charged },
  { name: 'credits_refunded', type: 'INT64', of: (r) => r.credits_refunded },
  { name: 'errors', type: 'INT64', of: (r) => r.errors },
];

type SchemaElement = NonNullable<Parameters<typeof parquetWriteBuffer>[0]['schema']>[number];

/** hyparquet-writer's own TIMESTAMP is not marked UTC-adjusted and it has no DATE: both spelled out here. */
function schemaElement(c: Column<unknown>): SchemaElement {
  const repetition_type = 'OPTIONAL';
  switch (c.type) {
    case 'STRING':
      return { name: c.name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type };
    case 'INT64':
      return { name: c.name, type: 'INT64', repetition_type };
    case 'DATE':
      return { name: c.name, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' }, repetition_type };
    case 'TIMESTAMP':
      return { name: c.name, type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' }, repetition_type };
  }
}

function parquetValue(type: Column<unknown>['type'], v: string | number): string | bigint | Date {
  switch (type) {
    case 'INT64':
      return BigInt(v);
    case 'TIMESTAMP':
      return new Date(v);
    case 'DATE':
      return new Date(`${v}T00:00:00Z`);
    case 'STRING':
      return String(v);
  }
}

function parquet<R>(columns: Column<R>[], rows: readonly R[]): Uint8Array {
  const columnData = columns.map((c) => ({
    name: c.name,
    data: rows.map((row) => {
      const v = c.of(row);
      return v === null ? null : parquetValue(c.type, v);
    }),
  }));
  const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }, ...columns.map((c) => schemaElement(c as Column<unknown>))];
  return new Uint8Array(parquetWriteBuffer({ columnData, schema }));
}

const csv = <R>(columns: Column<R>[], rows: readonly R[]) => toCsv(columns.map((c) => c.name), rows.map((row) => columns.map((c) => c.of(row))));

/** Writes `ledger.<format>` and `usage.<format>` into `dir`; returns the paths. */
export async function writeExport(dir: string, format: ExportFormat, ledger: readonly LedgerExportLine[], usage: readonly UsageRow[]): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: [string, Uint8Array | string][] =
    format === 'parquet'
      ? [[`ledger.parquet`, parquet(LEDGER_COLUMNS, ledger)], [`usage.parquet`, parquet(USAGE_COLUMNS, usage)]]
      : [[`ledger.csv`, csv(LEDGER_COLUMNS, ledger)], [`usage.csv`, csv(USAGE_COLUMNS, usage)]];
  const paths: string[] = [];
  for (const [name, content] of files) {
    const path = join(dir, name);
    await writeFile(path, content);
    paths.push(path);
  }
  return paths;
}
