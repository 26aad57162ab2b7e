// `npm run admin -- export ledger` against the admin API (app.inject), files read back by DuckDB.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId } from '../../services/common/ids';
import { run } from '../../services/console/cli';
import { ADMIN_TOKEN, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
let dir: string;
beforeAll(async () => {
  t = await startRouteApp();
  dir = await mkdtemp(join(tmpdir(), 'ledger-export-'));
}, 60_000);
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The CLI's fetch, answered by the app in process. */
const viaInject: typeof fetch = async (input, init) => {
  const url = new URL(String(input));
  const answer = await t.app.inject({ method: (init?.method ?? 'GET') as 'GET', url: url.pathname + url.search, headers: init?.headers as Record<string, string> });
  return new Response(answer.body, { status: answer.statusCode, headers: answer.headers as Record<string, string> });
};

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    env: { ADMIN_TOKEN },
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    fetch: viaInject,
  });
  return { code, stdout, stderr };
}

async function duck(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('export ledger', () => {
  it('writes the ledger and usage as parquet and CSV that DuckDB reads, with the totals of the statement', async () => {
    const ws = await t.workspaces.create({ name: 'exported', credits: 40 });
    const key = await t.keys.create(ws.id, {});
    for (const [operation, credits, owed] of [['company', 1, 0], ['person_name', 3, 2], ['domain', 2, 2]] as const) {
      const requestId = newRequestId();
      const call = { workspaceId: ws.id, requestId, keyId: key.id, operation };
      await t.ledger.charge({ ...call, credits });
      await t.ledger.settle({
        ...call,
        refund: owed > 0 ? { owed, cause: 'not_found_price' } : undefined,
        completed: { outcome: owed > 0 ? 'not_found' : 'success', cache_status: 'MISS', credits_charged: credits - owed, error_code: owed > 0 ? 'not_found' : null },
      });
    }
    const period = ['--from', '2000-01-01T00:00:00Z', '--to', '2999-01-01T00:00:00Z'];
    const statement = JSON.parse((await cli('statement', ws.id, ...period, '--json')).stdout);

    const parquet = await cli('export', 'ledger', ...period, '--format', 'parquet', '--out', join(dir, 'p'));
    expect(parquet.code, parquet.stderr).toBe(0);
    expect(parquet.stdout).toContain('ledger.parquet');
    const [fromParquet] = await duck(
      `SELECT sum(credits)::BIGINT AS net, count(*)::INT AS lines, sum(CASE WHEN type = 'LookupCharged' THEN -credits ELSE 0 END)::BIGINT AS charged,
              min(recorded_at) IS NOT NULL AS timed
         FROM '${join(dir, 'p', 'ledger.parquet')}' WHERE workspace_id = '${ws.id}'`,
    );
    expect(fromParquet).toEqual({ net: String(statement.closing_balance - statement.opening_balance), lines: statement.entries, charged: String(statement.charged), timed: true });

    const csv = await cli('export', 'ledger', ...period, '--format', 'csv', '--out', join(dir, 'c'));
    expect(csv.code, csv.stderr).toBe(0);
    const [fromCsv] = await duck(`SELECT sum(credits)::BIGINT AS net, count(*)::INT AS lines FROM read_csv('${join(dir, 'c', 'ledger.csv')}') WHERE workspace_id = '${ws.id}'`);
    expect(fromCsv).toEqual({ net: String(statement.closing_balance), lines: statement.entries });
    const usage = await duck(`SELECT count(*)::INT AS n FROM '${join(dir, 'p', 'usage.parquet')}'`);
    expect(usage).toHaveLength(1);
  });
});
