// The Parquet files of `export ledger` carry their types (issue 28 §6): a day is a DATE, an
// instant a TIMESTAMP adjusted to UTC (DuckDB: TIMESTAMP WITH TIME ZONE; pandas: datetime64[ms, UTC]),
// money INT64. Read back from the files by hyparquet (the schema as written) and DuckDB (as read).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, describe, expect, it } from 'vitest';
import { writeExport } from '../../../services/console/export';

const dir = mkdtempSync(join(tmpdir(), 'lookup-export-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ledgerLine = {
  workspace_id: 'ws_1',
  position: 7,
  recorded_at: '2026-03-01T23:30:00.123Z',
  type: 'LookupCharged',
  operation: 'company',
  request_id: 'req_1',
  key_id: 'key_1',
  credits: -1,
  balance_after: 99,
  event_hash: null,
};
const usageRow = { workspace_id: 'ws_1', day: '2026-03-01', key_id: 'key_1', operation: 'company', calls: 2, credits_charged: 2, credits_refunded: 1, errors: 1 };

async function written(): Promise<{ ledger: string; usage: string }> {
  const paths = await writeExport(dir, 'parquet', [ledgerLine], [usageRow]);
  return { ledger: paths.find((p) => p.endsWith('ledger.parquet'))!, usage: paths.find((p) => p.endsWith('usage.parquet'))! };
}

function schemaOf(path: string): Record<string, unknown> {
  const bytes = readFileSync(path);
  const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return Object.fromEntries(metadata.schema.slice(1).map((e) => [e.name, { type: e.type, logical_type: e.logical_type }]));
}

async function duck(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('the Parquet export', () => {
  it('writes usage.day as DATE and the money as INT64', async () => {
    const { usage } = await written();
    expect(schemaOf(usage)).toMatchObject({
      day: { type: 'INT32', logical_type: { type: 'DATE' } },
      calls: { type: 'INT64' },
      credits_charged: { type: 'INT64' },
      workspace_id: { type: 'BYTE_ARRAY', logical_type: { type: 'STRING' } },
    });
    const types = Object.fromEntries((await duck(`DESCRIBE SELECT * FROM '${usage}'`)).map((r) => [r.column_name, r.column_type]));
    expect(types).toMatchObject({ day: 'DATE', calls: 'BIGINT', credits_refunded: 'BIGINT', key_id: 'VARCHAR' });
    expect(await duck(`SELECT day::VARCHAR AS day, calls::INT AS calls FROM '${usage}'`)).toEqual([{ day: '2026-03-01', calls: 2 }]);
  });

  it('writes ledger.recorded_at as a TIMESTAMP adjusted to UTC: an instant, read back unchanged', async () => {
    const { ledger } = await written();
    expect(schemaOf(ledger)).toMatchObject({
      recorded_at: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } },
      credits: { type: 'INT64' },
    });
    const types = Object.fromEntries((await duck(`DESCRIBE SELECT * FROM '${ledger}'`)).map((r) => [r.column_name, r.column_type]));
    expect(types).toMatchObject({ recorded_at: 'TIMESTAMP WITH TIME ZONE', position: 'BIGINT', event_hash: 'VARCHAR' });
    const [row] = await duck(`SELECT epoch_ms(recorded_at)::BIGINT AS ms, event_hash FROM '${ledger}'`);
    expect(row).toEqual({ ms: String(Date.parse(ledgerLine.recorded_at)), event_hash: null });
    const bytes = readFileSync(ledger);
    const [read] = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), columns: ['recorded_at'] });
    expect((read!.recorded_at as Date).toISOString()).toBe(ledgerLine.recorded_at);
  });
});
