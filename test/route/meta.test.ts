// The Meta area and unknown routes through app.inject, by answer status; and the route table
// (contracts/endpoints.ts) against what is registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentRows, ENDPOINTS } from '../../contracts/endpoints';
import { ERROR_CODES } from '../../contracts/errors';
import { InstanceLifecycle } from '../../services/health/readiness';
import { errorOf, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

describe('the route table', () => {
  it.each(ENDPOINTS.map((row) => [row.method, row.path] as const))('%s %s is registered', (method, path) => {
    expect(t.app.hasRoute({ method, url: path.replace(/\{(\w+)\}/g, ':$1') })).toBe(true);
  });
});

describe('200', () => {
  it('health, pricing, errors, the OpenAPI document and the docs pages, without a key', async () => {
    expect((await t.call('GET', '/v1/health')).json()).toEqual({ status: 'ok', version: '1.0.0', checks: { database: 'ok' } });
    const pricing = (await t.call('GET', '/v1/pricing')).json();
    expect(pricing.operations.map((o: { operation: string; endpoint: string }) => `${o.operation} ${o.endpoint}`)).toEqual([
      'company /v1/company',
      'domain /v1/domain',
      'person_url /v1/person',
      'person_name /v1/person',
      'search /v1/search',
    ]);
    expect(pricing.free.find((area: { area: string }) => area.area === 'meta').endpoints).toContain('GET /docs');
    expect((await t.call('GET', '/v1/errors')).json().data).toHaveLength(ERROR_CODES.length);
    const openapi = await t.call('GET', '/v1/openapi.json');
    expect(openapi.json().servers).toHaveLength(1);
    // Every public row of the route table, then the console's calls (their rows, tag Console).
    const paths = Object.keys(openapi.json().paths);
    const publicRows = [...new Set(documentRows('public').filter((r) => r.area !== 'console').map((r) => r.path))];
    expect(paths.slice(0, publicRows.length)).toEqual(publicRows);
    expect(paths.slice(publicRows.length).every((p) => p.startsWith('/console/v1/'))).toBe(true);
    const docs = await t.call('GET', '/docs');
    expect(docs.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(docs.body).toContain('<code>/v1/search</code>');
    expect((await t.call('GET', '/docs/errors')).body).toContain('1 credit by company reference or person, 4 by website domain');
  });
});

describe('readiness', () => {
  it('200 ok for an instance started, migrated, not draining; unmetered, with its request id', async () => {
    const ready = await t.call('GET', '/v1/health/ready');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', version: '1.0.0', checks: { started: 'ok', migrated: 'ok', not_draining: 'ok' }, failures: [] });
    expect(ready.headers['ratelimit-limit']).toBeUndefined();
    expect(ready.headers['x-request-id']).toMatch(/^req_/);
  });

  it('503 with the same body, status draining, for an instance that received SIGTERM (not the error envelope)', async () => {
    const lifecycle = InstanceLifecycle.started();
    const draining = await startRouteApp({ deps: { lifecycle } });
    try {
      expect((await draining.call('GET', '/v1/health/ready')).statusCode).toBe(200);
      lifecycle.startDraining();
      const answer = await draining.call('GET', '/v1/health/ready');
      expect(answer.statusCode).toBe(503);
      expect(answer.json()).toEqual({
        status: 'draining',
        version: '1.0.0',
        checks: { started: 'ok', migrated: 'ok', not_draining: 'fail' },
        failures: [{ check: 'not_draining', message: expect.stringMatching(/SIGTERM/) }],
      });
      // The rest of the API still answers while the instance drains.
      expect((await draining.call('GET', '/v1/health')).statusCode).toBe(200);
    } finally {
      await draining.close();
    }
  });
});

describe('404', () => {
  it('any other method and path: route_not_found, with or without a key', async () => {
    expect(errorOf(await t.call('GET', '/v1/nothing-here'))).toEqual({ status: 404, code: 'route_not_found', charged: 0, remaining: null });
    expect(errorOf(await t.call('GET', '/v1/company'))).toMatchObject({ status: 404, code: 'route_not_found' });
    const { headers } = await t.keyed({ credits: 5 });
    expect(errorOf(await t.call('DELETE', '/v1/search', { headers }))).toEqual({ status: 404, code: 'route_not_found', charged: 0, remaining: 5 });
  });
});
