// The audit on a large log: its speed (events/s, in process and in its worker thread) and what it
// does to the lookups of the instance that runs it (p50/p99 of charged cache hits, without and
// during back-to-back audits).
//
//   npx tsx test/bench/audit.bench.ts      (also the last part of `npm run bench`)
//   BENCH_AUDIT_EVENTS=200000              size of the generated log (default 200 000)
//   BENCH_SECONDS=10                       seconds of lookups per measurement
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { catchUpToNow } from '../../services/eventstore/subscription';
import { audit } from '../../services/audit/audit';
import { runAudit } from '../../services/audit/audit-runner';
import { INLINE_PROJECTIONS } from '../../services/projections/inline';
import { usageProjection } from '../../services/projections/usage';
import { writeChargedLog } from '../support/charged-log';
import type { ChildMessage } from './server-child';
import { benchSeconds, createScratchDatabase, fmt, machineLoad, table } from './support';

const SERVER_CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_TOKEN = 'bench-admin-token-'.padEnd(32, 'x');
const EVENTS = Number(process.env.BENCH_AUDIT_EVENTS) || 200_000;
const WORKSPACES = 50;
const CONNECTIONS = 8;

async function startApi(databaseUrl: string): Promise<{ url: string; stop(): Promise<void> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, SOURCE_URL: 'sandbox', ADMIN_TOKEN, LOG_LEVEL: 'silent', PORT: '0' };
  delete env.REDIS_URL;
  delete env.KAFKA_BROKERS;
  const child = fork(SERVER_CHILD, ['api'], { cwd: REPO_ROOT, execArgv: ['--import', 'tsx'], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((done, fail) => {
    child.on('message', (m: ChildMessage) => m.type === 'ready' && done(m.url));
    child.once('exit', (code) => fail(new Error(`api child exited with ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((done) => {
        child.once('exit', () => done());
        child.send({ type: 'stop' });
      }),
  };
}

async function http(url: string, method: string, body: unknown, token: string): Promise<any> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** Charged cache hits for `seconds`; every 2xx latency (ms). */
function lookups(url: string, key: string, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  return new Promise((done, fail) => {
    const instance = autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [{ method: 'POST', path: '/v1/company', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ url: 'acme-robotics' }) }],
      },
      (err) => (err ? fail(err) : done(latencies)),
    );
    instance.on('response', (_c, status, _b, ms) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

async function main() {
  const seconds = benchSeconds(10);
  const db = await createScratchDatabase('bench_audit');
  const sql = createPgSql(db.url, { max: 4 });
  try {
    await migrate(sql);
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    let started = performance.now();
    const events = await writeChargedLog(store, { events: EVENTS, workspaces: WORKSPACES });
    console.log(`audit: generated ${fmt(events)} events on ${WORKSPACES} workspaces in ${fmt((performance.now() - started) / 1000, 1)} s (${machineLoad()})`);

    // The usage subscription's first catch-up over the whole log is not the audit's cost.
    await catchUpToNow(store, usageProjection);
    started = performance.now();
    let inProcessReports = 0;
    const inProcess = await audit(store, { onProgress: () => inProcessReports++ });
    const inProcessSeconds = (performance.now() - started) / 1000;
    if (!inProcess.ok) throw new Error(`the generated log does not audit clean: ${JSON.stringify(inProcess).slice(0, 500)}`);
    started = performance.now();
    let workerReports = 0;
    const inWorker = await runAudit(store, { databaseUrl: db.url, onProgress: () => workerReports++ });
    const workerSeconds = (performance.now() - started) / 1000;
    console.log(
      table([
        ['audit of the whole log', 'events', 'seconds', 'events/s', 'progress reports'],
        ['in process', fmt(inProcess.events), fmt(inProcessSeconds, 2), fmt(inProcess.events / inProcessSeconds), fmt(inProcessReports)],
        ['worker thread', fmt(inWorker.events), fmt(workerSeconds, 2), fmt(inWorker.events / workerSeconds), fmt(workerReports)],
      ]),
    );

    const api = await startApi(db.url);
    try {
      const ws = await http(`${api.url}/admin/v1/workspaces`, 'POST', { name: 'lookups', credits: 1_000_000_000, max_concurrency: 1000 }, ADMIN_TOKEN);
      const { key } = await http(`${api.url}/admin/v1/workspaces/${ws.id}/keys`, 'POST', { rate_limit_per_minute: 100_000 }, ADMIN_TOKEN);
      await http(`${api.url}/v1/company`, 'POST', { url: 'acme-robotics' }, key); // the MISS that fills the cache
      const quiet = await lookups(api.url, key, seconds);
      let audits = 0;
      let auditing = true;
      const auditLoop = (async () => {
        while (auditing) {
          await http(`${api.url}/admin/v1/audit`, 'POST', undefined, ADMIN_TOKEN);
          audits++;
        }
      })();
      const busy = await lookups(api.url, key, seconds);
      auditing = false;
      await auditLoop;
      const row = (name: string, l: number[]) => [name, fmt(l.length / seconds), fmt(percentile(l, 50), 1), fmt(percentile(l, 99), 1), fmt(Math.max(...l), 1)];
      console.log(`\nlookups (charged cache hits, ${CONNECTIONS} connections, ${seconds} s each) on the instance that runs the audits:`);
      console.log(table([['', 'req/s', 'p50 ms', 'p99 ms', 'max ms'], row('no audit', quiet), row(`${audits} audits back to back`, busy)]));
      console.log(`lookup p99 during audits / without: ${(percentile(busy, 99) / percentile(quiet, 99)).toFixed(2)} (${machineLoad()})`);
    } finally {
      await api.stop();
    }
  } finally {
    await sql.close();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
