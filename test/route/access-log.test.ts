// The access log, read from the app's own log stream: one line per request
// with request id, method, route, status, duration, workspace, key id, operation, cache status
// and credits; successes sampled by ACCESS_LOG_SAMPLE, errors always; never a key or the admin
// token; an internal error logged with its chain of causes.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startRouteApp, type RouteApp } from './support';

/** Every line the app logs, parsed. */
function logSink() {
  const text: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text.push(String(chunk));
      done();
    },
  });
  const lines = () => text.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
  return { stream, text: () => text.join(''), lines, accessLines: () => lines().filter((l) => l.access === true) };
}

/** A relay whose lag cannot be read, for three reasons deep. */
const failingRelayLag = async () => {
  throw new Error('relay lag unreadable', { cause: new Error('query failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }) });
};

describe('every request logged (ACCESS_LOG_SAMPLE=1)', () => {
  const sink = logSink();
  let t: RouteApp;
  beforeAll(async () => {
    t = await startRouteApp({ env: { LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE: '1' }, deps: { logStream: sink.stream, relayLag: failingRelayLag } });
  }, 60_000);
  afterAll(async () => t?.close());

  it('a lookup: one line with who called, what it was, what it cost; nothing of the key', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const key = headers.authorization!.replace('Bearer ', '');
    const res = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    expect(res.statusCode).toBe(200);
    const lines = sink.accessLines().filter((l) => l.request_id === res.headers['x-request-id']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'POST',
      route: '/v1/company',
      status: 200,
      workspace_id: workspaceId,
      key_id: expect.stringMatching(/^key_/),
      operation: 'company',
      cache: 'MISS',
      credits_charged: 1,
      error_code: null,
    });
    expect(lines[0]!.duration_ms).toBeGreaterThan(0);
    expect(sink.text()).not.toContain(key);
    expect(sink.text()).not.toContain(key.slice(-16));
  });

  it('the person route logs the operation it was billed as: by URL or by name', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const byName = await t.call('POST', '/v1/person', { headers, body: { url: 'Jane Doe' } });
    const byUrl = await t.call('POST', '/v1/person', { headers, body: { url: 'https://www.linkedin.com/in/jane-doe-42' } });
    const operationOf = (res: typeof byName) => sink.accessLines().find((l) => l.request_id === res.headers['x-request-id'])?.operation;
    expect([operationOf(byName), operationOf(byUrl)]).toEqual(['person_name', 'person_url']);
  });

  it('an error answer: its code and what it cost; an unknown path has no route', async () => {
    const { headers } = await t.keyed({ credits: 0 });
    const broke = await t.call('POST', '/v1/company', { headers, body: { url: 'globex' } });
    expect(broke.statusCode).toBe(402);
    const lost = await t.call('GET', '/v1/nowhere');
    const lineOf = (res: typeof broke) => sink.accessLines().find((l) => l.request_id === res.headers['x-request-id']);
    expect(lineOf(broke)).toMatchObject({ status: 402, error_code: 'insufficient_credits', credits_charged: 0, operation: 'company', cache: null });
    expect(lineOf(lost)).toMatchObject({ status: 404, route: null, error_code: 'route_not_found', workspace_id: null, key_id: null });
  });

  it('the admin token never reaches the log; an internal error is logged with its causes, the access line with its code', async () => {
    const res = await t.call('GET', '/admin/v1/relay', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(500);
    const requestId = res.headers['x-request-id'];
    const errorLine = sink.lines().find((l) => l.request_id === requestId && l.level === 50);
    expect(errorLine?.msg).toBe('internal error');
    expect(errorLine?.err).toMatchObject({
      type: 'Error',
      message: 'relay lag unreadable',
      stack: expect.stringContaining('relay lag unreadable'),
      cause: { message: 'query failed', cause: { message: 'socket hang up', code: 'ECONNRESET' } },
    });
    expect(sink.accessLines().find((l) => l.request_id === requestId)).toMatchObject({ status: 500, error_code: 'internal_error', route: '/admin/v1/relay' });
    expect(sink.text()).not.toContain(ADMIN_TOKEN);
  });
});

describe('successes sampled away (ACCESS_LOG_SAMPLE=0), errors still logged', () => {
  const sink = logSink();
  let t: RouteApp;
  beforeAll(async () => {
    t = await startRouteApp({ env: { LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE: '0' }, deps: { logStream: sink.stream } });
  }, 60_000);
  afterAll(async () => t?.close());

  it('no line for a 200, one for a 404 not_found with the credit it cost', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const found = await t.call('POST', '/v1/company', { headers, body: { url: 'acme-robotics' } });
    const missing = await t.call('POST', '/v1/company', { headers, body: { url: 'no-such-company-access-log' } });
    expect([found.statusCode, missing.statusCode]).toEqual([200, 404]);
    const ids = sink.accessLines().map((l) => l.request_id);
    expect(ids).not.toContain(found.headers['x-request-id']);
    expect(sink.accessLines().find((l) => l.request_id === missing.headers['x-request-id'])).toMatchObject({
      status: 404,
      error_code: 'not_found',
      credits_charged: 1,
      operation: 'company',
    });
  });
});
