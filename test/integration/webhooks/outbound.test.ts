// One webhook request against real HTTP servers on loopback: what the address policy lets through
// (after DNS), that a redirect is never followed, and that a silent receiver times out.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedHosts } from '../../../services/webhooks/address-policy';
import { postWebhook } from '../../../services/webhooks/outbound';

/** WEBHOOK_ALLOWED_HOSTS unset: public addresses only. */
const NO_ALLOWED_HOSTS = parseAllowedHosts(undefined);

let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/redirect') return void res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end();
    if (req.url === '/silent') return; // never answers
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const send = (url: string, allowed = parseAllowedHosts('127.0.0.1'), timeoutMs = 2_000) => postWebhook({ url, headers: { 'webhook-id': 'msg_x' }, body: '{}', timeoutMs, allowed });

describe('outbound webhook requests', () => {
  it('given no allowance, when the URL is a loopback literal, then nothing is sent', async () => {
    const before = hits.length;
    expect(await send(`http://127.0.0.1:${port}/a`, NO_ALLOWED_HOSTS)).toMatchObject({ status: 'refused', responseStatus: null, error: 'address 127.0.0.1 is loopback' });
    expect(hits.length).toBe(before);
  });

  it('given no allowance, when a host name resolves to loopback, then it is refused after DNS, before connecting', async () => {
    const before = hits.length;
    const outcome = await send(`http://localhost:${port}/a`, NO_ALLOWED_HOSTS);
    expect(outcome.status).toBe('refused');
    expect(outcome.error).toMatch(/^localhost resolves to .*(loopback)/);
    expect(hits.length).toBe(before);
  });

  it('given the host name allowed by name, then it is sent whatever it resolves to', async () => {
    expect(await send(`http://localhost:${port}/by-name`, parseAllowedHosts('localhost'))).toMatchObject({ status: 'succeeded', responseStatus: 204 });
  });

  it('given the address allowed, then it is sent and succeeds on a 2xx, with its latency', async () => {
    const outcome = await send(`http://127.0.0.1:${port}/ok`);
    expect(outcome).toMatchObject({ status: 'succeeded', responseStatus: 204, error: null });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('given a redirect, then it is not followed: a failed attempt with its status', async () => {
    const outcome = await send(`http://127.0.0.1:${port}/redirect`);
    expect(outcome).toMatchObject({ status: 'failed', responseStatus: 302, error: 'redirect (302) not followed' });
    expect(hits).not.toContain('/target');
  });

  it('given a receiver that never answers, then the attempt fails at the timeout', async () => {
    const started = Date.now();
    const outcome = await send(`http://127.0.0.1:${port}/silent`, undefined, 300);
    expect(outcome).toMatchObject({ status: 'failed', responseStatus: null, error: 'no answer within 300 ms' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('given nothing listening, then the attempt fails with the connection error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await send(`http://127.0.0.1:${freePort}/`)).toMatchObject({ status: 'failed', responseStatus: null, error: expect.stringContaining('ECONNREFUSED') });
  });
});
