// Redis commands per charged cache hit, counted by Redis itself: a scratch redis-server of this
// script's own (nobody else's traffic in its INFO commandstats), the service in a child process
// (server-child.ts) on a scratch database, one MISS to fill the cache, then HITS hits at
// CONNECTIONS connections between two CONFIG RESETSTAT / INFO commandstats.
//
//   npx tsx test/bench/redis-commands.bench.ts     (PostgreSQL from DATABASE_URL; redis-server on PATH)
//   BENCH_HITS=4000 BENCH_CONNECTIONS=16           the load (defaults)
//
// A script (EVALSHA) counts as one command whatever it does inside; the commands a script runs
// show as their own rows (`redis.call`) and are not round trips.
import { fork, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import type { ChildMessage } from './server-child';
import { createScratchDatabase, machineLoad, table } from './support';

const SERVER_CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_TOKEN = 'bench-admin-token-'.padEnd(32, 'x');
const HITS = Number(process.env.BENCH_HITS ?? 4000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

async function json(url: string, method: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const parsed = (await response.json()) as { id: string; key: string };
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(parsed)}`);
  return { headers: response.headers, body: parsed };
}

/** INFO commandstats as calls per command (`cmdstat_evalsha:calls=…`). */
function commandCalls(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of info.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) calls.set(m[1]!, Number(m[2]));
  }
  return calls;
}

async function main() {
  const port = await freePort();
  const redisServer = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const database = await createScratchDatabase('bench_redis_cmds');
  const redisUrl = `redis://127.0.0.1:${port}`;
  const probe = new Redis(redisUrl, { lazyConnect: true, retryStrategy: (n) => (n > 50 ? null : 100) });
  await probe.connect();
  const child = fork(SERVER_CHILD, ['api'], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, PORT: '0', DATABASE_URL: database.url, REDIS_URL: redisUrl, SOURCE_URL: 'sandbox', ADMIN_TOKEN, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const url = await new Promise<string>((done, fail) => {
      child.on('message', (m: ChildMessage) => m.type === 'ready' && done(m.url));
      child.once('exit', (code) => fail(new Error(`server child exited with ${code}`)));
    });
    const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const ws = (await json(`${url}/admin/v1/workspaces`, 'POST', { name: 'bench', credits: 1_000_000_000 }, adminHeaders)).body;
    await json(`${url}/admin/v1/workspaces/${ws.id}`, 'PATCH', { max_concurrency: 1000 }, adminHeaders);
    const key = (await json(`${url}/admin/v1/workspaces/${ws.id}/keys`, 'POST', { name: 'bench', rate_limit_per_minute: 100_000 }, adminHeaders)).body.key;
    const lookup = { url: `${url}/v1/company`, method: 'POST' as const, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ url: 'acme-robotics' }) };
    // The MISS, then one hit: the key is cached and the scripts loaded before counting starts.
    for (let i = 0; i < 2; i++) await json(lookup.url, 'POST', { url: 'acme-robotics' }, lookup.headers);

    await probe.config('RESETSTAT');
    const result = await autocannon({ ...lookup, connections: CONNECTIONS, amount: HITS });
    const calls = commandCalls(await probe.info('commandstats'));
    calls.delete('info');
    const hits = result['2xx'];
    if (hits !== HITS) throw new Error(`expected ${HITS} 2xx, got ${hits} (non-2xx ${result.non2xx}, errors ${result.errors})`);
    const rows = [...calls].sort((a, b) => b[1] - a[1]).map(([name, n]) => [name, n, (n / hits).toFixed(3)]);
    console.log(`${hits} charged cache hits at ${CONNECTIONS} connections (${machineLoad()})`);
    console.log(table([['command (a script once, and each redis.call in it)', 'calls', 'per hit'], ...rows]));
    // What the service itself sends: the scripts and the slot releases (ZREM is never in a script).
    const sentBy = ['evalsha', 'eval', 'zrem'].reduce((sum, name) => sum + (calls.get(name) ?? 0), 0);
    console.log(`commands the service sent per hit (evalsha, eval, zrem): ${(sentBy / hits).toFixed(3)}`);
  } finally {
    child.send({ type: 'stop' });
    await new Promise((done) => child.once('exit', done));
    probe.disconnect();
    redisServer.kill();
    await database.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
