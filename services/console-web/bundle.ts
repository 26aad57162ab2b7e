import { fileURLToPath } from 'node:url';

/** The console's browser script (browser/main.ts and what it imports, Chart.js included), as one file. */
export const CONSOLE_SCRIPT = 'console.js';

/**
 * Bundles the console's script for the browser: `npm run build` writes it next to the compiled
 * service (infra/scripts/build-console.ts); run from source (tsx, vitest), the service bundles it
 * in memory at start (services/console-web/plugin.ts).
 */
export async function bundleConsoleScript(): Promise<Uint8Array> {
  // Loaded only to bundle: the compiled service reads the built file and never needs esbuild.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./browser/main.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    // Chart.js's licence notice stays with its code.
    legalComments: 'eof',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.contents;
}
