// Running API instances for end-to-end tests: in this process (startServer) or as a child
// process (`node --import tsx services/api/main.ts`) that a test may SIGKILL mid-request.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../../services/config/config';
import { startSandbox, type Sandbox } from '../../../services/sandbox/server';
import { createTestDatabase } from '../../support/servers';
import { startServer, type RunningServer } from '../../../services/api/server';
import { bearer, call, type HttpAnswer } from './http';

export const ADMIN_TOKEN = 'e2e-admin-token-'.padEnd(40, 'x');
const REPO_ROOT = resolve(import.meta.dirname, '../../..');

export interface SharedServers {
  databaseUrl: string;
  redisUrl: string;
  /** A sandbox all instances fetch from, so they share its slow and failing entries. */
  sourceUrl: string;
}

/** An instance in this process on the shared servers; `env` overrides settings (e.g. MAX_IN_FLIGHT). */
export async function startInstance(servers: SharedServers, env: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'e2e-instance-'));
  const server = await startServer(
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      DATABASE_URL: servers.databaseUrl,
      REDIS_URL: servers.redisUrl,
      SOURCE_URL: servers.sourceUrl,
      ...env,
    }),
  );
  return {
    ...server,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ChildInstance {
  url: string;
  process: ChildProcess;
  /** Output so far, for failure messages. */
  output(): string;
  /** SIGKILL: no shutdown hooks run, held slots and locks are simply abandoned. */
  kill(): Promise<void>;
  /** Ends it if still running. */
  stop(): Promise<void>;
}

/** `node --import tsx services/api/main.ts` with exactly these settings; resolves once it listens. */
export async function startChildInstance(servers: SharedServers, env: Record<string, string> = {}): Promise<ChildInstance> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/api/main.ts'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      DATABASE_URL: servers.databaseUrl,
      REDIS_URL: servers.redisUrl,
      SOURCE_URL: servers.sourceUrl,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const { url, output } = await listeningUrl(child, 30_000);
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { url, process: child, output, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}

/** The admin API as the console uses it; every call asserts its success status. */
/** Two child instances on one database (the failover drills' set-up), their sandbox, and an admin client of the first. */
export interface InstancePair {
  sandbox: Sandbox;
  instances: ChildInstance[];
  admin: Admin;
  /** True while the instance's process has neither exited nor been killed. */
  alive(instance: ChildInstance): boolean;
  stop(): Promise<void>;
}

/**
 * A sandbox and two child instances on `databaseUrl`, sharing Redis database `redisDatabase` of
 * `redisUrl`, started one after the other (the first migrates a fresh database). Load shedding is
 * lifted: 503 no_capacity on a busy machine is another suite's subject.
 */
export async function startInstancePair(databaseUrl: string, redisUrl: string, redisDatabase: number): Promise<InstancePair> {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  const redis = new URL(redisUrl);
  redis.pathname = `/${redisDatabase}`;
  const servers = { databaseUrl, redisUrl: redis.toString(), sourceUrl: sandbox.url };
  const env = { MAX_EVENT_LOOP_DELAY_MS: '60000', SOURCE_TIMEOUT_MS: '5000' };
  const instances: ChildInstance[] = [];
  try {
    instances.push(await startChildInstance(servers, env));
    instances.push(await startChildInstance(servers, env));
  } catch (error) {
    for (const instance of instances) await instance.stop();
    await sandbox.close();
    throw error;
  }
  return {
    sandbox,
    instances,
    admin: new Admin(instances[0]!.url),
    alive: (instance) => instance.process.exitCode === null && instance.process.signalCode === null,
    async stop() {
      for (const instance of instances) await instance.stop();
      await sandbox.close();
    },
  };
}

export class Admin {
  constructor(private readonly baseUrl: string) {}

  private async send(method: string, path: string, body: unknown, expected: number): Promise<HttpAnswer> {
    const answer = await call(this.baseUrl, path, { method, body, headers: bearer(ADMIN_TOKEN) });
    if (answer.status !== expected) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer;
  }

  async createWorkspace(input: { name?: string; credits?: number; max_concurrency?: number } = {}) {
    const answer = await this.send('POST', '/admin/v1/workspaces', { name: 'e2e', ...input }, 201);
    return answer.body as { id: string; name: string; balance: number; max_concurrency: number };
  }

  async workspace(id: string) {
    return (await this.send('GET', `/admin/v1/workspaces/${id}`, undefined, 200)).body as { id: string; balance: number; max_concurrency: number };
  }

  async setMaxConcurrency(id: string, maxConcurrency: number) {
    return (await this.send('PATCH', `/admin/v1/workspaces/${id}`, { max_concurrency: maxConcurrency }, 200)).body;
  }

  async createKey(workspaceId: string, input: { rate_limit_per_minute?: number } = {}) {
    return (await this.send('POST', `/admin/v1/workspaces/${workspaceId}/keys`, input, 201)).body as {
      id: string;
      key: string;
      rate_limit_per_minute: number;
    };
  }

  async revokeKey(keyId: string): Promise<HttpAnswer> {
    return this.send('POST', `/admin/v1/keys/${keyId}/revoke`, undefined, 200);
  }

  /** A workspace with credits and one key. */
  async keyedWorkspace(input: { credits?: number; max_concurrency?: number; rate_limit_per_minute?: number } = {}) {
    const ws = await this.createWorkspace({ credits: input.credits ?? 100, max_concurrency: input.max_concurrency });
    const key = await this.createKey(ws.id, input.rate_limit_per_minute ? { rate_limit_per_minute: input.rate_limit_per_minute } : {});
    return { workspaceId: ws.id, keyId: key.id, key: key.key };
  }
}

/** Polls until `check` holds (returns true) or the time is up; returns whether it held. */
export async function eventually(check: () => Promise<boolean>, withinMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface SharedServersHandle extends SharedServers {
  /** Requests the sandbox source has received so far (all instances together). */
  sourceHits(): number;
  close(): Promise<void>;
}

/**
 * A private PostgreSQL database on DATABASE_URL's server, the shared REDIS_URL, and one sandbox
 * source for every instance of the suite.
 */
export async function startSharedServers(redisUrl: string): Promise<SharedServersHandle> {
  const database = await createTestDatabase();
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  return {
    databaseUrl: database.url,
    redisUrl,
    sourceUrl: sandbox.url,
    sourceHits: () => sandbox.hits(),
    async close() {
      await sandbox.close();
      await database.drop();
    },
  };
}

/** Shared servers of their own and two instances in this process on them, with the same settings. */
export interface TwoInstances {
  servers: SharedServersHandle;
  a: RunningServer;
  b: RunningServer;
  /** Both instances, then the servers. */
  close(): Promise<void>;
}

/** The two-instance set-up of the worker suites (watches, webhooks, alerts): started together. */
export async function startTwoInstances(redisUrl: string, env: Record<string, string> = {}): Promise<TwoInstances> {
  const servers = await startSharedServers(redisUrl);
  const started = await Promise.allSettled([startInstance(servers, env), startInstance(servers, env)]);
  const [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  if (!a || !b) {
    await b?.close();
    await a?.close();
    await servers.close();
    throw started.find((s) => s.status === 'rejected')!.reason;
  }
  return {
    servers,
    a,
    b,
    async close() {
      await b.close();
      await a.close();
      await servers.close();
    },
  };
}

/**
 * The URL a started service prints ("listening on http://…"), read from its stdout and stderr;
 * fails with its output so far if it exits first or says nothing within `timeoutMs`.
 */
export async function listeningUrl(child: ChildProcess, timeoutMs: number): Promise<{ url: string; output: () => string }> {
  let output = '';
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`no "listening on" line in ${timeoutMs / 1000} s:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        done(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  return { url, output: () => output };
}
