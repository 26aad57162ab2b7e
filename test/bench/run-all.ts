// HTTP benchmarks of the lookup API, then the event-store benchmark.
//
//   npm run bench                       10 s per HTTP scenario, 4 s per event-store measurement
//   BENCH_SECONDS=5 npm run bench       shorter HTTP scenarios
//   BENCH_EVENTSTORE_SECONDS=2          shorter event-store measurements
//   BENCH_SKIP_EVENTSTORE=1             no event-store part (then: npm run bench:eventstore)
//   BENCH_SKIP_AUDIT=1                  no audit part (then: npx tsx test/bench/audit.bench.ts)
//   BENCH_SKIP_BATCH=1                  no batch part (then: npx tsx test/bench/batch.bench.ts)
//   npx tsx test/bench/charge-path.bench.ts   SQL statements per charged hit and the writer's batching, then rows, bytes and index entries per hit
//   npx tsx test/bench/charge-wal.bench.ts    WAL bytes and CPU per charged hit on PGlite (exact whatever else the machine runs)
//   npx tsx test/bench/redis-commands.bench.ts   Redis commands per charged hit (its own redis-server)
//   BENCH_MEMORY_SECONDS=60             the one-run memory check (RSS every 5 s; default 60)
//   BENCH_MEMORY_WARMUP_SECONDS=30      the same load before it, not sampled (default 30)
//   BENCH_ONLY=postgres|pglite          one half alone (does not rewrite docs/performance.md)
//   BENCH_ONLY=profile                  only the profiled PostgreSQL+Redis cache-hit run (e)
//   BENCH_ONLY=latency                  only issue 27's scenarios: (a), (b) and (g) interleaved, then (h), the
//                                       writes per hit and the "Issue 27 targets" block (no PGlite: its p99 shows "-")
//   BENCH_STEADY_SECONDS=10             seconds per rate of (h), split over the rounds (default 10)
//   BENCH_STEADY_RATES=250,1000,4000    the rates of (h), requests per second
//   BENCH_VARIANT=NAME=value            one more PostgreSQL instance with that setting, interleaved (A/B)
//   BENCH_VARIANT_TREE=/path/to/checkout  one more PostgreSQL instance running that checkout's code (another
//                                       branch: `git archive` it there, node_modules linked), interleaved (A/B)
//   BENCH_SERVER_NODE_FLAGS="--flag ..."  Node/V8 flags for every server child (GC settings, say), space-separated
//   BENCH_ONLY=ab                       only (a) and the variant above, interleaved (BENCH_ROUNDS rounds, default 2);
//                                       `{database}` in BENCH_VARIANT's value is the run's scratch database
//   BENCH_AB_STEADY=1                   with BENCH_ONLY=ab: the steady rates (h) too, the variant in the bare route's place
//
// A whole run writes its summary (machine, table, CPU per request per process from /proc, memory,
// the issue-12 targets met or not, group commits, storage, profile) between the markers of
// docs/performance.md, and the scaling part (1 vs 2 instances, storage) between those of docs/scaling.md.
//
// Each server runs in its own child process (server-child.ts, forked); this process only drives
// autocannon, so the load generator and the server never share an event loop (2 cores: one each).
// Scenarios compared with each other run interleaved in two halves (A B C A B C) so that drifting
// background load hits them alike; the machine's load average is printed beside each.
// Scenarios, all POST /v1/company {"url":"acme-robotics"} at 64 connections after one MISS warmed
// the cache, with a key at 100 000 requests/minute and a workspace at max_concurrency 1000:
//   a) charged cache hits on PostgreSQL + Redis
//   b) a bare Fastify route answering the same body, same autocannon settings
//   c) (a) with a unique Idempotency-Key per request
//   d) (a) and (c) on PGlite (embedded, in-process limits: the single-instance set-up), with the
//      event-loop-delay shedding bound lifted, and (a) once more with default settings
//   e) (a) again under node --cpu-prof, summarised by package and by function
//   f) (a) on 2 instances of the service on the same database, Redis, workspace and key, the 64
//      connections split 32 + 32 between two load generators running at once; with (a), (b) and
//      (c) in the same rounds (the second instance idles through theirs). Each instance's batching writer is read from its /metrics around
//      each slice (group commits per second, charges per commit, time per commit)
//      After the rounds, Redis' keys of the run's API keys and workspaces, sampled during a 2 s load
//      on both instances; after (e), rows, bytes and index sizes of the tables that grow per charged
//      call (storage-figures.ts)
//   g) the naive service of issue 27 (naive-service.ts: Fastify, a Redis rate limit written as
//      @fastify/rate-limit's store does it, one PostgreSQL transaction per call, the same body) on a
//      scratch database of its own, in the same rounds as (a) and (b)
//   h) (a) at fixed arrival rates (BENCH_STEADY_RATES) over 16 connections from an open-loop
//      generator (open-loop.ts: latency from the instant each request was due, so queueing counts),
//      the rates interleaved in the same rounds; around them, every table's writes per charged hit
//      (pg_stat_user_tables: rows, index entries, bytes). Then the "Issue 27 targets" block
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type Budget, type MeasuredHit, serverCpuBudget, throughputBudget, verdict } from './cpu-budget';
import { readMainProfile, summarizeProfile, type ProfileSummary } from './cpu-profile';
import type { ChildMessage, ParentMessage } from './server-child';
import { cpuBetween, machineDescription, postgresBackendsOf, postgresServerProcesses, readCpu, redisServer, rssMb, singleProcess, type ProcessGroup } from './proc-stats';
import {
  measureStorage, perChargedCall, readTableWrites, type RedisKeySample, redisLines, sampleRedisKeys, type StorageFigures, storageLines, writesLines,
  writesPerHit, type WritesPerHit,
} from './storage-figures';
import { benchSeconds, createScratchDatabase, DATABASE_URL, fmt, machineLoad, ratio, REDIS_URL, table } from './support';
import { runOpenLoop } from './open-loop';
import { percentile, summarize, type LatencySummary } from './rate-schedule';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const SERVER_CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
const EVENTSTORE_BENCH = fileURLToPath(new URL('./eventstore.bench.ts', import.meta.url));
const AUDIT_BENCH = fileURLToPath(new URL('./audit.bench.ts', import.meta.url));
const BATCH_BENCH = fileURLToPath(new URL('./batch.bench.ts', import.meta.url));
const RUN_DIR = resolve(REPO_ROOT, '.run', 'bench');

const CONNECTIONS = 64;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARM_UP_SECONDS = 2;
/** The short load on 2 instances during which Redis is sampled, halfway (its keys expire once idle). */
const REDIS_SAMPLE_SECONDS = 2;
const ADMIN_TOKEN = 'bench-admin-token-'.padEnd(32, 'x');
const LOOKUP_BODY = JSON.stringify({ url: 'acme-robotics' });
const CREDITS = 1_000_000_000;
const MAX_CONCURRENCY = 1000;
const RATE_LIMIT_PER_MINUTE = 100_000;
/** Variables of the service's configuration: the parent's values must not leak into a child. */
const CONFIG_VARIABLES = [
  'HOST', 'PORT', 'DATABASE_URL', 'DATA_DIR', 'REDIS_URL', 'KAFKA_BROKERS', 'SOURCE_URL', 'SOURCE_TIMEOUT_MS',
  'ADMIN_TOKEN', 'DOCS_URL', 'TRUST_PROXY', 'LOG_LEVEL', 'MAX_EVENT_LOOP_DELAY_MS', 'MAX_IN_FLIGHT',
  'METRICS_PORT', 'ACCESS_LOG_SAMPLE', 'CACHE_INDEX_MAX_ENTRIES', 'CONCURRENCY_LEASE_MS', 'IDEMPOTENCY_LOCK_TTL_MS',
  'ABANDONED_CHARGE_GRACE_MS', 'DRAIN_DELAY_MS', 'AUDIT_HEARTBEAT_TIMEOUT_MS',
];

/** Scenario names, looked up again for the ratios and the targets. */
const PG_HIT = 'PostgreSQL+Redis, cache hit';
const BARE = 'bare Fastify, same body';
const PG_IDEMPOTENT = 'PostgreSQL+Redis, cache hit + Idempotency-Key';
const PG_TWO_INSTANCES = 'PostgreSQL+Redis, cache hit, 2 instances on one database';
const LITE_HIT = 'PGlite, cache hit (shedding bound lifted)';
const LITE_IDEMPOTENT = 'PGlite, cache hit + Idempotency-Key (shedding bound lifted)';
const NAIVE = 'naive service (Redis rate limit, 1 transaction per call)';

/** The steady-rate scenario (h): connections, and the rates offered. */
const STEADY_CONNECTIONS = 16;
const steadyRates = () => (process.env.BENCH_STEADY_RATES ?? '250,1000,4000').split(',').map(Number).filter((n) => n > 0);

// ---------------------------------------------------------------------------------------------
// Server children

interface ServerChild {
  url: string;
  pid: number;
  /** Reads the child's monotonic clock (µs), the clock of its CPU profile. */
  mark(name: string): Promise<number>;
  /** The heap in use (MB) after each of its mark-compacts since the last call. */
  majorGcs(): Promise<number[]>;
  stop(): Promise<void>;
}

/** BENCH_SERVER_NODE_FLAGS: V8/Node flags for every server child (e.g. GC settings), space-separated. */
const SERVER_NODE_FLAGS = (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');

async function startChild(mode: 'api' | 'bare' | 'naive', env: Record<string, string>, extraExecArgv: string[] = [], tree?: string): Promise<ServerChild> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete childEnv[name];
  Object.assign(childEnv, env);
  const child: ChildProcess = fork(tree ? resolve(tree, 'test/bench/server-child.ts') : SERVER_CHILD, [mode], {
    cwd: tree ?? REPO_ROOT,
    execArgv: ['--import', 'tsx', ...SERVER_NODE_FLAGS, ...extraExecArgv],
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
    pid: child.pid!,
    async mark(name) {
      const answer = next('mark');
      send({ type: 'mark', name });
      return (await answer).hrtimeUs;
    },
    async majorGcs() {
      const answer = next('majorGcs');
      send({ type: 'majorGcs' });
      return (await answer).heapAfterMb;
    },
    async stop() {
      send({ type: 'stop' });
      const code = await exited;
      if (code !== 0) throw new Error(`server child (${mode}) exited with ${code}`);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Admin set-up over HTTP, per docs/api.md "Admin API (operators)"

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

/** What a target is loaded with: the key, and whether each request has its own Idempotency-Key. */
interface Target {
  url: string;
  key: string;
  idempotent: boolean;
  /** Which instance serves it, when a scenario loads several at once ('instance' when alone). */
  label?: string;
  /** For charged lookups: the workspace whose balance shows what the run cost. */
  workspace?: Workspace;
  /** For the service: its /metrics is read around each slice for the batching writer's group commits. */
  metricsUrl?: string;
  /** The processes serving it, whose CPU time (from /proc) is counted per request. */
  processes?: ProcessGroup[];
}

/** The batching writer's counters on one instance (lookup_api_writer_* in services/metrics/metrics.ts). */
interface WriterCounts {
  batches: number;
  jobs: number;
  commits: number;
  commitSeconds: number;
}

/** One instance's share of a scenario. */
interface InstanceResult {
  label: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Over the load windows; undefined for a process without the service's /metrics (bare route). */
  writer?: WriterCounts & { seconds: number };
}

interface LoadResult {
  scenario: string;
  requestsPerSecond: number;
  /** Of 2xx responses, every latency of every instance together (exact, not merged histograms). */
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
  /** Credits the workspace lost (each 200 costs 1; requests still in flight when a slice ends count too). */
  creditsCharged?: number;
  load: string;
  /** CPU µs per request of each serving process group (several instances: summed in one group). */
  cpuPerRequestUs: Map<string, number>;
  /** CPU µs per request of this process while it drives autocannon: the load generator's share of the cores. */
  loadGeneratorUsPerRequest: number;
  instances: InstanceResult[];
}

/** One instance's figures in one scenario, summed over its slices. */
class InstanceTally {
  readonly latencies: number[] = [];
  responses = 0;
  seconds = 0;
  writer: (WriterCounts & { seconds: number }) | undefined;

  constructor(readonly label: string) {}

  addWriter(before: WriterCounts | undefined, after: WriterCounts | undefined, seconds: number) {
    if (!before || !after) return;
    const w = this.writer ?? { batches: 0, jobs: 0, commits: 0, commitSeconds: 0, seconds: 0 };
    this.writer = {
      batches: w.batches + after.batches - before.batches,
      jobs: w.jobs + after.jobs - before.jobs,
      commits: w.commits + after.commits - before.commits,
      commitSeconds: w.commitSeconds + after.commitSeconds - before.commitSeconds,
      seconds: w.seconds + seconds,
    };
  }

  result(): InstanceResult {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return { label: this.label, requestsPerSecond: this.responses / this.seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), writer: this.writer };
  }
}

/** One scenario's figures, summed over its slices. */
class Tally {
  seconds = 0;
  responses = 0;
  ok2xx = 0;
  non2xx = 0;
  errors = 0;
  timeouts = 0;
  creditsCharged: number | undefined;
  readonly statusCounts = new Map<string, number>();
  readonly failureSamples = new Map<number, string>();
  readonly loads: number[] = [];
  readonly cpuSeconds = new Map<string, number>();
  loadGeneratorSeconds = 0;
  private readonly instances = new Map<string, InstanceTally>();

  constructor(readonly scenario: string) {}

  instance(label: string): InstanceTally {
    let instance = this.instances.get(label);
    if (!instance) this.instances.set(label, (instance = new InstanceTally(label)));
    return instance;
  }

  result(): LoadResult {
    const sorted = [...this.instances.values()].flatMap((i) => i.latencies).sort((a, b) => a - b);
    return {
      scenario: this.scenario,
      requestsPerSecond: this.responses / this.seconds,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      total: this.responses,
      ok2xx: this.ok2xx,
      non2xx: this.non2xx,
      errors: this.errors,
      timeouts: this.timeouts,
      statusCodes: [...this.statusCounts].map(([code, n]) => `${code}:${n}`).join(' '),
      failureSamples: [...this.failureSamples].map(([status, body]) => `${status} ${body}`),
      creditsCharged: this.creditsCharged,
      load: `load average ${Math.min(...this.loads).toFixed(1)}-${Math.max(...this.loads).toFixed(1)}`,
      cpuPerRequestUs: new Map([...this.cpuSeconds].map(([name, seconds]) => [name, (seconds / this.responses) * 1e6])),
      loadGeneratorUsPerRequest: (this.loadGeneratorSeconds / this.responses) * 1e6,
      instances: [...this.instances.values()].map((i) => i.result()),
    };
  }
}

/** The writer's counters from an instance's /metrics (admin token: it is served on the main port). */
async function readWriterCounts(target: Target): Promise<WriterCounts | undefined> {
  if (!target.metricsUrl) return undefined;
  const response = await fetch(`${target.metricsUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
  const text = await response.text();
  const sample = (series: string, required: boolean) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    if (!line && required) throw new Error(`/metrics has no ${series}: renamed in services/metrics/metrics.ts?`);
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  return {
    batches: sample('lookup_api_writer_batch_size_count', true),
    jobs: sample('lookup_api_writer_batch_size_sum', true),
    // A labelled series appears with its first observation.
    commits: sample('lookup_api_writer_commit_duration_seconds_count{result="committed"}', false),
    commitSeconds: sample('lookup_api_writer_commit_duration_seconds_sum{result="committed"}', false),
  };
}

/** Groups of the same name (e.g. 'service' of two instances) become one, their processes summed. */
function mergeGroups(groups: ProcessGroup[]): ProcessGroup[] {
  const byName = new Map<string, ProcessGroup[]>();
  for (const g of groups) byName.set(g.name, [...(byName.get(g.name) ?? []), g]);
  return [...byName].map(([name, same]) => ({ name, pids: () => [...new Set(same.flatMap((g) => g.pids()))] }));
}

/**
 * One autocannon run with the settings every scenario shares. Every request carries a unique id in
 * a header (`[<id>]` replaced per request), so the client's per-request work is the same whether
 * the id is the Idempotency-Key or an inert header.
 */
function loadTarget(target: Target, connections: number, seconds: number, instance: InstanceTally, failureSamples: Map<number, string>): Promise<autocannon.Result> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${target.key}` };
  headers[target.idempotent ? 'idempotency-key' : 'x-bench-id'] = 'bench-[<id>]';
  return new Promise<autocannon.Result>((done, fail) => {
    const run = autocannon(
      {
        url: target.url,
        connections,
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
      },
      (err, res) => (err ? fail(err) : done(res)),
    );
    // Every 2xx latency, so slices (and instances) of one scenario combine into exact percentiles.
    run.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) instance.latencies.push(responseTime);
    });
  });
}

/**
 * One slice of a scenario. Several targets (instances) are loaded at once, the CONNECTIONS split
 * evenly between their load generators, so 2 instances take the same total load as 1.
 */
async function runSlice(load: Target | Target[], seconds: number, tally: Tally): Promise<void> {
  const targets = Array.isArray(load) ? load : [load];
  const workspaces = [...new Set(targets.flatMap((t) => (t.workspace ? [t.workspace] : [])))];
  const processes = mergeGroups(targets.flatMap((t) => t.processes ?? []));
  const balancesBefore = await Promise.all(workspaces.map((w) => w.balance()));
  const writerBefore = await Promise.all(targets.map(readWriterCounts));
  tally.loads.push(loadavg()[0]!);
  const cpuBefore = readCpu(processes);
  const generatorBefore = process.cpuUsage();
  const results = await Promise.all(
    targets.map((t) => loadTarget(t, CONNECTIONS / targets.length, seconds, tally.instance(t.label ?? 'instance'), tally.failureSamples)),
  );
  const generator = process.cpuUsage(generatorBefore);
  tally.loadGeneratorSeconds += (generator.user + generator.system) / 1e6;
  for (const [name, spent] of cpuBetween(cpuBefore, readCpu(processes))) {
    tally.cpuSeconds.set(name, (tally.cpuSeconds.get(name) ?? 0) + spent);
  }
  tally.loads.push(loadavg()[0]!);
  // Let in-flight charges land before reading the balance and the writer's counters.
  if (workspaces.length > 0) await new Promise((r) => setTimeout(r, 500));
  const writerAfter = await Promise.all(targets.map(readWriterCounts));
  tally.seconds += Math.max(...results.map((r) => r.duration));
  for (const [i, result] of results.entries()) {
    const instance = tally.instance(targets[i]!.label ?? 'instance');
    const responses = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
    instance.responses += responses;
    instance.seconds += result.duration;
    instance.addWriter(writerBefore[i], writerAfter[i], result.duration);
    tally.responses += responses;
    tally.ok2xx += result['2xx'];
    tally.non2xx += result.non2xx;
    tally.errors += result.errors;
    tally.timeouts += result.timeouts;
    for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
      tally.statusCounts.set(code, (tally.statusCounts.get(code) ?? 0) + (stat.count ?? 0));
    }
  }
  if (workspaces.length > 0) {
    const balancesAfter = await Promise.all(workspaces.map((w) => w.balance()));
    const spent = balancesBefore.reduce((sum, before, i) => sum + before - balancesAfter[i]!, 0);
    tally.creditsCharged = (tally.creditsCharged ?? 0) + spent;
  }
}

/**
 * Scenarios compared with one another run interleaved (A B C A B C), half of the time each round,
 * so a change in background load (other processes on 2 cores) hits them alike.
 */
async function interleave(scenarios: { name: string; target: Target | Target[] }[], seconds: number): Promise<LoadResult[]> {
  const tallies = scenarios.map((s) => new Tally(s.name));
  // Untimed: connections, pools, JIT and caches settle before anything counts.
  for (const { target } of scenarios) await runSlice(target, WARM_UP_SECONDS, new Tally('warm-up'));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, { name, target }] of scenarios.entries()) {
      const tally = tallies[i]!;
      const [responses, elapsed] = [tally.responses, tally.seconds];
      await runSlice(target, seconds / ROUNDS, tally);
      const perSecond = (tally.responses - responses) / (tally.seconds - elapsed);
      console.log(`    round ${round + 1}/${ROUNDS} ${name}: ${fmt(perSecond)} req/s (${machineLoad()})`);
    }
  }
  const results = tallies.map((t) => t.result());
  for (const r of results) console.log(`  ${r.scenario}: ${fmt(r.requestsPerSecond)} req/s, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`);
  return results;
}

/**
 * Charged targets on one or more instances of one database: one fresh key (a full rate-limit
 * bucket) shared by all, as one client behind a load balancer; the cache entry checked through each.
 */
async function chargedTargets(instances: ServerChild[], ws: Workspace, name: string, idempotent: boolean, servers: ProcessGroup[] = []): Promise<Target[]> {
  const key = await ws.newKey(name);
  const targets: Target[] = [];
  for (const [i, api] of instances.entries()) {
    const label = instances.length === 1 ? 'instance' : `instance ${i + 1}`;
    const warm = await lookupOnce(api.url, key);
    if (warm.cache !== 'HIT') throw new Error(`${name}, ${label}: expected a cache HIT before the load, got ${warm.cache}`);
    targets.push({ url: api.url, key, idempotent, label, workspace: ws, metricsUrl: api.url, processes: [singleProcess('service', api.pid), ...servers] });
  }
  return targets;
}

/**
 * BENCH_ONLY=ab: the charged hit (a) against one variant instance on the same database, Redis and
 * workspace (BENCH_VARIANT's setting, or BENCH_VARIANT_TREE's code), interleaved, nothing else.
 */
async function abRun(env: Record<string, string>, ws: Workspace, hit: Target, servers: ProcessGroup[], seconds: number, databaseUrl: string) {
  const variantEnv = process.env.BENCH_VARIANT?.split('=');
  const tree = process.env.BENCH_VARIANT_TREE;
  if (!variantEnv && !tree) throw new Error('BENCH_ONLY=ab needs BENCH_VARIANT=NAME=value or BENCH_VARIANT_TREE=/path');
  // `{database}` in the value: the run's scratch database (e.g. DATABASE_URL over another socket).
  const value = variantEnv?.slice(1).join('=').replaceAll('{database}', new URL(env.DATABASE_URL!).pathname.slice(1));
  const variant = await startChild('api', variantEnv ? { ...env, [variantEnv[0]!]: value! } : env, [], tree);
  try {
    const name = `${PG_HIT}, ${variantEnv ? process.env.BENCH_VARIANT : `code of ${tree}`}`;
    const target = await chargedTarget(variant, ws, 'variant', false, servers);
    const results = await interleave([{ name: PG_HIT, target: hit }, { name, target }], seconds);
    // BENCH_AB_STEADY=1: the steady rates too, the variant in the bare route's place.
    const steady = process.env.BENCH_AB_STEADY === '1' ? await steadyRun(hit, { scenario: name, target }, databaseUrl, benchSeconds(10, 'BENCH_STEADY_SECONDS')) : undefined;
    return { results, steady };
  } finally {
    await variant.stop();
  }
}

const chargedTarget = async (api: ServerChild, ws: Workspace, name: string, idempotent: boolean, servers: ProcessGroup[] = []) =>
  (await chargedTargets([api], ws, name, idempotent, servers))[0]!;

// ---------------------------------------------------------------------------------------------

async function benchPostgres(seconds: number, latencyOnly: boolean, abOnly = false) {
  const database = await createScratchDatabase('bench_http');
  const naiveDatabase = await createScratchDatabase('bench_naive');
  let results: LoadResult[] = [];
  let hitBody: unknown;
  let profile: { summary: ProfileSummary; result: LoadResult } | undefined;
  let memory: MemoryRun | undefined;
  let storage: StorageFigures | undefined;
  let redisKeys: RedisKeySample[] | undefined;
  let steady: SteadyRun | undefined;
  try {
    const env = { PORT: '0', DATABASE_URL: database.url, SOURCE_URL: 'sandbox', REDIS_URL, ADMIN_TOKEN, LOG_LEVEL: 'silent' };
    // BENCH_ONLY=profile: only the profiled run below (a quick look at where the CPU goes).
    const api = process.env.BENCH_ONLY === 'profile' ? undefined : await startChild('api', env);
    if (api) try {
      const ws = await createWorkspace(api.url);
      const first = await lookupOnce(api.url, await ws.newKey('warm-up'));
      console.log(`PostgreSQL + Redis: first lookup x-cache ${first.cache} (the cache is warm from here on)`);
      const servers = [postgresBackendsOf(database.name), postgresServerProcesses(), redisServer()];
      const hit = await chargedTarget(api, ws, 'hit', false, servers);
      const idempotent = latencyOnly || abOnly ? undefined : await chargedTarget(api, ws, 'hit-idempotent', true, servers);
      hitBody = (await lookupOnce(api.url, hit.key)).body;
      if (abOnly) {
        ({ results, steady } = await abRun(env, ws, hit, servers, seconds, database.url));
        return { results, hitBody, profile, memory, storage, redisKeys, steady };
      }
      const bare = await startChild('bare', { BENCH_BARE_BODY: JSON.stringify(hitBody) });
      const naive = await startChild('naive', {
        BENCH_BARE_BODY: JSON.stringify(hitBody),
        BENCH_NAIVE_DATABASE_URL: naiveDatabase.url,
        BENCH_NAIVE_REDIS_URL: REDIS_URL,
        BENCH_NAIVE_KEY: hit.key,
        BENCH_NAIVE_CREDITS: String(CREDITS),
        BENCH_NAIVE_MAX_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      });
      // A second instance on the same database, Redis and workspace: the scaling scenario.
      const second = latencyOnly ? undefined : await startChild('api', env);
      // BENCH_VARIANT=NAME=value: one more instance on the same database with that variable set,
      // interleaved with the others (A/B of a change behind a temporary switch).
      const variantEnv = process.env.BENCH_VARIANT?.split('=');
      const variant = variantEnv ? await startChild('api', { ...env, [variantEnv[0]!]: variantEnv.slice(1).join('=') }) : undefined;
      // (BENCH_VARIANT_TREE is BENCH_ONLY=ab's: abRun below.)
      try {
        const bareTarget: Target = { url: bare.url, key: hit.key, idempotent: false, processes: [singleProcess('service', bare.pid)] };
        const naiveTarget: Target = {
          url: naive.url,
          key: hit.key,
          idempotent: false,
          processes: [singleProcess('service', naive.pid), postgresBackendsOf(naiveDatabase.name), postgresServerProcesses(), redisServer()],
        };
        if ((await call(`${naive.url}/v1/company`, 'POST', JSON.parse(LOOKUP_BODY), { authorization: `Bearer ${hit.key}` })).status !== 200) {
          throw new Error('the naive service did not answer 200 before the load');
        }
        const twoInstances = second ? await chargedTargets([api, second], ws, 'two-instances', false, servers) : undefined;
        const scenarios: { name: string; target: Target | Target[] }[] = [
          { name: PG_HIT, target: hit },
          { name: BARE, target: bareTarget },
          { name: NAIVE, target: naiveTarget },
        ];
        if (idempotent) scenarios.push({ name: PG_IDEMPOTENT, target: idempotent });
        if (twoInstances) scenarios.push({ name: PG_TWO_INSTANCES, target: twoInstances });
        if (variant) scenarios.push({ name: `PostgreSQL+Redis, cache hit, ${process.env.BENCH_VARIANT}`, target: await chargedTarget(variant, ws, 'variant', false, servers) });
        results = await interleave(scenarios, seconds);
        steady = await steadyRun(hit, { scenario: BARE, target: bareTarget }, database.url, benchSeconds(10, 'BENCH_STEADY_SECONDS'));
        if (twoInstances) {
          [redisKeys] = await Promise.all([
            sleep(REDIS_SAMPLE_SECONDS * 500).then(() => sampleRedisKeys(database.url, REDIS_URL)),
            runSlice(twoInstances, REDIS_SAMPLE_SECONDS, new Tally('Redis sample')),
          ]);
        }
        if (!latencyOnly) memory = await memoryRun(hit, api, benchSeconds(60, 'BENCH_MEMORY_SECONDS'), benchSeconds(30, 'BENCH_MEMORY_WARMUP_SECONDS'));
      } finally {
        await bare.stop();
        await naive.stop();
        await second?.stop();
        await variant?.stop();
      }
    } finally {
      await api.stop();
    }

    if (!latencyOnly) profile = await profiledRun(env, seconds, !api);
    storage = await measureStorage(database.url);
  } finally {
    await database.drop();
    await naiveDatabase.drop();
  }
  return { results, hitBody, profile, memory, storage, redisKeys, steady };
}

/**
 * The same cache-hit load on a profiled instance (same database, cache already warm unless
 * `coldCache`). Only the latest profile is kept (about 1 MB each).
 */
async function profiledRun(env: Record<string, string>, seconds: number, coldCache: boolean) {
  for (const old of readdirSync(RUN_DIR).filter((f) => f.startsWith('cpuprof-'))) rmSync(resolve(RUN_DIR, old), { recursive: true, force: true });
  const profileDir = resolve(RUN_DIR, `cpuprof-${Date.now()}`);
  mkdirSync(profileDir, { recursive: true });
  const profiled = await startChild('api', env, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  const tally = new Tally('PostgreSQL+Redis, cache hit, under --cpu-prof');
  let window: { startUs: number; endUs: number };
  try {
    const profiledWs = await createWorkspace(profiled.url);
    if (coldCache) await lookupOnce(profiled.url, await profiledWs.newKey('warm-up')); // the cache is cold in a profile-only run
    const target = await chargedTarget(profiled, profiledWs, 'profiled', false);
    await runSlice(target, WARM_UP_SECONDS, new Tally('warm-up'));
    const startUs = await profiled.mark('start');
    // No balance or /metrics reads around this run: the window holds the load and nothing else.
    await runSlice({ ...target, workspace: undefined, metricsUrl: undefined }, seconds, tally);
    window = { startUs, endUs: await profiled.mark('end') };
  } finally {
    await profiled.stop();
  }
  const result = tally.result();
  console.log(`  ${result.scenario}: ${fmt(result.requestsPerSecond)} req/s, non-2xx ${result.non2xx}; profile under ${profileDir} (gitignored)`);
  return { summary: summarizeProfile(readMainProfile(profileDir), REPO_ROOT, window), result };
}

/** One offered rate of the steady-rate scenario (h) on one target, summed over its slices. */
interface SteadyResult {
  scenario: string;
  rate: number;
  seconds: number;
  scheduled: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  statusCodes: string;
  firstError: string | undefined;
  /** Answers a second, from each slice's first due instant to its last answer. */
  achieved: number;
  latency: LatencySummary;
  /** p99 of how late the generator queued a request after its due instant (its own lateness, in the latencies too). */
  dispatchLagP99: number;
  /** µs per answered request, per serving process group (/proc), and of this process (the generator). */
  cpuPerRequestUs: Map<string, number>;
  loadGeneratorUsPerRequest: number;
  load: string;
  /** The longest wait for a quiet service before one of its slices (untilQuiet). */
  quietWaitSeconds: number;
}

interface SteadyRun {
  results: SteadyResult[];
  /** Every table's writes per charged hit over the whole steady-rate scenario (warm-up included). */
  writes: WritesPerHit[];
  hits: number;
}

const QUIET_CORES = 0.05;
const QUIET_TIMEOUT_SECONDS = 120;

/**
 * Waits until `processes` together use under QUIET_CORES of a core over a quarter second (at most
 * QUIET_TIMEOUT_SECONDS); the seconds waited.
 */
async function untilQuiet(processes: ProcessGroup[]): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < QUIET_TIMEOUT_SECONDS * 1000) {
    const before = readCpu(processes);
    const windowStarted = Date.now();
    await sleep(250);
    const spent = [...cpuBetween(before, readCpu(processes)).values()].reduce((a, b) => a + b, 0);
    if (spent / ((Date.now() - windowStarted) / 1000) < QUIET_CORES) return (Date.now() - started) / 1000;
  }
  console.log(`    (still busy after ${QUIET_TIMEOUT_SECONDS} s: the slice starts anyway)`);
  return QUIET_TIMEOUT_SECONDS;
}

/**
 * (h): the charged hit, and the bare route as the floor of what the generator and the machine add,
 * at each fixed arrival rate over STEADY_CONNECTIONS connections, interleaved over ROUNDS rounds;
 * every table's write counters read before and after (each reading waits for PostgreSQL to flush
 * the backends' counters). Only the charged hit writes, so the writes are per charged hit.
 */
async function steadyRun(charged: Target, other: { scenario: string; target: Target }, databaseUrl: string, seconds: number): Promise<SteadyRun> {
  const rates = steadyRates();
  const runs = [{ scenario: PG_HIT, target: charged }, other].flatMap((s) => rates.map((rate) => ({ ...s, rate })));
  const acc = runs.map(() => ({ latencies: [] as number[], lags: [] as number[], scheduled: 0, ok2xx: 0, non2xx: 0, errors: 0, elapsed: 0, generator: 0,
    statuses: new Map<number, number>(), cpu: new Map<string, number>(), loads: [] as number[], quietWaits: [] as number[], firstError: undefined as string | undefined }));
  console.log(`  steady rates ${rates.join(', ')} req/s, ${STEADY_CONNECTIONS} connections, open loop: reading the tables' write counters first`);
  const writesBefore = await readTableWrites(databaseUrl);
  const balanceBefore = await charged.workspace?.balance();
  const slice = (target: Target, rate: number, sliceSeconds: number, id: string) =>
    runOpenLoop({
      url: target.url, path: '/v1/company', headers: { 'content-type': 'application/json', authorization: `Bearer ${target.key}` }, body: LOOKUP_BODY,
      ratePerSecond: rate, connections: STEADY_CONNECTIONS, seconds: sliceSeconds, idHeader: target.idempotent ? 'idempotency-key' : 'x-bench-id', idPrefix: id,
    });
  // Untimed: one second at the lowest rate on each target, so the first slice does not open the connections.
  for (const target of [charged, other.target]) await slice(target, Math.min(...rates), 1, `steady-warm-up-${Date.now()}`);
  // Each slice starts on a quiet service: an earlier slice's work still under way (the projections
  // catching up after the overloaded rate) is not billed to the next one's latency and CPU.
  const serving = mergeGroups(charged.processes ?? []);
  for (let round = 0; round < ROUNDS; round++) {
    // Rate by rate, the two targets one after the other: each pair meets the same background load.
    for (const i of rates.flatMap((_, r) => [r, rates.length + r])) {
      const { scenario, target, rate } = runs[i]!;
      const processes = mergeGroups(target.processes ?? []);
      const a = acc[i]!;
      a.quietWaits.push(await untilQuiet(serving));
      a.loads.push(loadavg()[0]!);
      const cpuBefore = readCpu(processes);
      const generatorBefore = process.cpuUsage();
      const r = await slice(target, rate, seconds / ROUNDS, `steady-${rate}-${round}-${Date.now()}`);
      const generator = process.cpuUsage(generatorBefore);
      for (const [name, spent] of cpuBetween(cpuBefore, readCpu(processes))) a.cpu.set(name, (a.cpu.get(name) ?? 0) + spent);
      a.generator += (generator.user + generator.system) / 1e6;
      a.loads.push(loadavg()[0]!);
      for (const x of r.latencies) a.latencies.push(x);
      for (const x of r.dispatchLags) a.lags.push(x);
      for (const [code, n] of r.statusCounts) a.statuses.set(code, (a.statuses.get(code) ?? 0) + n);
      a.scheduled += r.scheduled;
      a.ok2xx += r.ok2xx;
      a.non2xx += r.non2xx;
      a.errors += r.errors;
      a.firstError ??= r.firstError;
      a.elapsed += r.elapsedSeconds;
      const s = summarize(r.latencies);
      console.log(`    round ${round + 1}/${ROUNDS} ${scenario}, ${rate} req/s offered: ${fmt(r.ok2xx / r.elapsedSeconds)} answered/s, p50 ${fmt(s.p50, 2)} ms, p99 ${fmt(s.p99, 2)} ms (${machineLoad()})`);
    }
  }
  console.log('  steady rates done: reading the tables\' write counters again');
  const balanceAfter = await charged.workspace?.balance();
  const writesAfter = await readTableWrites(databaseUrl);
  const hits = balanceBefore !== undefined && balanceAfter !== undefined ? balanceBefore - balanceAfter : 0;
  const results = runs.map(({ scenario, rate }, i): SteadyResult => {
    const a = acc[i]!;
    const answered = a.ok2xx + a.non2xx;
    return {
      scenario,
      rate,
      seconds,
      scheduled: a.scheduled,
      ok2xx: a.ok2xx,
      non2xx: a.non2xx,
      errors: a.errors,
      statusCodes: [...a.statuses].map(([code, n]) => `${code}:${n}`).join(' '),
      firstError: a.firstError,
      achieved: answered / a.elapsed,
      latency: summarize(a.latencies),
      dispatchLagP99: percentile(Float64Array.from(a.lags).sort(), 99),
      cpuPerRequestUs: new Map([...a.cpu].map(([name, spent]) => [name, (spent / answered) * 1e6])),
      loadGeneratorUsPerRequest: (a.generator / answered) * 1e6,
      load: `load average ${Math.min(...a.loads).toFixed(1)}-${Math.max(...a.loads).toFixed(1)}`,
      quietWaitSeconds: Math.max(...a.quietWaits),
    };
  });
  return { results, writes: hits > 0 ? writesPerHit(writesBefore, writesAfter, hits) : [], hits };
}

interface MemoryRun {
  seconds: number;
  /** The same load first, not sampled. */
  warmupSeconds: number;
  /** RSS (MB) every 5 s of the run; the first is taken 5 s in. */
  samples: number[];
  /** The heap in use (MB) after each mark-compact of the run. */
  heapAfterMajorGcs: number[];
  result: LoadResult;
}

/**
 * The charged cache-hit load for `seconds` at once, the service's RSS read every 5 s, after
 * `warmupSeconds` of the same load: after the lighter loads before it, the heap takes 20-30 s of
 * this one to grow to where it settles (docs/performance.md, "seventh session").
 */
async function memoryRun(target: Target, server: ServerChild, seconds: number, warmupSeconds: number): Promise<MemoryRun> {
  const load = { ...target, workspace: undefined };
  if (warmupSeconds > 0) await runSlice(load, warmupSeconds, new Tally('memory run warm-up'));
  await server.majorGcs();
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMb(server.pid)), 5_000);
  const tally = new Tally(`PostgreSQL+Redis, cache hit, ${seconds} s in one run`);
  try {
    await runSlice(load, seconds, tally);
  } finally {
    clearInterval(sampler);
  }
  const result = tally.result();
  const heapAfterMajorGcs = await server.majorGcs();
  console.log(`  memory run: ${fmt(result.requestsPerSecond)} req/s over ${seconds} s after ${warmupSeconds} s of warm-up; RSS ${samples.map((m) => m.toFixed(0)).join(' ')} MB`);
  return { seconds, warmupSeconds, samples, heapAfterMajorGcs, result };
}

/**
 * PGlite runs in the server's own thread, so under this load its queries hold the event loop and
 * the load shedder (event-loop delay p99 > MAX_EVENT_LOOP_DELAY_MS, default 1000) answers 503
 * no_capacity. The charged-lookup capacity is measured with that bound lifted (60 s); the default
 * set-up runs once more so its shedding shows in the table.
 */
async function benchPglite(seconds: number) {
  const results: LoadResult[] = [];
  for (const variant of ['shedding bound lifted', 'default settings'] as const) {
    const dataDir = resolve(RUN_DIR, `pglite-http-${process.pid}`);
    rmSync(dataDir, { recursive: true, force: true });
    const env: Record<string, string> = { PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent' };
    if (variant === 'shedding bound lifted') env.MAX_EVENT_LOOP_DELAY_MS = '60000';
    const api = await startChild('api', env);
    try {
      const ws = await createWorkspace(api.url);
      const first = await lookupOnce(api.url, await ws.newKey('warm-up'));
      console.log(`PGlite (embedded, in-process limits, ${variant}): first lookup x-cache ${first.cache}`);
      const scenarios = [{ name: `PGlite, cache hit (${variant})`, target: await chargedTarget(api, ws, 'hit', false) }];
      if (variant === 'shedding bound lifted') {
        scenarios.push({ name: `PGlite, cache hit + Idempotency-Key (${variant})`, target: await chargedTarget(api, ws, 'hit-idempotent', true) });
      }
      results.push(...(await interleave(scenarios, seconds)));
    } finally {
      await api.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return results;
}

function printHttpResults(results: LoadResult[], hitBody: unknown) {
  const by = (scenario: string) => results.find((r) => r.scenario === scenario);
  const pgHit = by(PG_HIT);
  const bare = by(BARE);
  const pgIdem = by(PG_IDEMPOTENT);
  const pgTwo = by(PG_TWO_INSTANCES);
  const liteHit = by(LITE_HIT);
  const liteIdem = by(LITE_IDEMPOTENT);
  const rate = (a: LoadResult | undefined, b: LoadResult | undefined) => (a && b ? ratio(a.requestsPerSecond, b.requestsPerSecond) : '-');

  say(`\n== HTTP: POST /v1/company ${LOOKUP_BODY}, ${CONNECTIONS} connections, pipelining 1 ==`);
  say(`response body: ${Buffer.byteLength(JSON.stringify(hitBody ?? null))} bytes of JSON (the bare route sends the same object)`);
  const rows: (string | number)[][] = [['scenario', 'req/s', 'p50 ms', 'p99 ms', 'requests', '2xx', 'non-2xx', 'errors', 'timeouts', 'credits charged']];
  for (const r of results) {
    rows.push([r.scenario, fmt(r.requestsPerSecond), fmt(r.p50, 1), fmt(r.p99, 1), r.total, r.ok2xx, r.non2xx, r.errors, r.timeouts, r.creditsCharged ?? '-']);
  }
  say(table(rows));
  for (const r of results) {
    if (r.non2xx === 0 && r.errors === 0) continue;
    say(`  ${r.scenario}: status codes ${r.statusCodes}; errors ${r.errors}`);
    for (const sample of r.failureSamples) say(`    e.g. ${sample}`);
  }
  say(`machine load during each scenario (1-minute average, 2 cores): ${results.map((r) => `${r.scenario}: ${r.load}`).join('; ')}`);
  say('\nratios (req/s):');
  say(`  charged cache hit / bare Fastify (PostgreSQL+Redis)     ${rate(pgHit, bare)}`);
  say(`  with Idempotency-Key / without (PostgreSQL+Redis)       ${rate(pgIdem, pgHit)}`);
  say(`  with Idempotency-Key / without (PGlite, bound lifted)   ${rate(liteIdem, liteHit)}`);
  say(`  PGlite (bound lifted) / PostgreSQL+Redis (cache hit)    ${rate(liteHit, pgHit)}`);
  say(`  2 instances / 1 instance on one database (cache hit)    ${rate(pgTwo, pgHit)}`);
  say(`  charged cache hit / naive service (PostgreSQL+Redis)    ${rate(pgHit, by(NAIVE))}`);
  const bad = results.filter((r) => r.non2xx > 0 || r.errors > 0);
  say(bad.length === 0 ? 'every response was 2xx' : `NOT every response was 2xx: ${bad.map((r) => r.scenario).join(', ')}`);
}

/** Lines of the summary, also written to docs/performance.md. */
const report: string[] = [];
function say(line: string) {
  console.log(line);
  report.push(line);
}

/** Lines written to docs/scaling.md as well. */
const scalingReport: string[] = [];
function sayScaling(line: string) {
  say(line);
  scalingReport.push(line);
}

/**
 * What one PostgreSQL primary does for 1 and 2 instances: throughput, latency, CPU per request and
 * the batching writers' group commits (from each instance's /metrics); then what the run stored.
 */
function printScaling(results: LoadResult[], storage: StorageFigures | undefined, redisKeys: RedisKeySample[] | undefined) {
  const by = (scenario: string) => results.find((r) => r.scenario === scenario);
  const [one, two] = [by(PG_HIT), by(PG_TWO_INSTANCES)];
  sayScaling(`\n== Group commit on one PostgreSQL primary: 1 and 2 instances, one workspace, ${CONNECTIONS} connections in all ==`);
  const perSecond = (n: number, seconds: number) => fmt(n / seconds);
  const rows: (string | number)[][] = [
    ['scenario / instance', 'req/s', 'p50 ms', 'p99 ms', 'commits/s', 'charges per commit', 'ms per commit', 'in a transaction'],
  ];
  const writerCells = (w: InstanceResult['writer'], seconds = w?.seconds ?? NaN) =>
    w ? [perSecond(w.commits, seconds), (w.jobs / w.batches).toFixed(1), fmt((1000 * w.commitSeconds) / w.commits, 1), `${fmt((100 * w.commitSeconds) / seconds)}%`] : ['-', '-', '-', '-'];
  for (const r of results.filter((x) => x.instances.some((i) => i.writer))) {
    if (r.instances.length === 1) {
      rows.push([r.scenario, fmt(r.requestsPerSecond), fmt(r.p50, 1), fmt(r.p99, 1), ...writerCells(r.instances[0]!.writer)]);
      continue;
    }
    const writers = r.instances.flatMap((i) => (i.writer ? [i.writer] : []));
    const sum = (pick: (w: WriterCounts) => number) => writers.reduce((a, w) => a + pick(w), 0);
    // Both instances' load generators ran the same seconds at once: the window is one instance's.
    const seconds = writers[0]!.seconds;
    rows.push([`${r.scenario} (together)`, fmt(r.requestsPerSecond), fmt(r.p50, 1), fmt(r.p99, 1),
      ...writerCells({ batches: sum((w) => w.batches), jobs: sum((w) => w.jobs), commits: sum((w) => w.commits), commitSeconds: sum((w) => w.commitSeconds), seconds }, seconds)]);
    for (const i of r.instances) rows.push([`  ${i.label}`, fmt(i.requestsPerSecond), fmt(i.p50, 1), fmt(i.p99, 1), ...writerCells(i.writer)]);
  }
  sayScaling(table(rows));
  sayScaling(
    '(p50/p99 of several instances: every response of both together, exact; commits and charges from lookup_api_writer_batch_size and ' +
      '_commit_duration_seconds of each /metrics; ms per commit: BEGIN to COMMIT, waits for the workspace row lock included; ' +
      '"in a transaction": share of the time a writer had one open, summed over instances)',
  );
  if (one && two) {
    const cpu = (r: LoadResult) => [...r.cpuPerRequestUs].map(([name, us]) => `${name.replace(/ \(.*$/, '')} ${fmt(us)}`).join(', ');
    const totalCpu = (r: LoadResult) => fmt([...r.cpuPerRequestUs.values()].reduce((a, b) => a + b, 0));
    sayScaling(`2 instances / 1 instance: ${ratio(two.requestsPerSecond, one.requestsPerSecond)} in req/s`);
    sayScaling(`server CPU per request (µs, /proc): 1 instance ${totalCpu(one)} (${cpu(one)}); 2 instances ${totalCpu(two)} (${cpu(two)})`);
    sayScaling(`machine load: 1 instance ${one.load}, 2 instances ${two.load}`);
  }
  if (storage) {
    sayScaling('\n== Storage after the run (the scratch database of the PostgreSQL scenarios, before it is dropped) ==');
    for (const line of storageLines(storage)) sayScaling(line);
  }
  if (redisKeys) {
    sayScaling(`\nRedis keys naming the run's API keys or workspaces, ${REDIS_SAMPLE_SECONDS / 2} s into a ${REDIS_SAMPLE_SECONDS} s load on both instances:`);
    for (const line of redisLines(redisKeys)) sayScaling(line);
  }
}

/** The targets of docs/performance.md, judged in the targets table and budgeted in printBudgets. */
const TARGETS: Targets = { ratio: 0.35, p99: 20, cpuRatio: 3, liteRatio: 0.15, liteP99: 50, rssGrowth: 0.1 };

interface Targets {
  ratio: number;
  p99: number;
  cpuRatio: number;
  liteRatio: number;
  liteP99: number;
  rssGrowth: number;
}

/** Server CPU per request, per process group, from /proc; and the issue's targets, met or not. */
function printCpuAndTargets(results: LoadResult[], memory: MemoryRun | undefined) {
  const by = (scenario: string) => results.find((r) => r.scenario === scenario);
  const pgHit = by(PG_HIT);
  const bare = by(BARE);
  const liteHit = by(LITE_HIT);
  say('\n== Server CPU per request (user + system, from /proc; µs) ==');
  const rows: (string | number)[][] = [['scenario', 'process', 'µs per request']];
  for (const r of results) {
    let total = 0;
    for (const [name, us] of r.cpuPerRequestUs) {
      rows.push([r.scenario, name, fmt(us)]);
      total += us;
    }
    if (r.cpuPerRequestUs.size > 1) rows.push([r.scenario, 'total', fmt(total)]);
    rows.push([r.scenario, LOAD_GENERATOR, fmt(r.loadGeneratorUsPerRequest)]);
  }
  say(table(rows));
  if (results.some((r) => r.instances.length > 1)) say('(several instances: "service" is their processes together)');
  const total = (r: LoadResult | undefined) => (r ? [...r.cpuPerRequestUs.values()].reduce((a, b) => a + b, 0) : NaN);
  say('(redis-server and the postgres server processes are shared with anything else using those servers meanwhile)');
  say(`(${LOAD_GENERATOR}: this process's CPU while it drives autocannon, on the same cores; not in the total)`);

  let growth = NaN;
  if (memory && memory.samples.length >= 3) {
    // RSS swings by a third between two samples as V8's heap grows and is collected, so one sample
    // against another says more about where each fell in that swing than about growth: the mean
    // of the last third of the samples is compared with that of the first third.
    const third = Math.floor(memory.samples.length / 3);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const [early, late] = [mean(memory.samples.slice(0, third)), mean(memory.samples.slice(-third))];
    growth = (late - early) / early;
    const firstToLast = (memory.samples.at(-1)! - memory.samples[0]!) / memory.samples[0]!;
    say(`\n== Service memory over one ${memory.seconds} s charged cache-hit run (${fmt(memory.result.requestsPerSecond)} req/s), after ${memory.warmupSeconds} s of the same load ==`);
    say(`RSS every 5 s (MB): ${memory.samples.map((m) => m.toFixed(1)).join(', ')}; max ${Math.max(...memory.samples).toFixed(1)} MB`);
    say(`growth, mean of the last third of the samples against the first third: ${(100 * growth).toFixed(1)}% (first sample to last: ${(100 * firstToLast).toFixed(1)}%)`);
    const heap = memory.heapAfterMajorGcs;
    // RSS keeps the heap's highest peak so far; what a leak grows is what each mark-compact leaves.
    const change = heap.length >= 2 ? `; last against first: ${((100 * (heap.at(-1)! - heap[0]!)) / heap[0]!).toFixed(1)}%` : '';
    say(`heap in use after each mark-compact (MB): ${heap.length === 0 ? 'no mark-compact in the run' : heap.map((m) => m.toFixed(1)).join(', ')}${change}`);
  }

  const t: Targets = {
    ratio: pgHit && bare ? pgHit.requestsPerSecond / bare.requestsPerSecond : NaN,
    p99: pgHit?.p99 ?? NaN,
    cpuRatio: total(pgHit) / total(bare),
    liteRatio: liteHit && bare ? liteHit.requestsPerSecond / bare.requestsPerSecond : NaN,
    liteP99: liteHit?.p99 ?? NaN,
    rssGrowth: growth,
  };
  const check = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const T = TARGETS;
  say('\n== Targets ==');
  say(table([
    ['target', 'measured', ''],
    [`charged hit / bare Fastify >= ${T.ratio} (PostgreSQL+Redis)`, t.ratio.toFixed(3), check(t.ratio >= T.ratio)],
    [`p99 <= ${T.p99} ms at ${CONNECTIONS} connections (PostgreSQL+Redis)`, `${fmt(t.p99, 1)} ms`, check(t.p99 <= T.p99)],
    [`server CPU per hit <= ${T.cpuRatio}x bare Fastify per request`, `${t.cpuRatio.toFixed(2)}x`, check(t.cpuRatio <= T.cpuRatio)],
    [`embedded (PGlite) hit / bare Fastify >= ${T.liteRatio}`, t.liteRatio.toFixed(3), check(t.liteRatio >= T.liteRatio)],
    [`embedded p99 <= ${T.liteP99} ms`, `${fmt(t.liteP99, 1)} ms`, check(t.liteP99 <= T.liteP99)],
    [`RSS growth over the run <= ${100 * T.rssGrowth}% (last third / first third)`, `${(100 * t.rssGrowth).toFixed(1)}%`, check(t.rssGrowth <= T.rssGrowth)],
  ]));
  if (pgHit && bare) printBudgets(pgHit, bare, liteHit);
}

const LOAD_GENERATOR = 'load generator (autocannon)';

/** A scenario's CPU per request split as the budgets take it. */
function measuredHit(r: LoadResult): MeasuredHit {
  const sum = (pick: (name: string) => boolean) => [...r.cpuPerRequestUs].reduce((a, [name, us]) => a + (pick(name) ? us : 0), 0);
  return {
    service: sum((name) => name === 'service'),
    database: sum((name) => name.startsWith('postgres')),
    redis: sum((name) => name.startsWith('redis')),
    loadGenerator: r.loadGeneratorUsPerRequest,
  };
}

/** What each target leaves for the service's CPU per hit on this machine (test/bench/cpu-budget.ts says how). */
function printBudgets(pgHit: LoadResult, bare: LoadResult, liteHit: LoadResult | undefined) {
  const cores = availableParallelism();
  const bareUs = measuredHit(bare).service;
  const pg = measuredHit(pgHit);
  const rows: (string | number)[][] = [['target', 'µs per hit, all', 'taken by the others', 'left for the service', 'service now', 'verdict']];
  const row = (name: string, budget: Budget, hit: MeasuredHit) =>
    rows.push([
      name,
      fmt(budget.perHit),
      fmt(budget.others),
      `${fmt(budget.leftForService)}${budget.oneThread === undefined ? '' : ` (its one thread: ${fmt(budget.oneThread)})`}`,
      fmt(hit.service),
      verdict(budget, hit.service, bareUs),
    ]);
  const { ratio: pgRatio, cpuRatio, liteRatio } = TARGETS;
  row(`${pgRatio}x bare: ${fmt(pgRatio * bare.requestsPerSecond)} hits/s on ${cores} cores (PostgreSQL+Redis)`, throughputBudget(pgRatio, bare.requestsPerSecond, cores, pg), pg);
  row(`server CPU <= ${cpuRatio}x bare's ${fmt(bareUs)} µs (PostgreSQL+Redis)`, serverCpuBudget(cpuRatio, bareUs, pg), pg);
  if (liteHit) {
    const lite = measuredHit(liteHit);
    row(`${liteRatio}x bare: ${fmt(liteRatio * bare.requestsPerSecond)} hits/s on ${cores} cores (PGlite)`, throughputBudget(liteRatio, bare.requestsPerSecond, cores, lite, true), lite);
  }
  say(`\n== What the targets leave for the service on this machine (µs of CPU per hit, from this run's figures) ==`);
  say(table(rows));
  say(
    `(a throughput target fixes the hits a second the ${cores} cores must serve, hence the CPU one hit may cost in all even with every core ` +
      `busy all the time; "the others": the load generator, PostgreSQL and Redis as measured above (for the CPU target, PostgreSQL and ` +
      `Redis); PGlite runs in the service's thread, which can give at most 1 s of CPU a second; the bare route's ${fmt(bareUs)} µs is ` +
      'the floor of any route that reads the same request and sends the same body)',
  );
}

/** Issue 27's targets, and its figures when it was opened (measured from outside, the same bench). */
const ISSUE_27 = { steadyRate: 1000, steadyP50: 1.5, steadyP99: 8, bareRatio: 0.2, naiveRatio: 8, cpuPerHitUs: 120, liteP99: 30 };

/** The steady-rate scenario (h): latency as a caller sees it at each offered rate. */
function printSteady(steady: SteadyRun) {
  const first = steady.results[0];
  say(`\n== Steady rate: ${STEADY_CONNECTIONS} connections, open loop, ${first ? first.seconds : '-'} s per rate and target in ${ROUNDS} interleaved rounds ==`);
  const rows: (string | number)[][] = [
    ['scenario', 'offered req/s', 'answered/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', '2xx', 'non-2xx', 'errors', 'server CPU µs/hit', 'generator CPU µs/req', 'generator late p99 ms', 'waited for quiet s', 'load'],
  ];
  for (const r of steady.results) {
    const server = [...r.cpuPerRequestUs.values()].reduce((a, b) => a + b, 0);
    rows.push([r.scenario, fmt(r.rate), fmt(r.achieved), fmt(r.latency.p50, 2), fmt(r.latency.p90, 2), fmt(r.latency.p99, 2), fmt(r.latency.max, 1), r.ok2xx, r.non2xx, r.errors,
      fmt(server), fmt(r.loadGeneratorUsPerRequest), fmt(r.dispatchLagP99, 2), fmt(r.quietWaitSeconds, 1), r.load]);
  }
  say(table(rows));
  for (const r of steady.results) if (r.non2xx > 0 || r.errors > 0) say(`  ${r.scenario}, ${fmt(r.rate)} req/s: status codes ${r.statusCodes}; errors ${r.errors}${r.firstError ? ` (first: ${r.firstError})` : ''}`);
  say(
    '(latency: from the instant each request was due to the end of its answer, queueing for a free connection included; ' +
      '"generator late": how late this process queued a request after its due instant (its timer, its event loop, the CPU it got), already inside the latencies; ' +
      'generator CPU: this process (open-loop.ts), on the same cores; ' +
      'server CPU: the service (+ for the charged hit its PostgreSQL backends, PostgreSQL\'s shared processes and redis-server), /proc, per answer; ' +
      'the bare route sends the same body: its latencies are what the generator and the machine add; ' +
      `"waited for quiet": before each slice, the longest wait until the charged hit's processes used under ${QUIET_CORES} of a core, so no slice pays for the one before, e.g. the projections catching up after the overloaded rate)`,
  );
  if (steady.writes.length > 0) {
    say(`\n== Writes per charged hit, every table (over the steady-rate scenario) ==`);
    for (const line of writesLines(steady.writes, steady.hits)) say(line);
  }
}

/** Issue 27's figures, each beside its target, from this run only ("-" where this run did not measure it). */
function printIssue27Targets(results: LoadResult[], steady: SteadyRun | undefined, storage: StorageFigures | undefined) {
  const by = (scenario: string) => results.find((r) => r.scenario === scenario);
  const [pgHit, bare, naive, liteHit] = [by(PG_HIT), by(BARE), by(NAIVE), by(LITE_HIT)];
  const atRate = steady?.results.find((r) => r.scenario === PG_HIT && r.rate === ISSUE_27.steadyRate);
  const bareAtRate = steady?.results.find((r) => r.scenario === BARE && r.rate === ISSUE_27.steadyRate);
  const T = ISSUE_27;
  const verdict = (value: number, ok: boolean) => (Number.isFinite(value) ? (ok ? 'met' : 'NOT met') : '-');
  const shown = (value: number, text: string) => (Number.isFinite(value) ? text : '-');
  const serverCpu = pgHit ? [...pgHit.cpuPerRequestUs.values()].reduce((a, b) => a + b, 0) : NaN;
  const bareRatio = pgHit && bare ? pgHit.requestsPerSecond / bare.requestsPerSecond : NaN;
  const naiveRatio = pgHit && naive ? pgHit.requestsPerSecond / naive.requestsPerSecond : NaN;
  const [p50, p99] = [atRate?.latency.p50 ?? NaN, atRate?.latency.p99 ?? NaN];
  const litePercentile = liteHit?.p99 ?? NaN;
  say('\n== Issue 27 targets (this run) ==');
  say(table([
    ['figure', 'measured', 'target', '', 'when issue 27 was opened'],
    [`steady ${fmt(T.steadyRate)} req/s, ${STEADY_CONNECTIONS} connections: p50 / p99`, Number.isFinite(p50) ? `${fmt(p50, 2)} ms / ${fmt(p99, 2)} ms` : '-',
      `<= ${T.steadyP50} ms / <= ${T.steadyP99} ms`, verdict(p99, p50 <= T.steadyP50 && p99 <= T.steadyP99), '4 ms / 38 ms'],
    [`saturated, ${CONNECTIONS} connections: charged hit / bare Fastify, same body`, shown(bareRatio, bareRatio.toFixed(3)), `>= ${T.bareRatio}`, verdict(bareRatio, bareRatio >= T.bareRatio), '0.077'],
    [`saturated, ${CONNECTIONS} connections: charged hit / naive service`, shown(naiveRatio, `${naiveRatio.toFixed(2)}x`), `>= ${T.naiveRatio}x`, verdict(naiveRatio, naiveRatio >= T.naiveRatio), '2.2-4.1x'],
    ['server CPU per charged hit, service + PostgreSQL + Redis (saturated)', shown(serverCpu, `${fmt(serverCpu)} µs`), `<= ${T.cpuPerHitUs} µs`, verdict(serverCpu, serverCpu <= T.cpuPerHitUs), '~242 µs'],
    [`embedded (PGlite) saturated p99, ${CONNECTIONS} connections`, shown(litePercentile, `${fmt(litePercentile, 1)} ms`), `<= ${T.liteP99} ms`, verdict(litePercentile, litePercentile <= T.liteP99), '52 ms'],
  ]));
  if (storage && storage.chargedCalls > 0) {
    const per = perChargedCall(storage);
    say(`bytes per charged hit on disk, ${per.tables.join(' + ')}: ${fmt(per.bytes)} B (when opened: 1,949 B)`);
    say(`index entries per charged hit, ${per.tables.join(' + ')}: ${per.indexEntries.toFixed(1)} (rows x the indexes covering them, after the run; when opened: ~16)`);
  }
  if (steady && steady.writes.length > 0) {
    const sum = (pick: (w: WritesPerHit) => number) => steady.writes.reduce((a, w) => a + pick(w), 0);
    say(
      `every table, over the steady-rate scenario: ${sum((w) => w.inserted + w.updated + w.deleted).toFixed(2)} rows written, ` +
        `${sum((w) => w.indexEntries).toFixed(1)} index entries, ${fmt(sum((w) => w.bytes))} B of file growth per charged hit (${steady.writes.map((w) => w.table).join(', ')})`,
    );
  }
  const loads = [pgHit, bare, naive].flatMap((r) => (r ? [`${r.scenario}: ${r.load}`] : []));
  if (atRate) loads.push(`steady ${fmt(T.steadyRate)} req/s: ${atRate.load}`);
  if (atRate && pgHit) {
    say(
      `${fmt(T.steadyRate)} req/s is ${(T.steadyRate / pgHit.requestsPerSecond).toFixed(2)} x the charged hit's saturated throughput in this run ` +
        `(${fmt(pgHit.requestsPerSecond)} req/s at ${CONNECTIONS} connections; the issue's figure was taken at about a quarter of it)`,
    );
  }
  if (bareAtRate) say(`bare Fastify at the same steady ${fmt(T.steadyRate)} req/s (the generator's and the machine's share): p50 ${fmt(bareAtRate.latency.p50, 2)} ms, p99 ${fmt(bareAtRate.latency.p99, 2)} ms`);
  if (loads.length > 0) say(`(machine load: ${loads.join('; ')})`);
}

const PERFORMANCE_DOC = resolve(REPO_ROOT, 'docs', 'performance.md');
const SCALING_DOC = resolve(REPO_ROOT, 'docs', 'scaling.md');
const BEGIN = '<!-- bench:begin (written by npm run bench; edit outside these markers) -->';
const END = '<!-- bench:end -->';

/** Replaces the bench's section of a page (the rest of the page is written by hand). */
function writeDoc(doc: string, lines: string[], seconds: number) {
  const section = [
    BEGIN,
    '',
    `Run of ${new Date().toISOString()}: ${seconds} s per scenario in ${ROUNDS} interleaved rounds, ${CONNECTIONS} connections.`,
    `Machine: ${machineDescription()}; ${machineLoad()} at the end.`,
    '',
    '```',
    ...lines,
    '```',
    '',
    END,
  ].join('\n');
  const page = existsSync(doc) ? readFileSync(doc, 'utf8') : `${BEGIN}\n${END}\n`;
  const from = page.indexOf(BEGIN);
  const to = page.indexOf(END);
  const next = from >= 0 && to > from ? page.slice(0, from) + section + page.slice(to + END.length) : `${page}\n${section}\n`;
  writeFileSync(doc, next);
  console.log(`\nfigures written to ${doc}`);
}

function printProfile(profile: { summary: ProfileSummary; result: LoadResult }) {
  const { summary, result } = profile;
  say(`\n== CPU profile of the server under the cache-hit load (${fmt(result.requestsPerSecond)} req/s while profiled) ==`);
  say(
    summary.wholeProfile
      ? 'the load window matched no sample: whole profile (start-up included)'
      : `window ${fmt(summary.windowMs)} ms, sampled ${fmt(summary.sampledMs)} ms of self time`,
  );
  const idle = summary.byPackage.find((p) => p.name === '(idle)')?.ms ?? 0;
  const busyMs = summary.sampledMs - idle;
  say(
    `server thread busy ${fmt(busyMs)} ms of ${fmt(summary.sampledMs)} ms (${((100 * busyMs) / summary.sampledMs).toFixed(1)}%); ` +
      `${fmt((busyMs / result.total) * 1000)} µs of CPU per request over ${result.total} requests`,
  );
  const top = (shares: ProfileSummary['byPackage']) => [
    ['', 'self ms', '%'],
    ...shares.slice(0, 15).map((s) => [s.name, fmt(s.ms), `${s.percent.toFixed(1)}%`]),
  ];
  say('\ntop 15 by package / folder (self time):');
  say(table(top(summary.byPackage)));
  say('\ntop 15 functions (self time):');
  say(table(top(summary.byFunction)));
}

function runEventStoreChild(): Promise<void> {
  const env = { ...process.env };
  if (process.env.BENCH_EVENTSTORE_SECONDS) env.BENCH_SECONDS = process.env.BENCH_EVENTSTORE_SECONDS;
  else delete env.BENCH_SECONDS;
  return runChild(EVENTSTORE_BENCH, env, 'event-store bench');
}

function runChild(script: string, env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, env, stdio: 'inherit' });
  return new Promise((done, fail) => child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`${name} exited with ${code}`)))));
}

async function main() {
  const seconds = benchSeconds(10);
  mkdirSync(RUN_DIR, { recursive: true });
  console.log(`Lookup API benchmark: ${seconds} s per scenario, ${CONNECTIONS} connections; PostgreSQL ${DATABASE_URL}, Redis ${REDIS_URL}; ${machineLoad()}`);
  // BENCH_ONLY=postgres or pglite: that half alone (quick looks; the table then lacks the other rows).
  // BENCH_ONLY=latency: issue 27's scenarios alone (see the top of this file).
  const only = process.env.BENCH_ONLY;
  const latencyOnly = only === 'latency';
  const pg =
    only === 'pglite'
      ? { results: [], hitBody: undefined, profile: undefined, memory: undefined, storage: undefined, redisKeys: undefined, steady: undefined }
      : await benchPostgres(seconds, latencyOnly, only === 'ab');
  const lite = only === 'postgres' || only === 'profile' || only === 'ab' || latencyOnly ? [] : await benchPglite(seconds);
  say(`Machine: ${machineDescription()}`);
  printHttpResults([...pg.results, ...lite], pg.hitBody);
  printCpuAndTargets([...pg.results, ...lite], pg.memory);
  if (pg.steady) printSteady(pg.steady);
  printScaling([...pg.results, ...lite], pg.storage, pg.redisKeys);
  if (pg.profile) printProfile(pg.profile);
  printIssue27Targets([...pg.results, ...lite], pg.steady, pg.storage);
  // A partial run (BENCH_ONLY, BENCH_VARIANT) does not replace the figures of a whole one.
  if (!only && !process.env.BENCH_VARIANT) {
    writeDoc(PERFORMANCE_DOC, report, seconds);
    writeDoc(SCALING_DOC, scalingReport, seconds);
  }

  if (latencyOnly || only === 'ab') return;
  if (process.env.BENCH_SKIP_EVENTSTORE === '1') {
    console.log('\n(event-store bench skipped: run `npm run bench:eventstore`)');
  } else {
    console.log('\n== Event store (test/bench/eventstore.bench.ts; alone: npm run bench:eventstore) ==');
    await runEventStoreChild();
  }
  if (process.env.BENCH_SKIP_AUDIT === '1') {
    console.log('\n(audit bench skipped: run `npx tsx test/bench/audit.bench.ts`)');
  } else {
    console.log('\n== Audit (test/bench/audit.bench.ts): events/s, and lookups while it runs ==');
    await runChild(AUDIT_BENCH, { ...process.env }, 'audit bench');
  }
  if (process.env.BENCH_SKIP_BATCH === '1') {
    console.log('\n(batch bench skipped: run `npx tsx test/bench/batch.bench.ts`)');
  } else {
    console.log('\n== Batch (test/bench/batch.bench.ts): 100 cache hits in one POST /v1/batch vs one cache hit, target <= 3x ==');
    await runChild(BATCH_BENCH, { ...process.env }, 'batch bench');
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
