import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AdminApiError, AdminClient } from '../../../services/console/admin-client';
import { run } from '../../../services/console/cli';

// A stand-in admin API on a real socket, scripted per test: it checks what the CLI sends
// (method, path, token, body) and answers like the contract. The real server's end-to-end test
// lives with the HTTP layer.
type Answer = { status: number; body: unknown };
let handler: (req: IncomingMessage, body: string) => Answer;
const seen: Array<{ method: string; url: string; authorization?: string; contentType?: string; body: string }> = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, contentType: req.headers['content-type'], body });
      const answer = handler(req, body);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'x-request-id': 'req_01J00000000000000000000000' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    env: { ADMIN_URL: baseUrl, ADMIN_TOKEN: 'test-admin-token' },
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  });
  return { code, stdout, stderr };
}

const entry = (position: number, balance: number) => ({ position, type: 'CreditsGranted', request_id: null, key_id: null, credits: 5, balance_after: balance, recorded_at: '2025-01-01T00:00:00.000Z' });

describe('the admin CLI', () => {
  it('creates a workspace with a JSON body and the bearer token, and prints its fields', async () => {
    handler = () => ({ status: 201, body: { id: 'ws_1', name: 'Acme Corp', balance: 100, max_concurrency: 4 } });
    const { code, stdout } = await cli('workspace', 'create', '--name', 'Acme Corp', '--credits', '100', '--max-concurrency', '4');
    expect(code).toBe(0);
    expect(seen).toEqual([
      { method: 'POST', url: '/admin/v1/workspaces', authorization: 'Bearer test-admin-token', contentType: 'application/json', body: '{"name":"Acme Corp","credits":100,"max_concurrency":4}' },
    ]);
    expect(stdout).toMatch(/^id +ws_1$/m);
    expect(stdout).toMatch(/^balance +100$/m);
  });

  it('prints the raw answer with --json', async () => {
    handler = () => ({ status: 200, body: { id: 'key_1', revoked_at: '2025-01-01T00:00:00.000Z' } });
    const { code, stdout } = await cli('key', 'revoke', 'key_1', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ id: 'key_1', revoked_at: '2025-01-01T00:00:00.000Z' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/admin/v1/keys/key_1/revoke', body: '' });
  });

  it('prints an API error as code: message and exits 1', async () => {
    handler = () => ({ status: 404, body: { error: { code: 'not_found', message: 'no workspace ws_x' }, meta: { request_id: 'req_x', credits_charged: 0, credits_remaining: null } } });
    expect(await cli('workspace', 'get', 'ws_x')).toEqual({ code: 1, stdout: '', stderr: 'not_found: no workspace ws_x\n' });
  });

  it('says so when the server cannot be reached', async () => {
    let stderr = '';
    const code = await run(['audit', '--url', 'http://127.0.0.1:1', '--token', 't'], { env: {}, stdout: { write: () => true }, stderr: { write: (t: string) => (stderr += t) } });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^connection_failed: could not reach http:\/\/127\.0\.0\.1:1/);
  });

  it('exits 2 with the usage on a command line it cannot run, calling nothing', async () => {
    const { code, stderr } = await cli('credits', 'grant', 'ws_1', 'ten');
    expect(code).toBe(2);
    expect(stderr).toMatch(/<amount> must be a whole number/);
    expect(stderr).toMatch(/Usage: npm run admin/);
    expect(seen).toEqual([]);
  });

  it('passes usage filters as query parameters and totals the rows', async () => {
    handler = () => ({
      status: 200,
      body: {
        data: [
          { day: '2025-01-01', key_id: 'key_1', operation: 'company', calls: 3, credits_charged: 3, credits_refunded: 1, errors: 1 },
          { day: '2025-01-02', key_id: 'key_1', operation: 'domain', calls: 1, credits_charged: 4, credits_refunded: 0, errors: 0 },
        ],
      },
    });
    const { code, stdout } = await cli('usage', 'ws_1', '--key', 'key_1', '--from', '2025-01-01');
    expect(code).toBe(0);
    expect(seen[0]!.url).toBe('/admin/v1/workspaces/ws_1/usage?key_id=key_1&from=2025-01-01');
    expect(stdout.split('\n')[0]).toMatch(/^DAY +KEY +OPERATION +CALLS +CHARGED +REFUNDED +ERRORS$/);
    expect(stdout).toMatch(/^total +- +- +4 +7 +1 +1$/m);
  });

  it('shows one ledger page and where the next starts, or follows every page with --all', async () => {
    handler = (req) => {
      const after = Number(new URL(req.url!, 'http://x').searchParams.get('after') ?? 0);
      return after === 0 ? { status: 200, body: { data: [entry(1, 5), entry(2, 10)], next: 2 } } : { status: 200, body: { data: [entry(3, 15)], next: null } };
    };
    const one = await cli('ledger', 'ws_1', '--limit', '2');
    expect(one.code).toBe(0);
    expect(one.stdout.trim().split('\n')).toHaveLength(3);
    expect(one.stderr).toBe('more entries: add --after 2 (or --all)\n');

    seen.length = 0;
    const all = await cli('ledger', 'ws_1', '--limit', '2', '--all', '--json');
    expect(seen.map((s) => s.url)).toEqual(['/admin/v1/workspaces/ws_1/ledger?limit=2', '/admin/v1/workspaces/ws_1/ledger?after=2&limit=2']);
    expect(JSON.parse(all.stdout)).toEqual({ data: [entry(1, 5), entry(2, 10), entry(3, 15)], next: null });
  });

  it('reports a failed audit with every mismatch and exits 1', async () => {
    handler = () => ({
      status: 200,
      body: { ok: false, events: 120, workspaces: 3, mismatches: [{ projection: 'workspaces', key: 'ws_1', field: 'balance', expected: 10, actual: 11 }] },
    });
    const { code, stdout, stderr } = await cli('audit');
    expect(code).toBe(1);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^audit FAILED: 1 mismatch \(120 events, 3 workspaces\)$/m);
    expect(stdout).toMatch(/^workspaces +ws_1 +balance +10 +11$/m);
  });

  it('names the first broken link of a broken ledger chain and exits 1', async () => {
    const link = { workspace_id: 'ws_1', position: 42, stream: 'workspace-ws_1', version: 7, field: 'hash', expected: 'aa', actual: 'bb' };
    handler = () => ({ status: 200, body: { ok: false, events: 120, workspaces: 3, mismatches: [], chains: { checked: 3, broken: [link] } } });
    const { code, stdout } = await cli('audit');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^audit FAILED: 0 mismatches, 1 broken ledger chain \(120 events, 3 workspaces\)$/m);
    expect(stdout).toMatch(/^ws_1 +42 +workspace-ws_1 +7 +hash +aa +bb$/m);
  });

  it('reports a clean audit and exits 0', async () => {
    handler = () => ({ status: 200, body: { ok: true, events: 120, workspaces: 3, mismatches: [] } });
    expect(await cli('audit')).toMatchObject({ code: 0, stdout: 'audit ok: 120 events, 3 workspaces, every projection matches the log\n' });
  });
});

describe('the admin client', () => {
  it('escapes ids in paths and turns a non-envelope failure into bad_response', async () => {
    handler = () => ({ status: 500, body: 'oops' });
    const client = new AdminClient({ baseUrl: `${baseUrl}/`, token: 't' });
    const err = await client.getWorkspace('ws/../x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdminApiError);
    expect(err).toMatchObject({ code: 'bad_response', status: 500, requestId: 'req_01J00000000000000000000000' });
    expect(seen[0]!.url).toBe('/admin/v1/workspaces/ws%2F..%2Fx');
  });
});
