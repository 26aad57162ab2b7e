// End-to-end: GET /metrics. A few lookups of known kinds (a miss, a hit, a
// not-found, a not-found priced lower than its charge, a failure refunded, a rate-limited call),
// then a scrape: every counter moved by exactly what was done. On PGlite and on PostgreSQL
// (+ Redis), on the main port behind the admin token, and on METRICS_PORT without one.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer } from '../../services/api/server';
import { loadConfig } from '../../services/config/config';
import { ADMIN_TOKEN, backends, call, newCustomer, startE2eServer, type Customer, type E2eServer } from './support/harness';

/** A scrape as `name{label="value",...}` → value, labels in the order the service writes them. */
type Scrape = Map<string, number>;

function parseExposition(text: string): Scrape {
  const samples: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line of the text exposition format: ${line}`);
    samples.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  return samples;
}

/** The value of one sample; labels given in any order; absent counts as 0 (a counter not yet touched). */
function sample(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels);
  let total: number | undefined;
  for (const [key, value] of scrape) {
    const brace = key.indexOf('{');
    if ((brace === -1 ? key : key.slice(0, brace)) !== name) continue;
    const have = new Map([...(brace === -1 ? '' : key.slice(brace)).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (wanted.length !== have.size || wanted.some(([k, v]) => have.get(k) !== v)) continue;
    total = (total ?? 0) + value;
  }
  return total ?? 0;
}

/** promtool (Debian's `prometheus` package; .ci/run installs it): required under CI, else a loud skip. */
const promtool = (() => {
  const present = spawnSync('promtool', ['--version']).status === 0;
  if (!present) {
    const message = 'promtool is not installed: `promtool check metrics` of a live /metrics is not run (apt-get install prometheus)';
    if (process.env.CI === 'true') throw new Error(`${message}; under CI=true it must run`);
    console.warn(`SKIPPED: ${message}`);
  }
  return { present };
})();

describe.each(backends())('GET /metrics on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let c: Customer;

    beforeAll(async () => {
      server = await startE2eServer(backend);
      c = await newCustomer(server, 1000, 'metrics');
    }, 60_000);
    afterAll(async () => server?.stop());

    const scrapeText = async () => {
      const res = await call(server.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status, res.text).toBe(200);
      return res.text;
    };

    const scrape = async () => {
      const res = await call(server.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return parseExposition(res.text);
    };

    test('the main port asks for the admin token: 401 in the envelope without it, no per-IP token taken, never cached', async () => {
      const res = await call(server.url, 'GET', '/metrics');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.headers.get('ratelimit-limit')).toBeNull();
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      const ok = await call(server.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(ok.headers.get('cache-control')).toBe('no-store');
    });

    test('after a few lookups every counter moved by exactly what was done', async () => {
      const slow = await server.admin.createKey(c.workspaceId, { rate_limit_per_minute: 1 });
      const before = await scrape();

      const company = (url: string) => c.post('/v1/company', { url });
      const miss = await company('acme-robotics');
      expect([miss.status, miss.headers.get('x-cache')]).toEqual([200, 'MISS']);
      const hit = await company('acme-robotics');
      expect([hit.status, hit.headers.get('x-cache')]).toEqual([200, 'HIT']);
      const notFound = await company('no-such-company-metrics-e2e');
      expect(notFound.body.error.code).toBe('not_found');
      // 3 charged, 2 refunded: a person name not found costs 1.
      const nameNotFound = await c.post('/v1/person', { url: 'Nobody Metrics Quixotic' });
      expect([nameNotFound.status, nameNotFound.body.meta.credits_charged]).toEqual([404, 1]);
      const failed = await company('sandbox-upstream-error');
      expect([failed.body.error.code, failed.body.meta.credits_charged]).toEqual(['upstream_error', 0]);
      // A key of 1 call a minute: a hit, then 429.
      const limited = [await call(server.url, 'POST', '/v1/company', { key: slow.key, json: { url: 'acme-robotics' } })];
      limited.push(await call(server.url, 'POST', '/v1/company', { key: slow.key, json: { url: 'acme-robotics' } }));
      expect(limited.map((r) => r.status)).toEqual([200, 429]);

      // With an Idempotency-Key: claimed, then its answer stored.
      const keyed = await call(server.url, 'POST', '/v1/company', { key: c.key, json: { url: 'acme-robotics' }, headers: { 'idempotency-key': 'metrics-e2e-1' } });
      expect([keyed.status, keyed.headers.get('x-cache')]).toEqual([200, 'HIT']);

      const after = await scrape();
      const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

      expect(moved('lookup_api_lookups_total', { operation: 'company', cache_status: 'MISS', outcome: 'success' })).toBe(1);
      expect(moved('lookup_api_lookups_total', { operation: 'company', cache_status: 'HIT', outcome: 'success' })).toBe(3);
      expect(moved('lookup_api_lookups_total', { operation: 'company', cache_status: 'MISS', outcome: 'not_found' })).toBe(1);
      expect(moved('lookup_api_lookups_total', { operation: 'company', cache_status: 'MISS', outcome: 'upstream_error' })).toBe(1);
      expect(moved('lookup_api_lookups_total', { operation: 'person_name', cache_status: 'MISS', outcome: 'not_found' })).toBe(1);
      // Nothing else was looked up.
      expect(sumOver(after, 'lookup_api_lookups_total') - sumOver(before, 'lookup_api_lookups_total')).toBe(7);

      // company: 1 + 1 + 1 + 1 (refunded) + 1 (the slow key's hit) + 1 (the keyed hit); person_name: 3, of which 2 refunded.
      expect(moved('lookup_api_credits_charged_total', { operation: 'company' })).toBe(6);
      expect(moved('lookup_api_credits_refunded_total', { operation: 'company' })).toBe(1);
      expect(moved('lookup_api_credits_charged_total', { operation: 'person_name' })).toBe(3);
      expect(moved('lookup_api_credits_refunded_total', { operation: 'person_name' })).toBe(2);

      // Live fetches: the miss, the not-found, the failure (company by slug); the name.
      expect(moved('lookup_api_live_fetch_duration_seconds_count', { call: 'companyBySlug', result: 'found' })).toBe(1);
      expect(moved('lookup_api_live_fetch_duration_seconds_count', { call: 'companyBySlug', result: 'not_found' })).toBe(1);
      expect(moved('lookup_api_live_fetch_duration_seconds_count', { call: 'companyBySlug', result: 'failure' })).toBe(1);
      expect(moved('lookup_api_live_fetch_duration_seconds_count', { call: 'personByName', result: 'not_found' })).toBe(1);
      expect(moved('lookup_api_live_fetch_failures_total', { code: 'upstream_error' })).toBe(1);

      const http = (status: string) => moved('lookup_api_http_request_duration_seconds_count', { method: 'POST', route: '/v1/company', status });
      expect([http('200'), http('404'), http('502'), http('429')]).toEqual([4, 1, 1, 1]);
      // The Idempotency-Key's claim and its stored answer, each in a group-committed statement.
      expect(moved('lookup_api_idempotency_batch_size_sum', { statement: 'claim' })).toBe(1);
      expect(moved('lookup_api_idempotency_batch_size_sum', { statement: 'complete' })).toBe(1);
      expect(moved('lookup_api_requests_refused_total', { reason: 'rate_limited' })).toBe(1);
      expect(moved('lookup_api_requests_refused_total', { reason: 'shed' })).toBe(0);

      // The group commits carried at least those jobs: each lookup is a charge and a settle, a hit one job.
      expect(moved('lookup_api_writer_batch_size_sum')).toBeGreaterThanOrEqual(6);
      expect(moved('lookup_api_writer_commit_duration_seconds_count', { result: 'committed' })).toBeGreaterThan(0);
      expect(after.has('lookup_api_writer_queue_depth')).toBe(true);
      expect(after.has('lookup_api_subscription_lag_events{subscription="usage_projection"}')).toBe(true);
      // Node's default process metrics.
      expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
      expect(sample(after, 'lookup_api_database_errors_total')).toBe(0);
    });

    // After the lookups above (same server, tests run in order): labelled series exist too.
    test.skipIf(!promtool.present)('`promtool check metrics` finds nothing to say about a live scrape', async () => {
      const checked = spawnSync('promtool', ['check', 'metrics'], { input: await scrapeText(), encoding: 'utf8' });
      expect(checked.error).toBeUndefined();
      expect(`${checked.stdout}${checked.stderr}`.trim()).toBe('');
      expect(checked.status).toBe(0);
    });
  });
});

function sumOver(scrape: Scrape, name: string): number {
  let total = 0;
  for (const [key, value] of scrape) if (key === name || key.startsWith(`${name}{`)) total += value;
  return total;
}

describe('METRICS_PORT', () => {
  test('served there without a token, and no longer on the main port', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = mkdtempSync(join(tmpdir(), 'lookup-metrics-port-'));
    const running = await startServer(loadConfig({ PORT: '0', METRICS_PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent' }));
    try {
      expect(running.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await call(running.metricsUrl!, 'GET', '/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('# TYPE lookup_api_http_request_duration_seconds histogram');
      expect((await call(running.metricsUrl!, 'GET', '/v1/health')).status).toBe(404);
      const main = await call(running.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect([main.status, main.body.error.code]).toEqual([404, 'route_not_found']);
    } finally {
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
