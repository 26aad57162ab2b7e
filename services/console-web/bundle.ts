import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';

/** The console's browser script (browser/main.ts and what it imports, Chart.js included), as one file. */
export const CONSOLE_SCRIPT = 'console.js';

/**
 * Bundles the console's script for the browser: `npm run build` writes it next to the compiled
 * service (infra/scripts/build-console.ts); run from source (tsx, vitest), the service takes it
 * from cachedConsoleScript below at start (services/console-web/plugin.ts).
 */
export async function bundleConsoleScript(): Promise<Uint8Array> {
  return (await bundle()).script;
}

const ENTRY = fileURLToPath(new URL('./browser/main.ts', import.meta.url));
const OPTIONS = {
  entryPoints: [ENTRY] as string[],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  // Chart.js's licence notice stays with its code.
  legalComments: 'eof',
  logLevel: 'silent',
  absWorkingDir: dirname(ENTRY),
} satisfies BuildOptions;
/** What esbuild reads besides the inputs its metafile lists. */
const SETTINGS_FILES = [join(dirname(ENTRY), 'tsconfig.json'), fileURLToPath(new URL('../../tsconfig.json', import.meta.url))];

async function bundle(): Promise<{ script: Uint8Array; inputs: string[]; version: string }> {
  // Loaded only to bundle: the compiled service reads the built file and never needs esbuild.
  const { build, version } = await import('esbuild');
  const result = await build({ ...OPTIONS, write: false, metafile: true });
  return { script: result.outputFiles[0]!.contents, inputs: Object.keys(result.metafile.inputs).map((p) => resolve(OPTIONS.absWorkingDir, p)), version };
}

/**
 * The bundle as run from source (tsx, vitest: every test process starts the console), kept on
 * disk under the OS temp folder by the hash of every file it was made from: bundled again only
 * when one of them changed. A change that imports a new file changes an importing one, so the
 * inputs of the last bundle are enough to tell.
 */
export async function cachedConsoleScript(): Promise<Uint8Array> {
  const dir = join(tmpdir(), 'lookup-api-console-script');
  // One record per checkout: worktrees side by side keep theirs apart.
  const record = join(dir, `${createHash('sha256').update(ENTRY).digest('hex').slice(0, 16)}.json`);
  const { version } = await import('esbuild');
  const cached = readCached(record, version);
  if (cached) return cached;
  const made = await bundle();
  try {
    const hash = inputsHash(made.inputs, made.version);
    mkdirSync(dir, { recursive: true });
    const previous = readRecord(record);
    // Written whole, then renamed: a process reading at the same time sees the old file or the new one.
    writeAtomically(join(dir, `${hash}.js`), made.script);
    writeAtomically(record, JSON.stringify({ inputs: made.inputs, hash }));
    if (previous && previous.hash !== hash) rmSync(join(dir, `${previous.hash}.js`), { force: true });
  } catch {
    // Only a cache: when the temp folder cannot be written, the next start bundles again.
  }
  return made.script;
}

function readCached(record: string, version: string): Uint8Array | undefined {
  const previous = readRecord(record);
  if (!previous) return undefined;
  try {
    const hash = inputsHash(previous.inputs, version);
    return hash === previous.hash ? readFileSync(join(dirname(record), `${hash}.js`)) : undefined;
  } catch {
    // An input gone (moved, deleted) or the bundle removed: bundled again.
    return undefined;
  }
}

function readRecord(record: string): { inputs: string[]; hash: string } | undefined {
  try {
    return JSON.parse(readFileSync(record, 'utf8'));
  } catch {
    return undefined;
  }
}

function inputsHash(inputs: string[], version: string): string {
  const hash = createHash('sha256').update(`esbuild ${version}\0${JSON.stringify(OPTIONS)}\0`);
  for (const file of [...SETTINGS_FILES, ...inputs]) hash.update(`${file}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

function writeAtomically(path: string, content: Uint8Array | string) {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
}
