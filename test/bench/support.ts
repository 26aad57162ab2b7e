// Shared by the benchmark scripts: server addresses, throw-away PostgreSQL databases, formatting.
// Kept free of vitest (test/support/servers.ts imports vitest's expect, which needs a runner).
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';

export const DATABASE_URL = process.env.DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379';

/** Seconds per measured run; BENCH_SECONDS overrides (e.g. 3 for a quick look). */
export function benchSeconds(fallback: number, variable = 'BENCH_SECONDS'): number {
  const value = Number(process.env[variable]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh database on the server of DATABASE_URL, so a bench never reads another run's rows. */
export async function createScratchDatabase(prefix = 'bench'): Promise<ScratchDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${process.pid}_${randomBytes(3).toString('hex')}`;
  await withAdminClient((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/** One-row settings that change what a write costs (commit flush), printed beside the figures. */
export async function postgresSettings(): Promise<string> {
  let summary = '';
  await withAdminClient(async (c) => {
    const { rows } = await c.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'synchronous_commit', 'fsync', 'commit_delay') ORDER BY name`,
    );
    summary = rows.map((r) => `${r.name}=${r.setting}`).join(' ');
  });
  return summary;
}

async function withAdminClient(work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export const ratio = (a: number, b: number) => (b === 0 ? 'n/a' : (a / b).toFixed(3));

/** A plain text table: the first row is the header; numbers are right-aligned. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 || Number.isNaN(Number(c.replace(/[,x%]/g, ''))) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/** Other processes compete for the same cores; printed beside each figure so a noisy run shows. */
export function machineLoad(): string {
  const [one] = loadavg();
  return `load average ${one!.toFixed(2)} on ${availableParallelism()} cores`;
}
