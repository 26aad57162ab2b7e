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
    auditPollMs: 1,
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
    handler = () => ({ status: 200, body: { id: 'key_1', revoked_at: '2025-01-01T00:00:00.000Z', deleted_watches: [] } });
    const { code, stdout } = await cli('key', 'revoke', 'key_1', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ id: 'key_1', revoked_at: '2025-01-01T00:00:00.000Z', deleted_watches: [] });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/admin/v1/keys/key_1/revoke', body: '' });
  });

  it('says which watches went with a revoked key', async () => {
    handler = () => ({ status: 200, body: { id: 'key_1', revoked_at: '2025-01-01T00:00:00.000Z', deleted_watches: ['wat_1', 'wat_2'] } });
    expect((await cli('key', 'revoke', 'key_1')).stdout).toBe('revoked key_1 at 2025-01-01T00:00:00.000Z; deleted its watches wat_1, wat_2\n');
    handler = () => ({ status: 200, body: { id: 'key_1', revoked_at: '2025-01-01T00:00:00.000Z', deleted_watches: [] } });
    expect((await cli('key', 'revoke', 'key_1')).stdout).toBe('revoked key_1 at 2025-01-01T00:00:00.000Z\n');
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

  it('starts an audit job and follows it: progress lines on stderr, the report on stdout', async () => {
    const report = { ok: true, events: 12000, workspaces: 3, mismatches: [], chains: { checked: 3, broken: [] } };
    handler = auditJobServer([
      { phase: 'replaying', events_read: 5000, position: 6000, head_position: 12000, percent: 50, events_per_second: 2500, elapsed_ms: 2000 },
      { phase: 'replaying', events_read: 10000, position: 10500, head_position: 12000, percent: 87.5, events_per_second: 3333, elapsed_ms: 3000 },
      { phase: 'comparing', events_read: 12000, position: 12000, head_position: 12000, percent: 100, events_per_second: 3000, elapsed_ms: 4000 },
      { state: 'done', phase: null, events_read: 12000, position: 12000, head_position: 12000, percent: 100, events_per_second: 2400, elapsed_ms: 5000, report },
    ]);
    const { code, stdout, stderr } = await cli('audit');
    expect(code).toBe(0);
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /admin/v1/audits', ...Array(4).fill('GET /admin/v1/audits/aud_1')]);
    expect(stdout).toBe('audit ok: 12000 events, 3 workspaces, 3 ledger chains, every projection matches the log\n');
    // Not a terminal: a line per poll, the last one saying how it ended.
    expect(stderr.trimEnd().split('\n')).toEqual([
      'audit aud_1: started on the server',
      'audit aud_1: 5000 events read, 50.0% of the log (position 6000 of 12000), 2500 events/s, 2.0s',
      'audit aud_1: 10000 events read, 87.5% of the log (position 10500 of 12000), 3333 events/s, 3.0s',
      'audit aud_1: 12000 events read, 100.0% of the log (position 12000 of 12000), 3000 events/s, 4.0s; comparing the projections',
      'audit aud_1: done, 12000 events read in 5.0s (2400 events/s)',
    ]);
  });

  it('follows the audit already running on the server rather than starting another', async () => {
    const report = { ok: true, events: 7, workspaces: 1, mismatches: [] };
    handler = auditJobServer([{ state: 'done', phase: null, events_read: 7, report }], { alreadyRunning: true });
    const { code, stderr } = await cli('audit');
    expect(code).toBe(0);
    expect(stderr.split('\n')[0]).toBe('audit aud_1: already running on the server since 2025-01-01T00:00:00.000Z, following it');
  });

  it('reports a failed audit with every mismatch and exits 1', async () => {
    handler = auditJobServer([
      { state: 'done', phase: null, report: { ok: false, events: 120, workspaces: 3, mismatches: [{ projection: 'workspaces', key: 'ws_1', field: 'balance', expected: 10, actual: 11 }] } },
    ]);
    const { code, stdout } = await cli('audit');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^audit FAILED: 1 mismatch \(120 events, 3 workspaces\)$/m);
    expect(stdout).toMatch(/^workspaces +ws_1 +balance +10 +11$/m);
  });

  it('names the first broken link of a broken ledger chain and exits 1', async () => {
    const link = { workspace_id: 'ws_1', position: 42, stream: 'workspace-ws_1', version: 7, field: 'hash', expected: 'aa', actual: 'bb' };
    handler = auditJobServer([{ state: 'done', phase: null, report: { ok: false, events: 120, workspaces: 3, mismatches: [], chains: { checked: 3, broken: [link] } } }]);
    const { code, stdout } = await cli('audit');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^audit FAILED: 0 mismatches, 1 broken ledger chain \(120 events, 3 workspaces\)$/m);
    expect(stdout).toMatch(/^ws_1 +42 +workspace-ws_1 +7 +hash +aa +bb$/m);
  });

  it('exits 1 when the audit job fails on the server, or the server no longer holds it', async () => {
    handler = auditJobServer([{ state: 'failed', phase: null, elapsed_ms: 1500, error: 'the audit failed: connection refused' }]);
    const failed = await cli('audit');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^audit aud_1: FAILED after 1\.5s: the audit failed: connection refused$/m);
    expect(failed.stderr).toMatch(/^audit_failed: the audit failed: connection refused$/m);

    const start = auditJobServer([]);
    handler = (req, body) => (req.method === 'GET' ? notFound('no_audit') : start(req, body));
    const lost = await cli('audit');
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/^not_found: the server no longer holds audit aud_1 \(it restarted, or another instance answered behind the same address\): run the audit again$/m);
  });

  it('audits in one call on a server without audit jobs', async () => {
    handler = (req) =>
      req.url === '/admin/v1/audits' ? notFound(undefined, 'route_not_found') : { status: 200, body: { ok: true, events: 120, workspaces: 3, mismatches: [] } };
    expect(await cli('audit')).toMatchObject({ code: 0, stderr: '', stdout: 'audit ok: 120 events, 3 workspaces, every projection matches the log\n' });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /admin/v1/audits', 'POST /admin/v1/audit']);
  });
});

/** An admin API with one audit job, `aud_1`: started (202, or 200 when already running), then each GET answers the next of `steps`. */
function auditJobServer(steps: Array<Record<string, unknown>>, { alreadyRunning = false } = {}): typeof handler {
  const job = {
    id: 'aud_1', state: 'running', phase: 'catching_up', started_at: '2025-01-01T00:00:00.000Z', finished_at: null, elapsed_ms: 0,
    events_read: 0, position: 0, head_position: null, percent: null, events_per_second: 0, report: null, error: null,
  };
  let next = 0;
  return (req) => {
    if (req.method === 'POST' && req.url === '/admin/v1/audits') return { status: alreadyRunning ? 200 : 202, body: job };
    if (req.method === 'GET' && req.url === '/admin/v1/audits/aud_1') return { status: 200, body: { ...job, ...steps[Math.min(next++, steps.length - 1)] } };
    return notFound(undefined, 'route_not_found');
  };
}

function notFound(reason?: string, code = 'not_found'): Answer {
  return { status: 404, body: { error: { code, message: 'not here', ...(reason ? { reason } : {}) }, meta: { request_id: 'req_x', credits_charged: 0, credits_remaining: null } } };
}

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
