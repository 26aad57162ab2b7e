// The black-box harness of the end-to-end suites: a real listening server (PGlite under a temp
// DATA_DIR, or a private PostgreSQL database with Redis limits), the admin API to set up
// workspaces and keys, and a thin fetch client. Tests talk HTTP only; nothing here reads the
// service's internals, so every expectation comes from the contract text.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../../services/api/server';
import { loadConfig } from '../../../services/config/config';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';

export const ADMIN_TOKEN = 'e2e-admin-token-'.padEnd(40, 'x');

/** Where the event store lives; PostgreSQL also shares its rate limits through Redis when REDIS_URL is set. */
export interface Backend {
  name: 'PGlite' | 'PostgreSQL';
  /** False when PostgreSQL is not configured (the suite is then skipped, loudly, outside CI). */
  available: boolean;
}

/** Both backends; call at collection time (serverUrl warns or, under CI, throws). */
export function backends(): Backend[] {
  return [
    { name: 'PGlite', available: true },
    { name: 'PostgreSQL', available: serverUrl('postgres') !== undefined },
  ];
}

export interface E2eServer {
  url: string;
  admin: AdminApi;
  /** The server's own PostgreSQL database; undefined on PGlite (the process holds it). */
  databaseUrl?: string;
  /** Closes the running instance and starts a new one on the same data (DATA_DIR or database). */
  restart(extraEnv?: Record<string, string>): Promise<void>;
  /** Closes the instance and deletes its data. */
  stop(): Promise<void>;
}

/** A server on `backend` with fresh data. `extraEnv` adds settings such as SOURCE_TIMEOUT_MS. */
export async function startE2eServer(backend: Backend, extraEnv: Record<string, string> = {}): Promise<E2eServer> {
  let database: TestDatabase | undefined;
  let dataDir: string | undefined;
  // E2E_LOG_LEVEL=error shows the service's own log while debugging a failing test.
  // The server shares its event loop with the test runner on a busy 2-core machine: load
  // shedding by loop delay stays out of the way unless a suite asks for it.
  const env: Record<string, string> = {
    PORT: '0',
    ADMIN_TOKEN,
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '60000',
    ...extraEnv,
  };
  if (backend.name === 'PostgreSQL') {
    database = await createTestDatabase();
    env.DATABASE_URL = database.url;
    // With DATABASE_URL the sandbox must be chosen; a suite's own SOURCE_URL (a crafted upstream) wins.
    env.SOURCE_URL = extraEnv.SOURCE_URL ?? 'sandbox';
    const redis = process.env.REDIS_URL?.trim();
    if (redis) env.REDIS_URL = ownRedisDatabase(redis);
    // Another instance's PGlite dir is never touched; DATA_DIR is unused with DATABASE_URL.
    env.DATA_DIR = tmpdir();
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'lookup-e2e-'));
    env.DATA_DIR = dataDir;
  }

  let running: RunningServer = await startServer(loadConfig(env));
  const server: E2eServer = {
    url: running.url,
    admin: new AdminApi(running.url),
    ...(database ? { databaseUrl: database.url } : {}),
    async restart(more = {}) {
      await running.close();
      running = await startServer(loadConfig({ ...env, ...more }));
      server.url = running.url;
      server.admin = new AdminApi(running.url);
    },
    async stop() {
      await running.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/**
 * Calls without a valid key share one per-IP bucket (120/min) in Redis, and every test process
 * connects from 127.0.0.1. These suites use their own Redis logical database, so they neither
 * drain nor are drained by suites of other files that count that bucket exactly.
 */
const E2E_REDIS_DATABASE = 7;

function ownRedisDatabase(redisUrl: string): string {
  const url = new URL(redisUrl);
  url.pathname = `/${E2E_REDIS_DATABASE}`;
  return url.toString();
}

// ---------------------------------------------------------------- HTTP

export interface HttpResult {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: any;
  text: string;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Serialised as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Sent as is (set the content type yourself in `headers`). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  if (options.rawBody !== undefined) body = options.rawBody;
  Object.assign(headers, options.headers);
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

// ---------------------------------------------------------------- admin API

export interface LedgerEntry {
  position: number | string;
  type: string;
  request_id: string | null;
  key_id: string | null;
  credits: number;
  balance_after: number;
  recorded_at: string;
}

export class AdminApi {
  constructor(private readonly baseUrl: string) {}

  private async send(method: string, path: string, json?: unknown): Promise<any> {
    const res = await call(this.baseUrl, method, path, { json, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (res.status >= 300) throw new Error(`admin ${method} ${path} -> ${res.status} ${res.text}`);
    return res.body;
  }

  createWorkspace(body: { name: string; credits?: number; max_concurrency?: number }): Promise<{ id: string; name: string; balance: number; max_concurrency: number }> {
    return this.send('POST', '/admin/v1/workspaces', body);
  }

  workspace(id: string): Promise<{ id: string; name: string; balance: number; max_concurrency: number; created_at: string }> {
    return this.send('GET', `/admin/v1/workspaces/${id}`);
  }

  async balance(workspaceId: string): Promise<number> {
    return (await this.workspace(workspaceId)).balance;
  }

  grantCredits(workspaceId: string, amount: number): Promise<{ balance: number }> {
    return this.send('POST', `/admin/v1/workspaces/${workspaceId}/credits`, { amount });
  }

  createKey(workspaceId: string, body: { name?: string; rate_limit_per_minute?: number } = {}): Promise<{ id: string; key: string; prefix: string }> {
    return this.send('POST', `/admin/v1/workspaces/${workspaceId}/keys`, body);
  }

  revokeKey(keyId: string): Promise<{ id: string; revoked_at: string }> {
    return this.send('POST', `/admin/v1/keys/${keyId}/revoke`);
  }

  /** Replays the whole event log against the projections. */
  audit(): Promise<{ ok: boolean; events: number; workspaces: number; mismatches: unknown[] }> {
    return this.send('POST', '/admin/v1/audit');
  }

  async ledger(workspaceId: string, requestId?: string): Promise<LedgerEntry[]> {
    const q = requestId ? `?request_id=${encodeURIComponent(requestId)}` : '';
    return (await this.send('GET', `/admin/v1/workspaces/${workspaceId}/ledger${q}`)).data;
  }
}

/** A workspace with credits and one key: the caller of most tests. */
export interface Customer {
  workspaceId: string;
  keyId: string;
  key: string;
  /** POST a JSON body with this customer's key. */
  post(path: string, json: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  balance(): Promise<number>;
}

export async function newCustomer(server: E2eServer, credits = 1000, name = 'e2e'): Promise<Customer> {
  const ws = await server.admin.createWorkspace({ name, credits });
  const key = await server.admin.createKey(ws.id, { name: `${name} key` });
  return {
    workspaceId: ws.id,
    keyId: key.id,
    key: key.key,
    post: (path, json, headers) => call(server.url, 'POST', path, { key: key.key, json, headers }),
    balance: () => server.admin.balance(ws.id),
  };
}
