// End-to-end: input no well-behaved client sends, on PGlite and on PostgreSQL (+ Redis).
//  - Text PostgreSQL cannot store (U+0000, unpaired surrogates), blank text and invisible or
//    control characters in references: a 400 naming the field, decided before any charge.
//  - Credits stay exact: grants of at most 10^12, balances of at most 10^15, limits at their edges.
//  - Requests the HTTP parser or the router refuses (sent over a raw socket where fetch cannot):
//    still the error envelope with X-Request-Id.
//  - Properties: arbitrary unicode in every field of every endpoint never gives a 5xx, always the
//    envelope, and a 400 never charges.
//  - Properties over generated upstream answers (a crafted upstream as SOURCE_URL): any text in any
//    field of a company, person or search answer gives a 200 with the text cleaned (no control
//    character, no lone surrogate, about at most 300, current employers first) or a refunded 502
//    parse_error, never another 5xx; the cleaned answer served again has the same content_hash.
// Expectations come from docs/api.md ("Request fields", "Upstream data", "Errors").
import fc from 'fast-check';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { anyCharacter, anyString, nearly } from '../support/unicode-arbitraries';
import { companyEnvelope, personEnvelope, searchEnvelope, startCraftedUpstream, type CraftedUpstream } from './support/crafted-upstream';
import { freshLoopbackAddress } from './support-instances/http';
import { DETAIL_ISSUES, ERROR_TABLE, REQUEST_ID, expectDetail, expectError, expectedContentHash, type ErrorCode } from './support/contract';
import { ADMIN_TOKEN, backends, call, startE2eServer, type E2eServer, type HttpResult, type LedgerEntry } from './support/harness';

const GRANT_MAX = 1_000_000_000_000;
const BALANCE_MAX = 1_000_000_000_000_000;
/** Runs per property: enough to meet controls, surrogates and near-valid values on every field. */
const RUNS = 100;

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/**
 * Any error envelope: the code's status, type and retryable, the request id in header and body,
 * and nothing charged (a 404 `not_found` may charge its not-found price: `anyCharge`).
 */
function expectEnvelope(status: number, requestIdHeader: string | null | undefined, body: any, text: string, anyCharge = false) {
  expect(body?.error?.code, text).toBeDefined();
  const code = body.error.code as ErrorCode;
  expect(Object.keys(ERROR_TABLE), text).toContain(code);
  const [wantStatus, type, retryable] = ERROR_TABLE[code];
  expect({ status, type: body.error.type, retryable: body.error.retryable }, text).toEqual({ status: wantStatus, type, retryable });
  expect(typeof body.error.message).toBe('string');
  expect(body.error.doc_url).toMatch(new RegExp(`/docs/errors#${code}$`));
  expect(requestIdHeader).toMatch(REQUEST_ID);
  expect(body.meta.request_id).toBe(requestIdHeader);
  if (!anyCharge) expect(body.meta.credits_charged).toBe(0);
  if (code === 'invalid_request') {
    expect(body.error.details.length, text).toBeGreaterThan(0);
    for (const d of body.error.details) {
      expect(Object.keys(d).sort()).toEqual(['field', 'issue', 'message']);
      expect(DETAIL_ISSUES).toContain(d.issue);
      expect(typeof d.field).toBe('string');
    }
  } else expect(body.error.details).toBeUndefined();
}

/** Percent-encodes every UTF-8 byte; unpaired surrogates become U+FFFD on the way, as in any URL. */
const pct = (text: string) => [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

// ---------------------------------------------------------------- raw HTTP/1.1

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/** Sends bytes as they are, from a loopback address of its own, and reads until the server closes. */
function sendRaw(baseUrl: string, bytes: string, localAddress: string): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port), localAddress });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer closed the connection for ${JSON.stringify(bytes.slice(0, 80))}`));
    }, 20_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {}); // a reset after the answer is fine; no answer fails below
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = (end === -1 ? text : text.slice(0, end)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const payload = end === -1 ? '' : text.slice(end + 4);
      let body: unknown;
      try {
        body = JSON.parse(payload);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, body, text });
    });
    socket.write(Buffer.from(bytes, 'latin1'));
  });
}

describe.each(backends())('bad input over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let workspaceId: string;
    let key: string;

    const adminCall = (method: string, path: string, json?: unknown) => call(server.url, method, path, { json, headers: admin });
    const post = (path: string, json: unknown) => call(server.url, 'POST', path, { key, json });
    const balance = () => server.admin.balance(workspaceId);
    /** The whole ledger of a workspace, every page. */
    async function ledger(id: string): Promise<LedgerEntry[]> {
      const entries: LedgerEntry[] = [];
      let after = 0;
      for (;;) {
        const page = (await adminCall('GET', `/admin/v1/workspaces/${id}/ledger?after=${after}&limit=1000`)).body;
        entries.push(...page.data);
        if (page.next === null) return entries;
        after = page.next;
      }
    }
    /** Events in the whole log (the audit replays it): nothing appended means this does not move. */
    const eventCount = async (): Promise<number> => (await adminCall('POST', '/admin/v1/audit')).body.events;

    beforeAll(async () => {
      server = await startE2eServer(backend);
      const ws = await server.admin.createWorkspace({ name: 'bad input', credits: 1_000_000 });
      workspaceId = ws.id;
      // The properties send hundreds of calls a minute with this key.
      key = (await server.admin.createKey(ws.id, { name: 'fuzz', rate_limit_per_minute: 100_000 })).key;
    });
    afterAll(async () => server?.stop());

    describe('text that must not reach PostgreSQL, blank text and hidden characters in references', () => {
      const LOOKUP_CASES: Array<[string, string, unknown, ErrorCode, string?, string?]> = [
        ['a NUL in a search query', '/v1/search', { query: 'x\u0000y' }, 'invalid_request', 'query', 'invalid_type'],
        ['a lone surrogate in a search query', '/v1/search', { query: 'acme\uD800' }, 'invalid_request', 'query', 'invalid_type'],
        ['a blank search query', '/v1/search', { query: '   ' }, 'invalid_request', 'query', 'too_small'],
        ['a control character in a search query', '/v1/search', { query: 'acme\u0007robotics' }, 'invalid_request', 'query', 'invalid_type'],
        ['a NUL in a person name', '/v1/person', { url: 'Jane\u0000 Doe' }, 'invalid_request', 'url', 'invalid_type'],
        ['a lone surrogate in a person URL', '/v1/person', { url: 'https://www.linkedin.com/in/jane\uDC00' }, 'invalid_request', 'url', 'invalid_type'],
        ['a NUL in a company reference', '/v1/company', { url: 'acme-robotics\u0000' }, 'invalid_request', 'url', 'invalid_type'],
        ['a blank company reference', '/v1/company', { url: ' \t ' }, 'invalid_request', 'url', 'too_small'],
        // Precedence: text that cannot be stored is invalid_request whatever the field; text that
        // can but is no reference (a control, a zero-width space, a backslash) gets the endpoint's code.
        ['a trailing NUL in a domain', '/v1/domain', { domain: 'acmerobotics.com\u0000' }, 'invalid_request', 'domain', 'invalid_type'],
        ['a trailing control character in a domain', '/v1/domain', { domain: 'acmerobotics.com\u0001' }, 'invalid_domain'],
        ['a trailing newline in a domain', '/v1/domain', { domain: 'acmerobotics.com\n' }, 'invalid_domain'],
        ['a trailing DEL in a domain', '/v1/domain', { domain: 'acmerobotics.com\u007F' }, 'invalid_domain'],
        ['a zero-width space in a domain', '/v1/domain', { domain: 'acmerobotics.com\u200B' }, 'invalid_domain'],
        ['a %-escaped zero-width space in a domain', '/v1/domain', { domain: 'acme%E2%80%8Brobotics.com' }, 'invalid_domain'],
        ['a trailing backslash in a domain', '/v1/domain', { domain: 'acmerobotics.com\\' }, 'invalid_domain'],
        ['a backslash as a path in a domain', '/v1/domain', { domain: 'https://acmerobotics.com\\about' }, 'invalid_domain'],
        ['a soft hyphen in a domain', '/v1/domain', { domain: 'acme\u00ADrobotics.com' }, 'invalid_domain'],
        ['a zero-width space in a company slug', '/v1/company', { url: 'acme-robotics\u200B' }, 'invalid_company_reference'],
        ['a byte-order mark before a company URL', '/v1/company', { url: '\uFEFFhttps://www.linkedin.com/company/acme-robotics' }, 'invalid_company_reference'],
        ['a zero-width joiner in a person name', '/v1/person', { url: 'Jane\u200D Doe' }, 'invalid_person_reference'],
        ['a control character in a person URL', '/v1/person', { url: 'https://www.linkedin.com/in/jane-doe-42\u0001' }, 'invalid_person_reference'],
        ['a NUL in the cache area', '/v1/cache/domain', { domain: 'acmerobotics.com\u0000' }, 'invalid_request', 'domain', 'invalid_type'],
        ['a zero-width space in the cache area', '/v1/cache/company', { url: 'acme\u200B-robotics' }, 'invalid_company_reference'],
        ['a lone surrogate in the cache area', '/v1/cache/person', { url: '\uD83DJane' }, 'invalid_request', 'url', 'invalid_type'],
      ];

      test.each(LOOKUP_CASES)('%s: %s is %s, nothing charged, nothing in the ledger', async (_label, path, body, code, field, issue) => {
        const before = await balance();
        const res = await post(path, body);
        expectError(res, server, { code, remaining: before });
        if (field !== undefined) expectDetail(res, field, issue!);
        if (code === 'invalid_request') expect(res.body.error.details).toHaveLength(1);
        expect(await balance()).toBe(before);
        expect(await server.admin.ledger(workspaceId, res.body.meta.request_id)).toEqual([]);
      });

      test('the same domain written plainly is looked up (and charged): the refusals above are about the characters', async () => {
        const before = await balance();
        const res = await post('/v1/domain', { domain: ' acmerobotics.com ' });
        expect(res.status, res.text).toBe(200);
        expect(res.body.meta.resolved.domain).toBe('acmerobotics.com');
        expect(await balance()).toBe(before - 4);
      });

      const ADMIN_CASES: Array<[string, string, string, unknown, string, string]> = [
        ['a NUL in a workspace name', 'POST', '/admin/v1/workspaces', { name: 'acme\u0000' }, 'name', 'invalid_type'],
        ['a lone surrogate in a workspace name', 'POST', '/admin/v1/workspaces', { name: '\uD800' }, 'name', 'invalid_type'],
        ['a newline in a workspace name', 'POST', '/admin/v1/workspaces', { name: 'acme\ninc' }, 'name', 'invalid_type'],
        ['a blank workspace name', 'POST', '/admin/v1/workspaces', { name: '  ' }, 'name', 'too_small'],
        ['a NUL in a key name', 'POST', '/admin/v1/workspaces/{ws}/keys', { name: 'k\u0000' }, 'name', 'invalid_type'],
        ['a lone surrogate in a grant reason', 'POST', '/admin/v1/workspaces/{ws}/credits', { amount: 5, reason: 'promo \uDC00' }, 'reason', 'invalid_type'],
        ['a NUL as the workspace id', 'GET', '/admin/v1/workspaces/%00', undefined, 'id', 'invalid_type'],
        ['a NUL in a workspace id', 'PATCH', '/admin/v1/workspaces/ws_%00', { max_concurrency: 3 }, 'id', 'invalid_type'],
        ['a NUL in a key id', 'POST', '/admin/v1/keys/key_%00/revoke', undefined, 'id', 'invalid_type'],
        ['a 5,000-character workspace id', 'GET', `/admin/v1/workspaces/${'w'.repeat(5000)}`, undefined, 'id', 'too_big'],
        ['a NUL as request_id', 'GET', '/admin/v1/workspaces/{ws}/ledger?request_id=%00', undefined, 'request_id', 'invalid_type'],
        ['a NUL as key_id', 'GET', '/admin/v1/workspaces/{ws}/usage?key_id=%00', undefined, 'key_id', 'invalid_type'],
        ['a NUL as from', 'GET', '/admin/v1/workspaces/{ws}/usage?from=%00', undefined, 'from', 'invalid_type'],
      ];

      test.each(ADMIN_CASES)('%s: 400 naming the field, nothing appended', async (_label, method, path, body, field, issue) => {
        const [before, events] = [await balance(), await eventCount()];
        const res = await adminCall(method, path.replace('{ws}', workspaceId), body);
        expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
        expect(res.body.error.code).toBe('invalid_request');
        expect(res.body.error.details, res.text).toEqual([{ field, issue, message: expect.any(String) }]);
        expect(await balance()).toBe(before);
        expect(await eventCount()).toBe(events);
      });

      test('a well-formed but unknown id stays 404 not_found', async () => {
        for (const path of ['/admin/v1/workspaces/ws_01J0000000000000000000000Z', '/admin/v1/workspaces/no%20such%20id', '/admin/v1/keys/key_nope/revoke']) {
          const res = await adminCall(path.endsWith('revoke') ? 'POST' : 'GET', path);
          expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
          expect(res.body.error.code).toBe('not_found');
        }
      });
    });

    describe('credits stay exact', () => {
      const grant = (id: string, amount: unknown) => adminCall('POST', `/admin/v1/workspaces/${id}/credits`, { amount });

      test.each([
        ['2^53 - 1', Number.MAX_SAFE_INTEGER, 'too_big'],
        ['10^12 + 1', GRANT_MAX + 1, 'too_big'],
        ['1e300', 1e300, 'too_big'],
        ['0', 0, 'too_small'],
        ['-5', -5, 'too_small'],
        ['1.5', 1.5, 'invalid_type'],
        ['"5"', '5', 'invalid_type'],
      ])('a grant of %s is 400 %s on amount and the balance does not move', async (_label, amount, issue) => {
        const before = await balance();
        const res = await grant(workspaceId, amount);
        expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
        expect(res.body.error.details).toEqual([{ field: 'amount', issue, message: expect.any(String) }]);
        expect(await balance()).toBe(before);
      });

      test('grants of 10^12 fill a balance to exactly 10^15; one credit more is refused; every figure is exact', async () => {
        const ws = (await adminCall('POST', '/admin/v1/workspaces', { name: 'rich', credits: GRANT_MAX })).body;
        expect(ws.balance).toBe(GRANT_MAX);
        // 999 grants: a handful in flight at a time (they queue on the workspace's lock anyway).
        const grants = Array.from({ length: BALANCE_MAX / GRANT_MAX - 1 }, () => GRANT_MAX);
        const balances: number[] = [];
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            for (let amount = grants.pop(); amount !== undefined; amount = grants.pop()) {
              const res = await grant(ws.id, amount);
              expect(res.status, res.text).toBe(201);
              balances.push(res.body.balance);
            }
          }),
        );
        expect(Math.max(...balances)).toBe(BALANCE_MAX);
        expect((await server.admin.workspace(ws.id)).balance).toBe(BALANCE_MAX);

        const over = await grant(ws.id, 1);
        expectEnvelope(over.status, over.headers.get('x-request-id'), over.body, over.text);
        expect(over.body.error.details).toEqual([{ field: 'amount', issue: 'too_big', message: expect.any(String) }]);
        expect((await server.admin.workspace(ws.id)).balance).toBe(BALANCE_MAX);

        // A charge at that height is exact too, in the answer, the balance and the ledger.
        const richKey = (await server.admin.createKey(ws.id)).key;
        const looked = await call(server.url, 'POST', '/v1/company', { key: richKey, json: { url: 'acme-robotics' } });
        expect(looked.status, looked.text).toBe(200);
        expect(looked.body.meta.credits_remaining).toBe(BALANCE_MAX - 1);
        expect(looked.headers.get('x-credits-remaining')).toBe('999999999999999');
        expect((await server.admin.workspace(ws.id)).balance).toBe(BALANCE_MAX - 1);
        const entries = await ledger(ws.id);
        expect(entries).toHaveLength(1000 + 1);
        expect(entries.at(-1)).toMatchObject({ type: 'LookupCharged', credits: -1, balance_after: BALANCE_MAX - 1 });
        expect(entries.at(-2)).toMatchObject({ type: 'CreditsGranted', credits: GRANT_MAX });
        expect(Math.max(...entries.map((e) => e.balance_after))).toBe(BALANCE_MAX);
        expect((await adminCall('POST', '/admin/v1/audit')).body.ok).toBe(true);
      }, 120_000);

      test.each([
        ['credits', { name: 'w', credits: GRANT_MAX }, { name: 'w', credits: GRANT_MAX + 1 }, 'too_big'],
        ['credits', { name: 'w', credits: 0 }, { name: 'w', credits: -1 }, 'too_small'],
        ['max_concurrency', { name: 'w', max_concurrency: 1000 }, { name: 'w', max_concurrency: 1001 }, 'too_big'],
        ['max_concurrency', { name: 'w', max_concurrency: 1 }, { name: 'w', max_concurrency: 0 }, 'too_small'],
        ['name', { name: 'n'.repeat(200) }, { name: 'n'.repeat(201) }, 'too_big'],
      ])('creating a workspace: %s at its bound is taken, one past it is 400 %s', async (field, ok, bad, issue) => {
        const created = await adminCall('POST', '/admin/v1/workspaces', ok);
        expect(created.status, created.text).toBe(201);
        for (const [name, value] of Object.entries(ok)) if (name !== 'name') expect(created.body[name === 'credits' ? 'balance' : name]).toBe(value);
        const refused = await adminCall('POST', '/admin/v1/workspaces', bad);
        expectEnvelope(refused.status, refused.headers.get('x-request-id'), refused.body, refused.text);
        expect(refused.body.error.details).toEqual([{ field, issue, message: expect.any(String) }]);
      });

      test('max_concurrency 1 and 1000 are taken by PATCH, 0 and 1001 are not', async () => {
        for (const value of [1, 1000]) {
          const res = await adminCall('PATCH', `/admin/v1/workspaces/${workspaceId}`, { max_concurrency: value });
          expect(res.status, res.text).toBe(200);
          expect(res.body.max_concurrency).toBe(value);
        }
        for (const [value, issue] of [[0, 'too_small'], [1001, 'too_big'], [2 ** 53, 'too_big']] as const) {
          const res = await adminCall('PATCH', `/admin/v1/workspaces/${workspaceId}`, { max_concurrency: value });
          expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
          expect(res.body.error.details).toEqual([{ field: 'max_concurrency', issue, message: expect.any(String) }]);
        }
        expect((await server.admin.workspace(workspaceId)).max_concurrency).toBe(1000);
      });

      test('rate_limit_per_minute 1 and 100000 make keys, 0 and 100001 do not', async () => {
        for (const value of [1, 100_000]) {
          const res = await adminCall('POST', `/admin/v1/workspaces/${workspaceId}/keys`, { rate_limit_per_minute: value });
          expect(res.status, res.text).toBe(201);
          expect(res.body.rate_limit_per_minute).toBe(value);
        }
        for (const [value, issue] of [[0, 'too_small'], [100_001, 'too_big'], [1.5, 'invalid_type']] as const) {
          const res = await adminCall('POST', `/admin/v1/workspaces/${workspaceId}/keys`, { rate_limit_per_minute: value });
          expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
          expect(res.body.error.details).toEqual([{ field: 'rate_limit_per_minute', issue, message: expect.any(String) }]);
        }
      });
    });

    describe('requests the HTTP parser or the router refuses, over a raw socket', () => {
      const host = () => new URL(server.url).host;
      const bearer = () => `Authorization: Bearer ${key}\r\n`;
      const adminAuth = `Authorization: Bearer ${ADMIN_TOKEN}\r\n`;
      const jsonPost = (path: string, headers: string, body = '{"url":"acme-robotics"}') =>
        `POST ${path} HTTP/1.1\r\nHost: ${host()}\r\n${bearer()}${headers}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;

      // [label, request bytes, status, code, details field, issue]; admin ones carry no RateLimit headers.
      const CASES: Array<[string, () => string, number, ErrorCode, string | null, string | null]> = [
        ['a header over 16 KB', () => `GET /v1/health HTTP/1.1\r\nHost: ${host()}\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 400, 'invalid_request', 'headers', 'too_big'],
        ['Content-Length that is no number', () => `POST /v1/company HTTP/1.1\r\nHost: ${host()}\r\n${bearer()}Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`, 400, 'invalid_request', 'Content-Length', 'invalid_type'],
        ['Content-Length past any number', () => `POST /v1/company HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 99999999999999999999999\r\n\r\n{}`, 400, 'invalid_request', 'Content-Length', 'invalid_type'],
        ['two different Content-Lengths', () => `POST /v1/company HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, 400, 'invalid_request', 'Content-Length', 'invalid_type'],
        ['Content-Length with Transfer-Encoding', () => `POST /v1/company HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, 400, 'invalid_request', 'Transfer-Encoding', 'invalid_type'],
        ['a Transfer-Encoding other than chunked', () => jsonPost('/v1/company', 'Transfer-Encoding: gzip\r\n').replace(/Content-Length: \d+\r\n/, ''), 400, 'invalid_request', 'Transfer-Encoding', 'invalid_type'],
        ['a chunk size that is no hex number', () => `POST /v1/company HTTP/1.1\r\nHost: ${host()}\r\n${bearer()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400, 'invalid_request', 'body', 'invalid_type'],
        ['a control character in Idempotency-Key', () => jsonPost('/v1/company', 'Content-Type: application/json\r\nIdempotency-Key: order\u00011\r\n'), 400, 'invalid_request', 'Idempotency-Key', 'invalid_type'],
        ['a NUL in a header value', () => `GET /v1/health HTTP/1.1\r\nHost: ${host()}\r\nX-Trace: a\u0000b\r\n\r\n`, 400, 'invalid_request', 'X-Trace', 'invalid_type'],
        ['a space in a header name', () => `GET /v1/health HTTP/1.1\r\nHost: ${host()}\r\nBad Header: 1\r\n\r\n`, 400, 'invalid_request', 'headers', 'invalid_type'],
        ['a folded header line', () => `GET /v1/health HTTP/1.1\r\nHost: ${host()}\r\nX-A: 1\r\n  more\r\n\r\n`, 400, 'invalid_request', 'headers', 'invalid_type'],
        ['a NUL in the path', () => `GET /v1/hea\u0000lth HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'invalid_request', 'path', 'invalid_type'],
        ['a raw non-ASCII byte in the path', () => `GET /v1/\u00ffhealth HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'invalid_request', 'path', 'invalid_type'],
        ['no method', () => `\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\r\n\r\n`, 400, 'invalid_request', 'method', 'invalid_type'],
        ['an unknown HTTP version', () => `GET /v1/health HTTP/7.1\r\nHost: ${host()}\r\n\r\n`, 400, 'invalid_request', 'request_line', 'invalid_type'],
        ['bare LF line ends', () => `GET /v1/health HTTP/1.1\nHost: ${host()}\n\n`, 400, 'invalid_request', 'request_line', 'invalid_type'],
        ['a path that is no valid %-encoding: POST /v1/company%ZZ', () => jsonPost('/v1/company%ZZ', 'Content-Type: application/json\r\n'), 400, 'invalid_request', 'path', 'invalid_type'],
        ['a %-encoded path that is no UTF-8', () => `GET /admin/v1/workspaces/%E0%A4%A HTTP/1.1\r\nHost: ${host()}\r\n${adminAuth}Connection: close\r\n\r\n`, 400, 'invalid_request', 'path', 'invalid_type'],
        ['a 5,000-character admin id', () => `GET /admin/v1/workspaces/${'x'.repeat(5000)} HTTP/1.1\r\nHost: ${host()}\r\n${adminAuth}Connection: close\r\n\r\n`, 400, 'invalid_request', 'id', 'too_big'],
        ['an empty Content-Type', () => jsonPost('/v1/company', 'Content-Type: \r\n'), 400, 'invalid_request', 'body', 'unsupported_content_type'],
        ['Content-Type: application/json, text/plain', () => jsonPost('/v1/company', 'Content-Type: application/json, text/plain\r\n'), 400, 'invalid_request', 'body', 'unsupported_content_type'],
        ['an unparsable Content-Type on an admin route', () => `POST /admin/v1/workspaces HTTP/1.1\r\nHost: ${host()}\r\n${adminAuth}Content-Type: ;;\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{"name":"a"}`, 400, 'invalid_request', 'body', 'unsupported_content_type'],
        ['an unparsable Content-Type on no route', () => jsonPost('/v1/nothing-here', 'Content-Type: application/json, text/plain\r\n'), 404, 'route_not_found', null, null],
        ['HTTP/1.1 without Host', () => `GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n`, 400, 'invalid_request', 'Host', 'required'],
        ['CONNECT', () => `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`, 404, 'route_not_found', null, null],
      ];

      test.each(CASES)('%s: the envelope with X-Request-Id', async (_label, request, status, code, field, issue) => {
        const res = await sendRaw(server.url, request(), freshLoopbackAddress());
        expect(res.status, res.text).toBe(status);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expectEnvelope(res.status, res.headers['x-request-id'], res.body, res.text);
        expect(res.body.error.code).toBe(code);
        expect(res.body.meta.credits_remaining === null || Number.isInteger(res.body.meta.credits_remaining)).toBe(true);
        if (field !== null) expect(res.body.error.details, res.text).toEqual([{ field, issue, message: expect.any(String) }]);
        // Outside the admin API every answer carries the rate-limit headers (a fresh address: a full bucket).
        if (!request().includes('/admin/')) {
          expect(res.headers['ratelimit-limit'], res.text).toMatch(/^\d+$/);
          expect(res.headers['ratelimit-remaining']).toMatch(/^\d+$/);
          expect(res.headers['ratelimit-reset']).toMatch(/^\d+$/);
        }
        // Nothing in the message repeats the framework's or Node's wording.
        expect(res.text).not.toMatch(/FST_ERR|Client Error|HPE_|Parse Error/);
      });

      test('an Expect other than 100-continue is ignored: the request runs as usual', async () => {
        const res = await sendRaw(server.url, jsonPost('/v1/company', 'Content-Type: application/json\r\nExpect: 100-nope\r\n', '{}'), freshLoopbackAddress());
        expectEnvelope(res.status, res.headers['x-request-id'], res.body, res.text);
        expect(res.body.error.details).toEqual([{ field: 'url', issue: 'required', message: expect.any(String) }]);
      });

      test('after a refusal on the socket the server answers the next caller as usual', async () => {
        const from = freshLoopbackAddress();
        const refused = await sendRaw(server.url, `GET /v1/health HTTP/7.1\r\nHost: ${host()}\r\n\r\n`, from);
        expect(refused.status).toBe(400);
        const res = await call(server.url, 'GET', '/v1/health');
        expect(res.status).toBe(200);
      });
    });

    describe('properties: generated upstream answers are cleaned or refused, never a 500, never charged when refused', () => {
      let upstream: CraftedUpstream;
      let fed: E2eServer;
      let fedKey: string;
      let fedWorkspace: string;
      let serial = 0;

      beforeAll(async () => {
        upstream = await startCraftedUpstream();
        fed = await startE2eServer(backend, { SOURCE_URL: upstream.url });
        const ws = await fed.admin.createWorkspace({ name: 'upstream fuzz', credits: 1_000_000 });
        fedWorkspace = ws.id;
        fedKey = (await fed.admin.createKey(ws.id, { name: 'fuzz', rate_limit_per_minute: 100_000 })).key;
      });
      afterAll(async () => {
        await fed?.stop();
        await upstream?.close();
      });

      /** Text as a scraper may send it: clean, nearly clean, anything, or long enough to be cut. */
      const text = (valid: string) => fc.oneof({ weight: 2, arbitrary: fc.constant(valid) }, { weight: 3, arbitrary: nearly([valid]) }, { weight: 2, arbitrary: anyString() });
      const longText = fc.oneof(anyString(40), fc.string({ unit: anyCharacter, minLength: 280, maxLength: 420 }));
      const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 5 });
      const place = nullable(fc.record({ city: nullable(text('Lyon')), region: nullable(text('Rhône')), country: nullable(text('FR')) }));
      /** Now and then a break no cleaning mends: an unknown field, a negative count. */
      const breakage = fc.option(fc.constantFrom<Record<string, unknown>>({ unexpected: true }, { follower_count: -1 }), { nil: {}, freq: 8 });

      const companyAnswer = fc.record({
        name: text('Generated Co'),
        tagline: nullable(text('We make things')),
        description: nullable(longText),
        industry: nullable(text('Software')),
        type: nullable(text('Privately Held')),
        specialties: fc.array(text('robots'), { maxLength: 3 }),
        headquarters: place,
      });
      const employer = fc.record({
        company_name: text('Employer'),
        company_id: fc.constant(null),
        title: nullable(text('Engineer')),
        start_date: fc.constant('2020-01'),
        is_current: fc.boolean(),
      }).map((e) => ({ ...e, end_date: e.is_current ? null : '2021-06' }));
      const personAnswer = fc.record({
        full_name: text('Gen Person'),
        first_name: text('Gen'),
        last_name: text('Person'),
        headline: nullable(text('Builds things')),
        location: place,
        about: nullable(longText),
        employers: fc.array(employer, { maxLength: 4 }),
      });
      const searchAnswer = fc.array(fc.record({ title: text('Result'), snippet: longText }), { maxLength: 3 });

      const answer = fc.oneof(
        fc.tuple(fc.constant('company' as const), companyAnswer, breakage),
        fc.tuple(fc.constant('person' as const), personAnswer, breakage),
        fc.tuple(fc.constant('search' as const), searchAnswer, fc.constant({})),
      );

      /** Serves `data` (or the envelope built from it) for a fresh reference, and returns the call that asks for it. */
      function serve(kind: 'company' | 'person' | 'search', n: number, fields: unknown, broken: Record<string, unknown>) {
        if (kind === 'company') {
          const slug = `gen-co-${n}`;
          const envelope = companyEnvelope(slug, String(800_000 + n), { ...(fields as object), ...broken });
          upstream.company(slug, envelope);
          return { path: '/v1/company', body: { url: slug }, price: 1, again: (data: any) => upstream.company(slug, { company: data, aliases: envelope.aliases }) };
        }
        if (kind === 'person') {
          const id = `gen-p-${n}`;
          upstream.person(id, personEnvelope(id, { ...(fields as object), ...broken }));
          return { path: '/v1/person', body: { url: `https://www.linkedin.com/in/${id}` }, price: 1, again: (data: any) => upstream.person(id, { person: data }) };
        }
        const query = `gen query ${n}`;
        upstream.search(query, searchEnvelope(fields as Array<{ title: string; snippet: string }>));
        return { path: '/v1/search', body: { query }, price: 1, again: (data: any) => upstream.search(query, { results: data.results }) };
      }

      /** What a served profile holds: no control character (but \n and \t in long texts), no lone surrogate, the order and cut of the contract. */
      function expectCleaned(kind: string, data: any, res: HttpResult) {
        const walk = (value: unknown, key: string): void => {
          if (typeof value === 'string') {
            const multiline = ['description', 'about', 'snippet'].includes(key);
            expect(multiline ? /(?![\n\t])\p{Cc}/u.test(value) : /\p{Cc}/u.test(value), `${key} in ${res.text}`).toBe(false);
            expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value), key).toBe(false);
          } else if (Array.isArray(value)) for (const v of value) walk(v, key);
          else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, k);
        };
        walk(data, '');
        if (kind === 'person') {
          if (data.about !== null) expect(data.about.length).toBeLessThanOrEqual(300);
          const current: boolean[] = data.employers.map((e: { is_current: boolean }) => e.is_current);
          expect(current).toEqual([...current].sort((a, b) => Number(b) - Number(a)));
        }
        expect(res.body.meta.content_hash).toBe(expectedContentHash(data));
      }

      test('any text in any field of a company, person or search answer: 200 cleaned or 502 parse_error refunded; cleaned again, the same content_hash', async () => {
        const before = await fed.admin.balance(fedWorkspace);
        let charged = 0;
        const outcomes = { ok: 0, refused: 0 };
        const post = (path: string, json: unknown) => call(fed.url, 'POST', path, { key: fedKey, json });
        await fc.assert(
          fc.asyncProperty(answer, async ([kind, fields, broken]) => {
            serial += 1;
            const asked = serve(kind, serial, fields, broken);
            const res = await post(asked.path, asked.body);
            expect([200, 502], `${JSON.stringify(fields)} -> ${res.text}`).toContain(res.status);
            charged += res.body.meta.credits_charged;
            if (res.status === 502) {
              outcomes.refused += 1;
              expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
              expect(res.body.error.code).toBe('parse_error');
              const lines = (await fed.admin.ledger(fedWorkspace, res.body.meta.request_id)).map((e) => [e.type, e.credits]);
              expect(lines).toEqual([['LookupCharged', -asked.price], ['LookupRefunded', asked.price]]);
              return;
            }
            outcomes.ok += 1;
            expect(res.body.meta.credits_charged, res.text).toBe(asked.price);
            expectCleaned(kind, res.body.data, res);
            // The cleaned answer, sent again by the upstream: nothing left to clean, the same hash.
            asked.again(res.body.data);
            const again = await post(asked.path, { ...asked.body, max_age: 0 });
            expect(again.status, again.text).toBe(200);
            charged += again.body.meta.credits_charged;
            expect(again.body.data).toEqual(res.body.data);
            expect(again.body.meta.content_hash).toBe(res.body.meta.content_hash);
          }),
          { numRuns: RUNS },
        );
        expect(await fed.admin.balance(fedWorkspace)).toBe(before - charged);
        // Both outcomes were met: the property said something about each.
        expect(outcomes.ok).toBeGreaterThan(0);
        expect(outcomes.refused).toBeGreaterThan(0);
      }, 120_000);
    });

    describe('properties: arbitrary unicode in every field never gives a 5xx', () => {
      const scalar = fc.oneof(
        anyString(),
        fc.integer(),
        fc.double(),
        fc.constantFrom(null, true, [], {}, 0, -1, 2 ** 53, 1e300, GRANT_MAX, GRANT_MAX + 1),
      );
      /** A field: absent, valid, nearly valid, any string or any JSON scalar; valid enough often enough to pass now and then. */
      const field = (valid: readonly unknown[]) =>
        fc.oneof(
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 3, arbitrary: fc.constantFrom(...valid) },
          { weight: 3, arbitrary: valid.every((v) => typeof v === 'string') ? nearly(valid as string[]) : fc.constantFrom(...valid) },
          { weight: 2, arbitrary: anyString() },
          { weight: 1, arbitrary: scalar },
        );
      /** The endpoint's fields, each maybe broken, and now and then a field of any name. */
      const body = (fields: Record<string, readonly unknown[]>) =>
        fc
          .tuple(
            fc.record(Object.fromEntries(Object.entries(fields).map(([name, valid]) => [name, field(valid)])), { requiredKeys: [] }),
            fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(anyString(8), scalar) }),
          )
          .map(([known, extra]) => (extra === null ? known : { ...known, [extra[0]]: extra[1] }));

      const COMPANY = ['acme-robotics', 'https://www.linkedin.com/company/acme-robotics', 'urn:li:company:1337', 'no-such-co-zz'];
      const DOMAIN = ['acmerobotics.com', 'https://www.globex-corp.com/', 'no-company-here.com'];
      const PERSON = ['https://www.linkedin.com/in/jane-doe-42', 'Jane Doe', 'nobody here'];
      const MAX_AGE = [0, 60, 2_592_000];

      const CUSTOMER_ENDPOINTS: Array<[string, Record<string, readonly unknown[]>]> = [
        ['/v1/company', { url: COMPANY, max_age: MAX_AGE }],
        ['/v1/domain', { domain: DOMAIN, max_age: MAX_AGE }],
        ['/v1/person', { url: PERSON, max_age: MAX_AGE }],
        ['/v1/search', { query: ['acme robotics', 'jane'], limit: [1, 10, 50], max_age: MAX_AGE }],
        ['/v1/cache/company', { url: COMPANY }],
        ['/v1/cache/domain', { domain: DOMAIN }],
        ['/v1/cache/person', { url: PERSON }],
      ];

      test.each(CUSTOMER_ENDPOINTS)('%s: every answer is a 2xx, 400 or 404 in its envelope; a 400 charges nothing', async (path, fields) => {
        const before = await balance();
        let charged = 0;
        const refused = new Set<string>();
        await fc.assert(
          fc.asyncProperty(body(fields), async (json) => {
            const res: HttpResult = await post(path, json);
            expect(res.status, `${JSON.stringify(json)} -> ${res.text}`).toBeLessThan(500);
            const requestId = res.headers.get('x-request-id');
            if (res.status === 200) expect(res.body.meta.request_id).toBe(requestId);
            else {
              expect([400, 404], res.text).toContain(res.status);
              expectEnvelope(res.status, requestId, res.body, res.text, res.status === 404);
              if (res.status === 400) refused.add(requestId!);
            }
            charged += res.body.meta.credits_charged;
          }),
          { numRuns: RUNS },
        );
        expect(await balance()).toBe(before - charged);
        const charges = (await ledger(workspaceId)).filter((e) => e.request_id !== null && refused.has(e.request_id));
        expect(charges).toEqual([]);
      }, 60_000);

      test('admin bodies: create workspace, key, grant and patch answer 2xx or a 400 envelope; a refused grant moves nothing', async () => {
        const workspace = body({ name: ['acme', 'Ünïcödé ws'], credits: [0, 10, GRANT_MAX], max_concurrency: [1, 8, 1000] });
        const keyBody = body({ name: ['k', 'clé'], rate_limit_per_minute: [1, 600, 100_000] });
        const grantBody = body({ amount: [1, 7, GRANT_MAX], reason: ['promo', 'réduction'] });
        const patch = body({ max_concurrency: [1, 8, 1000] });
        const target = (await adminCall('POST', '/admin/v1/workspaces', { name: 'admin fuzz' })).body.id as string;
        let granted = 0;
        await fc.assert(
          fc.asyncProperty(fc.constantFrom('workspace', 'key', 'grant', 'patch'), workspace, keyBody, grantBody, patch, async (which, w, k, g, p) => {
            const res =
              which === 'workspace'
                ? await adminCall('POST', '/admin/v1/workspaces', w)
                : which === 'key'
                  ? await adminCall('POST', `/admin/v1/workspaces/${target}/keys`, k)
                  : which === 'grant'
                    ? await adminCall('POST', `/admin/v1/workspaces/${target}/credits`, g)
                    : await adminCall('PATCH', `/admin/v1/workspaces/${target}`, p);
            expect(res.status, res.text).toBeLessThan(500);
            if (res.status >= 400) {
              expect(res.status, res.text).toBe(400);
              expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
            } else if (which === 'grant') granted += (g as { amount: number }).amount;
          }),
          { numRuns: RUNS * 2 },
        );
        expect(await server.admin.balance(target)).toBe(granted);
      }, 60_000);

      test('admin paths and query strings: any bytes, %-encoded, answer 2xx, 400 or 404 in the envelope', async () => {
        const bytes = fc.oneof(anyString().map(pct), fc.uint8Array({ maxLength: 12 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('')));
        const queries = fc.record(
          { request_id: bytes, key_id: bytes, after: bytes, limit: bytes, from: bytes, to: bytes, unknown: bytes },
          { requiredKeys: [] },
        );
        await fc.assert(
          fc.asyncProperty(bytes, fc.constantFrom('', '/keys', '/usage', '/ledger'), queries, fc.boolean(), async (id, tail, query, ownId) => {
            const q = Object.entries(query).map(([name, value]) => `${name}=${value}`).join('&');
            const res = await adminCall('GET', `/admin/v1/workspaces/${ownId ? workspaceId : id || '%20'}${tail}${q ? `?${q}` : ''}`);
            expect(res.status, res.text).toBeLessThan(500);
            if (res.status >= 400) {
              expect([400, 404]).toContain(res.status);
              expectEnvelope(res.status, res.headers.get('x-request-id'), res.body, res.text);
            }
          }),
          { numRuns: RUNS * 2 },
        );
      }, 60_000);
    });
  });
});
