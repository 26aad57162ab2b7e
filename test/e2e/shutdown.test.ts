// SIGTERM under load (`services/api/main.ts` as a child process on PostgreSQL + Redis): every
// request accepted before the signal gets its answer and its charge settles exactly once, new
// connections are refused from the signal on, and the process then exits 0.
//
// The live fetches go through a source that holds every request until the test lets go, so the
// lookups are certainly in flight (charged, waiting on the source) when the signal arrives.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { bearer, call, type HttpAnswer } from './support-instances/http';
import { ADMIN_TOKEN, Admin, eventually, startChildInstance, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

/** The sandbox behind a gate: each request waits until release(), then is forwarded as is. */
interface HeldSource {
  url: string;
  held(): number;
  release(): void;
  close(): Promise<void>;
}

async function startHeldSource(target: string): Promise<HeldSource> {
  const waiting: Array<() => void> = [];
  let released = false;
  const server: Server = createServer((req, res) => {
    const forward = () => {
      fetch(target + req.url).then(
        async (answer) => {
          const headers: Record<string, string> = { 'content-type': answer.headers.get('content-type') ?? 'application/json' };
          const retryAfter = answer.headers.get('retry-after');
          if (retryAfter) headers['retry-after'] = retryAfter;
          res.writeHead(answer.status, headers).end(await answer.text());
        },
        () => res.writeHead(502).end(),
      );
    };
    if (released) forward();
    else waiting.push(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => waiting.length,
    release() {
      released = true;
      for (const forward of waiting.splice(0)) forward();
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** Lookups with distinct references (each its own source request), live (`max_age: 0`), and their prices. */
const LOAD: Array<[string, Record<string, unknown>, number]> = [
  ['/v1/company', { url: 'acme-robotics', max_age: 0 }, 1],
  ['/v1/company', { url: 'globex', max_age: 0 }, 1],
  ['/v1/domain', { domain: 'acmerobotics.com', max_age: 0 }, 4],
  ['/v1/person', { url: 'https://www.linkedin.com/in/jane-doe-42', max_age: 0 }, 1],
  ...Array.from({ length: 8 }, (_, i): [string, Record<string, unknown>, number] => ['/v1/search', { query: `robotics suppliers ${i}`, max_age: 0 }, 1]),
];

describe.skipIf(!databaseUrl || !redisUrl)('SIGTERM under load', () => {
  let servers: SharedServersHandle;
  let source: HeldSource;
  /** An instance in this process on the same database: the ledger is read through it once the child is gone. */
  let observer: RunningServer;
  let admin: Admin;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    source = await startHeldSource(servers.sourceUrl);
    observer = await startInstance(servers);
    admin = new Admin(observer.url);
  });
  afterAll(async () => {
    source?.release();
    await observer?.close();
    await source?.close();
    await servers?.close();
  });

  it('answers and settles every request accepted before the signal, refuses new connections, then exits 0', async () => {
    const child = await startChildInstance({ ...servers, sourceUrl: source.url }, { SOURCE_TIMEOUT_MS: '30000' });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.process.once('exit', (code, signal) => done({ code, signal })),
    );
    try {
      const credits = 1000;
      const { workspaceId, key } = await admin.keyedWorkspace({ credits, max_concurrency: LOAD.length });

      const inFlight = LOAD.map(([path, body]) => call(child.url, path, { headers: bearer(key), body }));
      // Awaited below; a failure must surface there, not as an unhandled rejection first.
      for (const answer of inFlight) answer.catch(() => {});
      // Every lookup has charged and waits on the source.
      expect(await eventually(async () => source.held() === LOAD.length, 30_000), `held ${source.held()} of ${LOAD.length}`).toBe(true);

      child.process.kill('SIGTERM');
      // From the signal on, a new connection is refused (the listener closes first, then the
      // process waits for the requests it holds).
      const refused = await eventually(
        () => call(child.url, '/v1/health').then(() => false, (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED'),
        20_000,
      );
      expect(refused, `new connections still accepted after SIGTERM:\n${child.output()}`).toBe(true);
      expect(child.process.exitCode, 'exited with lookups still in flight').toBeNull();

      source.release();
      const answers: HttpAnswer[] = await Promise.all(inFlight);
      expect(await exit, child.output()).toEqual({ code: 0, signal: null });

      let spent = 0;
      for (const [i, answer] of answers.entries()) {
        const [path, , price] = LOAD[i]!;
        expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(200);
        expect(answer.body.meta.credits_charged).toBe(price);
        const requestId = answer.body.meta.request_id as string;
        const ledger = await call(observer.url, `/admin/v1/workspaces/${workspaceId}/ledger?request_id=${requestId}`, { headers: bearer(ADMIN_TOKEN) });
        const entries = (ledger.body.data as Array<{ type: string; credits: number }>).map((e) => [e.type, Math.abs(e.credits)]);
        // Charged once, never refunded.
        expect(entries, `${path} ${requestId}`).toEqual([['LookupCharged', price]]);
        spent += price;
      }
      expect((await admin.workspace(workspaceId)).balance).toBe(credits - spent);

      // Each charge settled: the usage read model (fed by the completion events) counts every call, no error, no refund.
      const usage = async () => {
        const answer = await call(observer.url, `/admin/v1/workspaces/${workspaceId}/usage`, { headers: bearer(ADMIN_TOKEN) });
        const rows = answer.body.data as Array<{ calls: number; credits_charged: number; credits_refunded: number; errors: number }>;
        return rows.reduce((t, r) => ({ calls: t.calls + r.calls, charged: t.charged + r.credits_charged, refunded: t.refunded + r.credits_refunded, errors: t.errors + r.errors }), { calls: 0, charged: 0, refunded: 0, errors: 0 });
      };
      const want = { calls: LOAD.length, charged: spent, refunded: 0, errors: 0 };
      await eventually(async () => JSON.stringify(await usage()) === JSON.stringify(want), 20_000);
      expect(await usage()).toEqual(want);
    } finally {
      source.release();
      await child.stop();
    }
  });
});
