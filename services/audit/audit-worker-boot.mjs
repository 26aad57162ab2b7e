// The audit worker thread's entry. Compiled (npm start), it loads audit-worker.js beside it: the
// worker inherits the parent's --import of the extensionless-import hook. From the sources, a worker
// does not inherit the loader its parent runs under (tsx for the service, vite for the tests), so it
// loads the TypeScript through tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('./audit-worker.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { tsImport } = await import('tsx/esm/api');
  await tsImport('./audit-worker.ts', import.meta.url);
}
