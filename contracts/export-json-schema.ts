// Usage: npx tsx contracts/export-json-schema.ts [--check]
// Writes contracts/json-schema/*.json (one JSON Schema per event type, plus the envelope) from the
// zod schemas. The output is committed so consumers can take it without running this project;
// --check exits 1 when the committed files differ from what the schemas generate.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { eventJsonSchemas } from './jsonschema';

export const JSON_SCHEMA_DIR = fileURLToPath(new URL('./json-schema/', import.meta.url));

/** The files as they should be: name → text. */
export function renderJsonSchemaFiles(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(eventJsonSchemas()).map(([name, schema]) => [name, `${JSON.stringify(schema, null, 2)}\n`]),
  );
}

/** Names of files that are missing, stale or no longer generated. */
export function staleJsonSchemaFiles(dir = JSON_SCHEMA_DIR): string[] {
  const wanted = renderJsonSchemaFiles();
  let present: string[] = [];
  try {
    present = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return Object.keys(wanted);
  }
  const stale = Object.entries(wanted)
    .filter(([name, text]) => !present.includes(name) || readFileSync(dir + name, 'utf8') !== text)
    .map(([name]) => name);
  return [...stale, ...present.filter((name) => !(name in wanted))].sort();
}

function writeAll(dir = JSON_SCHEMA_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const wanted = renderJsonSchemaFiles();
  for (const name of readdirSync(dir)) if (name.endsWith('.json') && !(name in wanted)) rmSync(dir + name);
  for (const [name, text] of Object.entries(wanted)) writeFileSync(dir + name, text);
  return Object.keys(wanted);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const stale = staleJsonSchemaFiles();
    if (stale.length > 0) {
      console.error(`contracts/json-schema is out of date (${stale.join(', ')}): run npx tsx contracts/export-json-schema.ts`);
      process.exit(1);
    }
    console.log('contracts/json-schema is up to date');
  } else {
    const written = writeAll();
    console.log(`wrote ${written.length} JSON Schemas to contracts/json-schema/`);
  }
}
