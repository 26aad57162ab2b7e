// `npm start` runs compiled JavaScript: `prestart` builds dist/ with tsc, and
// the start script runs it with plain Node, no TypeScript at run time. The built service starts on
// the embedded defaults, finds its migrations and the console's assets next to its code, answers
// a charged lookup, and exits 0 on SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { listeningUrl } from './support-instances/instances';
import { call } from './support/harness';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const ADMIN_TOKEN = 'compiled-start-admin-token-xxxxxxxx';
const scripts = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;

describe('npm start: the compiled service', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lookup-compiled-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('prestart builds with tsc; start runs dist/ with Node alone', () => {
    expect(scripts.prestart).toBe('npm run build');
    expect(scripts.build).toMatch(/^tsc -p tsconfig\.build\.json/);
    expect(scripts.start).toMatch(/^node .*dist\/services\/api\/main\.js$/);
    expect(scripts.start).not.toMatch(/tsx/);
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 170_000 });
    expect(build.status, `${build.stdout}\n${build.stderr}`).toBe(0);
    for (const built of ['dist/services/api/main.js', 'dist/infra/migrations/001_eventstore.sql', 'dist/services/console-web/assets/console.js']) {
      expect(existsSync(join(REPO_ROOT, built)), built).toBe(true);
    }
  }, 180_000);

  test('it starts on the embedded defaults, answers a lookup and the console, and exits 0 on SIGTERM', async () => {
    // `exec`: the signal reaches Node itself, as it would from a process manager.
    const child = spawn('sh', ['-c', `exec ${scripts.start}`], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'warn', MAX_EVENT_LOOP_DELAY_MS: '60000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    let output = () => '';
    try {
      const listening = await listeningUrl(child, 60_000);
      output = listening.output;
      const { url } = listening;
      // npm scripts run on the Node that the `node` dependency pins, whatever the machine has.
      expect(output()).toMatch(/listening on \S+ \(.*Node 24\.\d+\.\d+\)/);

      expect((await call(url, 'GET', '/v1/health/ready')).status).toBe(200);
      // No DATABASE_URL: the embedded default may start the sandbox by itself, and says so.
      expect(output()).toMatch(/data source: built-in sandbox network/);
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const ws = await call(url, 'POST', '/admin/v1/workspaces', { json: { name: 'compiled', credits: 5 }, headers: admin });
      const key = await call(url, 'POST', `/admin/v1/workspaces/${ws.body.id}/keys`, { json: {}, headers: admin });
      const lookup = await call(url, 'POST', '/v1/company', { key: key.body.key, json: { url: 'acme-robotics' } });
      expect([lookup.status, lookup.body.meta?.credits_remaining]).toEqual([200, 4]);
      expect((await call(url, 'GET', '/console/assets/console.css')).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, output()).toBe(0);
  }, 90_000);
});
