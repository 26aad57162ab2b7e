import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpSource, DEFAULT_RETRY_AFTER_SECONDS } from '../../../services/lookup/source/http-source';
import { getWorld } from '../../../services/sandbox/world';

/**
 * How the HTTP source reads upstream replies the sandbox never gives: a real HTTP server on
 * loopback answers each path with a scripted status, headers and body.
 */

type Scripted = { status: number; headers?: Record<string, string>; body: string };
const replies = new Map<string, Scripted>();
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res: ServerResponse) => {
    const reply = replies.get(req.url ?? '') ?? { status: 500, body: 'no script for this path' };
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const source = () => createHttpSource({ baseUrl, timeoutMs: 2000 });
const validEnvelope = () => {
  const world = getWorld();
  const index = world.companyIndexBySlug('acme-robotics')!;
  return { company: world.companyProfile(index), aliases: world.companyAliases(index) };
};

describe('HTTP source: reading upstream replies', () => {
  it('accepts a valid envelope', async () => {
    replies.set('/companies/by-slug/ok', { status: 200, body: JSON.stringify(validEnvelope()) });
    expect((await source().companyBySlug('ok')).kind).toBe('found');
  });

  it('answers parse_error for a 200 of the wrong shape, an unknown field or aliases that disagree', async () => {
    const wrongShape = { company: { id: 1337, name: 'Acme' }, aliases: validEnvelope().aliases };
    const extraField = { ...validEnvelope(), company: { ...validEnvelope().company, unexpected: true } };
    const disagreeing = { ...validEnvelope(), aliases: { ...validEnvelope().aliases, id: '1' } };
    for (const [path, body] of [['wrong', wrongShape], ['extra', extraField], ['disagree', disagreeing]] as const) {
      replies.set(`/companies/by-slug/${path}`, { status: 200, body: JSON.stringify(body) });
      expect(await source().companyBySlug(path)).toMatchObject({ kind: 'failure', code: 'parse_error' });
    }
  });

  it('cleans a 200 before reading it: controls removed, lone surrogates replaced, about cut, current employers first', async () => {
    const dirty = validEnvelope();
    // JSON.stringify writes the lone surrogate as the escape `\udc00`, as a scraper's JSON would.
    dirty.company.name = '\u0000Acme \uDC00Robotics\u0085';
    replies.set('/companies/by-slug/dirty', { status: 200, body: JSON.stringify(dirty) });
    const company = await source().companyBySlug('dirty');
    expect(company.kind === 'found' && company.data.name).toBe('Acme \uFFFDRobotics');

    const person = getWorld().personProfile(getWorld().personIndexById('jane-doe-42')!);
    const untidy = { ...person, about: 'x'.repeat(400), employers: [...person.employers].reverse() };
    replies.set('/people/by-id/untidy', { status: 200, body: JSON.stringify({ person: untidy }) });
    const read = await source().personById('untidy');
    expect(read.kind).toBe('found');
    if (read.kind !== 'found') return;
    expect(read.data.about).toBe('x'.repeat(300));
    expect(read.data.employers.map((e) => e.is_current)).toEqual([...person.employers.map((e) => e.is_current)].sort((a, b) => Number(b) - Number(a)));
  });

  it('answers parse_error for what still breaks the schema once cleaned', async () => {
    const dirty = validEnvelope();
    dirty.company.name = '\u0000\u0001';
    replies.set('/companies/by-slug/nameless', { status: 200, body: JSON.stringify(dirty) });
    expect(await source().companyBySlug('nameless')).toMatchObject({ kind: 'failure', code: 'parse_error', message: expect.stringContaining('company.name') });
  });

  it('answers upstream_error for a 404 without a not-found marker (a wrong base URL is not "no company")', async () => {
    replies.set('/companies/by-slug/bare404', { status: 404, body: '<html>Not Found</html>' });
    expect(await source().companyBySlug('bare404')).toMatchObject({ kind: 'failure', code: 'upstream_error' });
    replies.set('/companies/by-slug/marked404', { status: 404, body: '{"error":"not_found"}' });
    expect(await source().companyBySlug('marked404')).toEqual({ kind: 'not_found' });
  });

  it('answers timeout for a 504 or 408 from the upstream, with a default wait', async () => {
    replies.set('/companies/by-slug/gw', { status: 504, body: '' });
    expect(await source().companyBySlug('gw')).toEqual(
      expect.objectContaining({ code: 'timeout', retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS.timeout }),
    );
    replies.set('/people/by-id/slowpoke', { status: 408, body: '' });
    expect(await source().personById('slowpoke')).toMatchObject({ code: 'timeout' });
  });

  it('reads Retry-After as an HTTP date and falls back to a default when it is missing', async () => {
    const inOneMinute = new Date(Date.now() + 60_000).toUTCString();
    replies.set('/companies/by-slug/dated', { status: 429, headers: { 'retry-after': inOneMinute }, body: '{}' });
    const dated = await source().companyBySlug('dated');
    expect(dated).toMatchObject({ code: 'source_rate_limited' });
    expect(dated.kind === 'failure' && dated.retryAfterSeconds).toBeGreaterThanOrEqual(58);
    expect(dated.kind === 'failure' && dated.retryAfterSeconds).toBeLessThanOrEqual(61);
    replies.set('/companies/by-slug/nodate', { status: 403, body: '' });
    expect(await source().companyBySlug('nodate')).toMatchObject({ code: 'blocked', retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS.blocked });
  });

  it('answers upstream_error for other statuses and for a 404 to a search', async () => {
    replies.set('/companies/by-slug/teapot', { status: 418, body: '' });
    expect(await source().companyBySlug('teapot')).toMatchObject({ code: 'upstream_error' });
    replies.set('/search?q=x&limit=10', { status: 404, body: '{"error":"not_found"}' });
    expect(await source().search('x', 10)).toMatchObject({ code: 'upstream_error' });
  });

  it('answers upstream_error when nothing listens at the base URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await createHttpSource({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2000 }).companyBySlug('acme-robotics');
    expect(result).toMatchObject({ kind: 'failure', code: 'upstream_error' });
    expect(result.kind === 'failure' && result.message).toMatch(/ECONNREFUSED/);
  });
});
