// The server side of the HTTP benchmarks, run as a child process (fork with IPC) so the load
// generator never shares its event loop. Modes, from argv[2]:
//   api   the real service: startServer(loadConfig(process.env))
//   bare  a bare Fastify route POST /v1/company answering with a fixed body (BENCH_BARE_BODY)
//   naive the naive service of issue 27 (naive-service.ts): that body after a Redis rate limit and
//         one PostgreSQL transaction per call (BENCH_NAIVE_DATABASE_URL, BENCH_NAIVE_REDIS_URL,
//         BENCH_NAIVE_KEY, BENCH_NAIVE_CREDITS, BENCH_NAIVE_MAX_PER_MINUTE)
//
// Messages to the parent:  {type:'ready', url}, {type:'mark', name, hrtimeUs}, {type:'stopped'},
//                           {type:'majorGcs', heapAfterMb}
// Messages from the parent: {type:'mark', name}  (profile window: clock read in this process),
//                           {type:'majorGcs'}    (the heap in use after each mark-compact since the last ask),
//                           {type:'stop'}        (close cleanly, so --cpu-prof writes its file)
// BENCH_GC=1: V8's garbage-collection pauses observed (perf_hooks) from start to stop, printed on
// stop by kind (count, share of the time, p50, p99, max), with the heap spaces in use then.
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import Fastify from 'fastify';
import { loadConfig } from '../../services/config/config';
import { startServer } from '../../services/api/server';
import { startNaiveService } from './naive-service';

export type ParentMessage = { type: 'mark'; name: string } | { type: 'majorGcs' } | { type: 'stop' };
export type ChildMessage =
  | { type: 'ready'; url: string }
  | { type: 'mark'; name: string; hrtimeUs: number }
  | { type: 'majorGcs'; heapAfterMb: number[] }
  | { type: 'stopped' };

const send = (message: ChildMessage) => process.send!(message);

async function startBare(body: unknown): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.post('/v1/company', async () => body);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => app.close() };
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** A `gc` performance entry's kind (constants.NODE_PERFORMANCE_GC_*). */
const gcKindOf = (entry: PerformanceEntry) => (entry as unknown as { detail: { kind: number } }).detail.kind;

/** Records every GC pause of this process; returns the printer of their summary. */
function observeGc(): () => string {
  const started = performance.now();
  const pauses = new Map<string, number[]>();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[gcKindOf(entry)] ?? 'other';
      const list = pauses.get(kind) ?? [];
      list.push(entry.duration);
      pauses.set(kind, list);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    const seconds = (performance.now() - started) / 1000;
    const lines = [...pauses].map(([kind, ms]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      const total = ms.reduce((a, b) => a + b, 0);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
      return `  ${kind}: ${ms.length} pauses (${(ms.length / seconds).toFixed(1)}/s), ${total.toFixed(0)} ms in all (${((total / 1000 / seconds) * 100).toFixed(1)} % of the time), p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${sorted.at(-1)!.toFixed(2)} ms`;
    });
    // What each scavenge and mark-compact has to walk: the heap's spaces as they stand at the end.
    const spaces = getHeapSpaceStatistics()
      .filter((space) => space.space_used_size > 1e6)
      .map((space) => `${space.space_name} ${(space.space_used_size / 1e6).toFixed(1)} MB`);
    return `GC pauses of pid ${process.pid} over ${seconds.toFixed(1)} s:\n${lines.join('\n')}\n  heap in use: ${spaces.join(', ')}`;
  };
}

/**
 * The heap in use just after each mark-compact (read when its entry is delivered, a turn of the
 * event loop later): what stays alive, the figure a leak grows; RSS only follows the heap's peaks.
 */
function observeMajorGcs(): () => number[] {
  let heapAfterMb: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (gcKindOf(entry) !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      heapAfterMb.push(getHeapStatistics().used_heap_size / 1e6);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    const taken = heapAfterMb;
    heapAfterMb = [];
    return taken;
  };
}

async function main() {
  const mode = process.argv[2];
  const gcSummary = process.env.BENCH_GC === '1' ? observeGc() : undefined;
  const majorGcs = observeMajorGcs();
  if (!process.send) throw new Error('server-child must be started with fork() (it reports over IPC)');
  let server: { url: string; close(): Promise<void> };
  if (mode === 'api') {
    server = await startServer(loadConfig(process.env));
  } else if (mode === 'bare') {
    const body = JSON.parse(process.env.BENCH_BARE_BODY ?? 'null');
    if (body === null) throw new Error('bare mode needs BENCH_BARE_BODY');
    server = await startBare(body);
  } else if (mode === 'naive') {
    const body = JSON.parse(process.env.BENCH_BARE_BODY ?? 'null');
    const required = (name: string) => {
      const value = process.env[name];
      if (!value) throw new Error(`naive mode needs ${name}`);
      return value;
    };
    if (body === null) throw new Error('naive mode needs BENCH_BARE_BODY');
    server = await startNaiveService({
      databaseUrl: required('BENCH_NAIVE_DATABASE_URL'),
      redisUrl: required('BENCH_NAIVE_REDIS_URL'),
      apiKey: required('BENCH_NAIVE_KEY'),
      credits: Number(required('BENCH_NAIVE_CREDITS')),
      maxPerMinute: Number(required('BENCH_NAIVE_MAX_PER_MINUTE')),
      body,
    });
  } else {
    throw new Error(`unknown mode ${mode}: expected api, bare or naive`);
  }

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'mark') {
      // V8's profile timestamps and hrtime read the same monotonic clock, in µs here.
      send({ type: 'mark', name: message.name, hrtimeUs: Number(process.hrtime.bigint() / 1000n) });
    } else if (message.type === 'majorGcs') {
      send({ type: 'majorGcs', heapAfterMb: majorGcs() });
    } else if (message.type === 'stop') {
      if (gcSummary) console.error(gcSummary());
      server.close().finally(() => {
        send({ type: 'stopped' });
        process.disconnect();
        // process.exit (not a signal) so --cpu-prof still writes its profile.
        setTimeout(() => process.exit(0), 50);
      });
    }
  });
  send({ type: 'ready', url: server.url });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
