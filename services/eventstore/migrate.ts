import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Sql, SqlExecutor } from './sql';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../infra/migrations/', import.meta.url));
/** Any constant: serialises concurrent migrators (two instances starting at once). */
const MIGRATION_LOCK = 724_001;

/**
 * Applies `infra/migrations/NNN_name.sql` (statements) and `NNN_name.ts` (a module whose `up(tx)`
 * does what SQL cannot, such as computing hashes over existing events) in name order, each once,
 * recorded in schema_migrations, all in one transaction. Safe to run twice and from two processes at once.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = migrationFiles(await readdir(MIGRATIONS_DIR));
  const applied: string[] = [];
  await sql.transaction(async (tx) => {
    if (sql.backend === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    for (const [file, source] of files) {
      if (done.has(file)) continue;
      if (!source.endsWith('.sql')) {
        const step = (await import(pathToFileURL(MIGRATIONS_DIR + source).href)) as { up: (tx: SqlExecutor) => Promise<void> };
        await step.up(tx);
      } else {
        const text = await readFile(MIGRATIONS_DIR + source, 'utf8');
        for (const statement of splitStatements(text)) await tx.query(statement);
      }
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
  });
  return applied;
}

/**
 * Migration name -> the file to run, in name order. A `.ts` step compiled by `npm run build` is
 * `NNN_name.js` under dist/: it runs there under its source's name, so a database migrated by
 * either way of starting records the same names.
 */
export function migrationFiles(entries: string[]): [string, string][] {
  const byName = new Map<string, string>();
  for (const entry of entries.filter((f) => /^\d+_.+\.(sql|ts|js)$/.test(f) && !f.endsWith('.d.ts')).sort()) {
    const name = entry.replace(/\.js$/, '.ts');
    if (!byName.has(name) || entry.endsWith('.js')) byName.set(name, entry);
  }
  return [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Migrations are statements separated by `;` at line end; a `$$ … $$` function body is one piece
 * whatever `;` it holds.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  for (const [i, part] of text.split('$$').entries()) {
    // Odd parts are inside $$ quotes.
    if (i % 2 === 1) {
      current += `$$${part}$$`;
      continue;
    }
    const pieces = part.split(/;\s*$/m);
    current += pieces[0];
    for (const piece of pieces.slice(1)) {
      statements.push(current);
      current = piece;
    }
  }
  statements.push(current);
  return statements.map((s) => s.replace(/^\s*--.*$/gm, '').trim()).filter(Boolean);
}
