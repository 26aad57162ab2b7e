// HTTP benchmarks of the lookup API, then the event-store benchmark.
//
//   npm run bench                       10 s per HTTP scenario, 4 s per event-store measurement
//   BENCH_SECONDS=5 npm run bench       shorter HTTP scenarios
//   BENCH_EVENTSTORE_SECONDS=2          shorter event-store measurements
//   BENCH_SKIP_EVENTSTORE=1             HTTP only (then: npm run bench:eventstore)
//
// Each server runs in its own child process (server-child.ts, forked); this process only drives
// autocannon, so the load generator and the server never share an event loop (2 cores: one each).
// Scenarios, all POST /v1/company {"url":"acme-robotics"} at 64 connections after one MISS warmed
// the cache, with a key at 100 000 requests/minute and a workspace at max_concurrency 1000:
//   a) charged cache hits on PostgreSQL + Redis
//   b) a bare Fastify route answering the same body, same autocannon settings
//   c) (a) with a unique Idempotency-Key per request
//   d) (a) and (c) on PGlite (embedded, in-process limits: the single-instance set-up)
//   e) (a) again under node --cpu-prof, summarised by package and by function
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { readMainProfile, summarizeProfile, type ProfileSummary } from './cpu-profile';
import type { ChildMessage, ParentMessage } from './server-child';
import { benchSeconds, createScratchDatabase, DATABASE_URL, fmt, machineLoad, ratio, REDIS_URL, table } from './support';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const SERVER_CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
const EVENTSTORE_BENCH = fileURLToPath(new URL('./eventstore.bench.ts', import.meta.url));
const RUN_DIR = resolve(REPO_ROOT, '.run', 'bench');

const CONNECTIONS = 64;
const ADMIN_TOKEN = 'bench-admin-token-'.padEnd(32, 'x');
const LOOKUP_BODY = JSON.stringify({ url: 'acme-robotics' });
const CREDITS = 1_000_000_000;
const MAX_CONCURRENCY = 1000;
const RATE_LIMIT_PER_MINUTE = 100_000;
/** Variables of the service's configuration: the parent's values must not leak into a child. */
const CONFIG_VARIABLES = [
  'HOST', 'PORT', 'DATABASE_URL', 'DATA_DIR', 'REDIS_URL', 'KAFKA_BROKERS', 'SOURCE_URL', 'SOURCE_TIMEOUT_MS',
  'ADMIN_TOKEN', 'DOCS_URL', 'LOG_LEVEL', 'MAX_EVENT_LOOP_DELAY_MS', 'MAX_IN_FLIGHT',
];

// ---------------------------------------------------------------------------------------------
// Server children

interface ServerChild {
  url: string;
  /** Reads the child's monotonic clock (µs), the clock of its CPU profile. */
  mark(name: string): Promise<number>;
  stop(): Promise<void>;
}

async function startChild(mode: 'api' | 'bare', env: Record<string, string>, extraExecArgv: string[] = []): Promise<ServerChild> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete childEnv[name];
  Object.assign(childEnv, env);
  const child: ChildProcess = fork(SERVER_CHILD, [mode], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx', ...extraExecArgv],
    env: childEnv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const next = <T extends ChildMessage['type']>(type: T) =>
    new Promise<Extract<ChildMessage, { type: T }>>((done, fail) => {
      const onMessage = (m: ChildMessage) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        done(m as Extract<ChildMessage, { type: T }>);
      };
      child.on('message', onMessage);
      void exited.then((code) => fail(new Error(`server child (${mode}) exited with ${code} before '${type}'`)));
    });
  const ready = await next('ready');
  const send = (m: ParentMessage) => child.send(m);
  return {
    url: ready.url,
    async mark(name) {
      const answer = next('mark');
      send({ type: 'mark', name });
      return (await answer).hrtimeUs;
    },
    async stop() {
      send({ type: 'stop' });
      const code = await exited;
      if (code !== 0) throw new Error(`server child (${mode}) exited with ${code}`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Admin set-up over HTTP, per decisions.md "Admin API"

async function call(url: string, method: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

async function admin(base: string, method: string, path: string, body?: unknown) {
  const r = await call(base + path, method, body, { authorization: `Bearer ${ADMIN_TOKEN}` });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

interface Workspace {
  id: string;
  newKey(name: string): Promise<string>;
  balance(): Promise<number>;
}

async function createWorkspace(base: string): Promise<Workspace> {
  const ws = await admin(base, 'POST', '/admin/v1/workspaces', { name: 'bench', credits: CREDITS });
  await admin(base, 'PATCH', `/admin/v1/workspaces/${ws.id}`, { max_concurrency: MAX_CONCURRENCY });
  return {
    id: ws.id,
    // A fresh key per scenario: each starts with a full rate-limit bucket.
    newKey: async (name) =>
      (await admin(base, 'POST', `/admin/v1/workspaces/${ws.id}/keys`, { name, rate_limit_per_minute: RATE_LIMIT_PER_MINUTE })).key,
    balance: async () => (await admin(base, 'GET', `/admin/v1/workspaces/${ws.id}`)).balance,
  };
}

/** One lookup; the first one of a run is the MISS that fills the cache. */
async function lookupOnce(base: string, key: string) {
  const r = await call(`${base}/v1/company`, 'POST', JSON.parse(LOOKUP_BODY), { authorization: `Bearer ${key}` });
  if (r.status !== 200) throw new Error(`warm-up lookup: ${r.status} ${JSON.stringify(r.body)}`);
  return { cache: r.headers.get('x-cache'), body: r.body };
}

// ---------------------------------------------------------------------------------------------
// Load

interface LoadResult {
  scenario: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: string;
  /** One body per non-2xx status. */
  failureSamples: string[];
  /** Credits the workspace lost during the run (each 200 costs 1; in-flight ones at the end count too). */
  creditsCharged?: number;
  load: string;
}

/**
 * autocannon with the same settings for every scenario. Every request carries a unique id in a
 * header (`[<id>]` replaced per request), so the client's per-request work is the same whether the
 * id is the Idempotency-Key or an inert header.
 */
async function runLoad(scenario: string, url: string, key: string, seconds: number, idempotent: boolean): Promise<LoadResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  headers[idempotent ? 'idempotency-key' : 'x-bench-id'] = 'bench-[<id>]';
  const failureSamples = new Map<number, string>();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    idReplacement: true,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: '/v1/company',
        headers,
        body: LOOKUP_BODY,
        // The first body of each failing status, to say why.
        onResponse: (status: number, body: string) => {
          if (status >= 300 && !failureSamples.has(status)) failureSamples.set(status, body.slice(0, 300));
        },
      },
    ],
  });
  const statusCodes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, s]) => `${code}:${s.count ?? 0}`)
    .join(' ');
  return {
    scenario,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    failureSamples: [...failureSamples].map(([status, body]) => `${status} ${body}`),
    load: machineLoad(),
  };
}

/** A charged-lookup scenario on a running API: fresh key, key cache warmed, then the load. */
async function chargedScenario(scenario: string, api: ServerChild, ws: Workspace, seconds: number, idempotent: boolean) {
  const key = await ws.newKey(scenario);
  const warm = await lookupOnce(api.url, key);
  if (warm.cache !== 'HIT') throw new Error(`${scenario}: expected a cache HIT before the load, got ${warm.cache}`);
  const before = await ws.balance();
  const result = await runLoad(scenario, api.url, key, seconds, idempotent);
  // Let in-flight charges land before reading the balance.
  await new Promise((r) => setTimeout(r, 500));
  result.creditsCharged = before - (await ws.balance());
  console.log(`  ${scenario}: ${fmt(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}`);
  return result;
}

// ---------------------------------------------------------------------------------------------

async function benchPostgres(seconds: number) {
  const database = await createScratchDatabase('bench_http');
  const results: LoadResult[] = [];
  let hitBody: unknown;
  let profile: { summary: ProfileSummary; result: LoadResult } | undefined;
  try {
    const env = { PORT: '0', DATABASE_URL: database.url, REDIS_URL, ADMIN_TOKEN, LOG_LEVEL: 'silent' };
    const api = await startChild('api', env);
    try {
      const ws = await createWorkspace(api.url);
      const first = await lookupOnce(api.url, await ws.newKey('warm-up'));
      console.log(`PostgreSQL + Redis: first lookup x-cache ${first.cache} (the cache is warm from here on)`);
      results.push(await chargedScenario('PostgreSQL+Redis, cache hit', api, ws, seconds, false));
      hitBody = (await lookupOnce(api.url, await ws.newKey('body'))).body;

      // The bare route between the two charged runs, with the same body and client settings.
      const bare = await startChild('bare', { BENCH_BARE_BODY: JSON.stringify(hitBody) });
      try {
        const r = await runLoad('bare Fastify, same body', bare.url, await ws.newKey('bare'), seconds, false);
        console.log(`  ${r.scenario}: ${fmt(r.requestsPerSecond)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}`);
        results.push(r);
      } finally {
        await bare.stop();
      }

      results.push(await chargedScenario('PostgreSQL+Redis, cache hit + Idempotency-Key', api, ws, seconds, true));
    } finally {
      await api.stop();
    }

    // The same cache-hit load on a profiled instance (same database, cache already warm).
    const profileDir = resolve(RUN_DIR, `cpuprof-${Date.now()}`);
    mkdirSync(profileDir, { recursive: true });
    const profiled = await startChild('api', env, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
    let result: LoadResult;
    let window: { startUs: number; endUs: number };
    try {
      const ws = await createWorkspace(profiled.url);
      const key = await ws.newKey('profiled');
      await lookupOnce(profiled.url, key);
      const startUs = await profiled.mark('start');
      result = await runLoad('PostgreSQL+Redis, cache hit, under --cpu-prof', profiled.url, key, seconds, false);
      window = { startUs, endUs: await profiled.mark('end') };
      console.log(`  ${result.scenario}: ${fmt(result.requestsPerSecond)} req/s, non-2xx ${result.non2xx}`);
    } finally {
      await profiled.stop();
    }
    profile = { summary: summarizeProfile(readMainProfile(profileDir), REPO_ROOT, window), result };
    console.log(`  profile written under ${profileDir} (gitignored)`);
  } finally {
    await database.drop();
  }
  return { results, hitBody, profile };
}

async function benchPglite(seconds: number) {
  const dataDir = resolve(RUN_DIR, `pglite-http-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  const results: LoadResult[] = [];
  const api = await startChild('api', { PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent' });
  try {
    const ws = await createWorkspace(api.url);
    const first = await lookupOnce(api.url, await ws.newKey('warm-up'));
    console.log(`PGlite (embedded, in-process limits): first lookup x-cache ${first.cache}`);
    results.push(await chargedScenario('PGlite, cache hit', api, ws, seconds, false));
    results.push(await chargedScenario('PGlite, cache hit + Idempotency-Key', api, ws, seconds, true));
  } finally {
    await api.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

function printHttpResults(results: LoadResult[], hitBody: unknown) {
  const by = (scenario: string) => results.find((r) => r.scenario === scenario);
  const pgHit = by('PostgreSQL+Redis, cache hit')!;
  const bare = by('bare Fastify, same body')!;
  const pgIdem = by('PostgreSQL+Redis, cache hit + Idempotency-Key')!;
  const liteHit = by('PGlite, cache hit')!;
  const liteIdem = by('PGlite, cache hit + Idempotency-Key')!;

  console.log(`\n== HTTP: POST /v1/company ${LOOKUP_BODY}, ${CONNECTIONS} connections, pipelining 1 ==`);
  console.log(`response body: ${Buffer.byteLength(JSON.stringify(hitBody))} bytes of JSON (the bare route sends the same object)`);
  const rows: (string | number)[][] = [['scenario', 'req/s', 'p50 ms', 'p99 ms', 'requests', '2xx', 'non-2xx', 'errors', 'timeouts', 'credits charged']];
  for (const r of results) {
    rows.push([r.scenario, fmt(r.requestsPerSecond), r.p50, r.p99, r.total, r.ok2xx, r.non2xx, r.errors, r.timeouts, r.creditsCharged ?? '-']);
  }
  console.log(table(rows));
  for (const r of results) {
    if (r.non2xx === 0 && r.errors === 0) continue;
    console.log(`  ${r.scenario}: status codes ${r.statusCodes}; errors ${r.errors}`);
    for (const sample of r.failureSamples) console.log(`    e.g. ${sample}`);
  }
  console.log('load during each run: ' + results.map((r) => `${r.scenario}: ${r.load}`).join('; '));
  console.log('\nratios (req/s):');
  console.log(`  charged cache hit / bare Fastify (PostgreSQL+Redis)     ${ratio(pgHit.requestsPerSecond, bare.requestsPerSecond)}`);
  console.log(`  with Idempotency-Key / without (PostgreSQL+Redis)       ${ratio(pgIdem.requestsPerSecond, pgHit.requestsPerSecond)}`);
  console.log(`  with Idempotency-Key / without (PGlite)                 ${ratio(liteIdem.requestsPerSecond, liteHit.requestsPerSecond)}`);
  console.log(`  PGlite / PostgreSQL+Redis (cache hit)                   ${ratio(liteHit.requestsPerSecond, pgHit.requestsPerSecond)}`);
  const bad = results.filter((r) => r.non2xx > 0 || r.errors > 0);
  console.log(bad.length === 0 ? 'every response was 2xx' : `NOT every response was 2xx: ${bad.map((r) => r.scenario).join(', ')}`);
}

function printProfile(profile: { summary: ProfileSummary; result: LoadResult }) {
  const { summary, result } = profile;
  console.log(`\n== CPU profile of the server under the cache-hit load (${fmt(result.requestsPerSecond)} req/s while profiled) ==`);
  console.log(
    summary.wholeProfile
      ? 'the load window matched no sample: whole profile (start-up included)'
      : `window ${fmt(summary.windowMs)} ms, sampled ${fmt(summary.sampledMs)} ms of self time`,
  );
  const top = (shares: ProfileSummary['byPackage']) => [
    ['', 'self ms', '%'],
    ...shares.slice(0, 15).map((s) => [s.name, fmt(s.ms), `${s.percent.toFixed(1)}%`]),
  ];
  console.log('\ntop 15 by package / folder (self time):');
  console.log(table(top(summary.byPackage)));
  console.log('\ntop 15 functions (self time):');
  console.log(table(top(summary.byFunction)));
}

function runEventStoreChild(): Promise<void> {
  const env = { ...process.env };
  if (process.env.BENCH_EVENTSTORE_SECONDS) env.BENCH_SECONDS = process.env.BENCH_EVENTSTORE_SECONDS;
  else delete env.BENCH_SECONDS;
  const child = spawn(process.execPath, ['--import', 'tsx', EVENTSTORE_BENCH], { cwd: REPO_ROOT, env, stdio: 'inherit' });
  return new Promise((done, fail) =>
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`event-store bench exited with ${code}`)))),
  );
}

async function main() {
  const seconds = benchSeconds(10);
  mkdirSync(RUN_DIR, { recursive: true });
  console.log(`Lookup API benchmark: ${seconds} s per scenario, ${CONNECTIONS} connections; PostgreSQL ${DATABASE_URL}, Redis ${REDIS_URL}; ${machineLoad()}`);
  const pg = await benchPostgres(seconds);
  const lite = await benchPglite(seconds);
  printHttpResults([...pg.results, ...lite], pg.hitBody);
  if (pg.profile) printProfile(pg.profile);

  if (process.env.BENCH_SKIP_EVENTSTORE === '1') {
    console.log('\n(event-store bench skipped: run `npm run bench:eventstore`)');
  } else {
    console.log('\n== Event store (test/bench/eventstore.bench.ts; alone: npm run bench:eventstore) ==');
    await runEventStoreChild();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
