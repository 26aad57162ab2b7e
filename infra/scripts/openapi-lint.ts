// `npm run lint:openapi`: the OpenAPI documents the service serves (the public one and the admin API's), linted by Redocly CLI with its
// `recommended` ruleset. Any problem fails, warnings included: a warning today is what a client's
// generator trips over tomorrow.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAdminOpenApiDocument, buildOpenApiDocument } from '../../contracts/openapi';

for (const [name, build] of [
  ['openapi.json', buildOpenApiDocument],
  ['admin-openapi.json', buildAdminOpenApiDocument],
] as const) {
  lint(name, build);
}

function lint(name: string, build: typeof buildOpenApiDocument): void {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(dir, name);
    // The document as served behind a public name (servers and doc_url absolute).
    writeFileSync(file, JSON.stringify(build({ serverUrl: 'http://127.0.0.1:3000' }), null, 2));
    const redocly = fileURLToPath(import.meta.resolve('@redocly/cli/bin/cli.js'));
    const run = spawnSync(process.execPath, [redocly, 'lint', file, '--extends', 'recommended', '--format', 'json', '--lint-config', 'off'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = parseReport(run.stdout);
    if (run.error || !report) {
      console.error(`redocly lint of ${name} did not run: ${run.error?.message ?? ''}\n${run.stdout}\n${run.stderr}`);
      process.exitCode = 1;
    } else if (report.problems.length > 0 || run.status !== 0) {
      for (const p of report.problems) console.error(`${name}: ${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`);
      console.error(`OpenAPI lint of ${name}: ${report.problems.length} problem(s)`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Report {
  problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>;
}

function parseReport(stdout: string): Report | undefined {
  const start = stdout.indexOf('{');
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start)) as Report;
  } catch {
    return undefined;
  }
}
