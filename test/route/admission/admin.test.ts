// Admission `admin` alone (services/http/admission/admin.ts): the operator's token, answers never
// cached, no bucket; unknown paths under /admin show nothing without the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from '../support';
import { ADMIN_TOKEN, startAdmissionApp, type AdmissionApp } from './support';

let t: AdmissionApp;
beforeAll(async () => {
  t = await startAdmissionApp(['adminRelay', 'adminAudit']);
}, 120_000);
afterAll(async () => t?.close());

const token = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('200', () => {
  it('with the token: admitted, never cached, on no bucket', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const answer = await t.call({ method, url: method === 'GET' ? '/admin/v1/relay' : '/admin/v1/audit', headers: token });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('401 unauthorized', () => {
  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer not-the-token' }],
    ['an API key instead', { 'x-api-key': `lk_live_${'a'.repeat(32)}` }],
    ['another scheme', { authorization: `Basic ${ADMIN_TOKEN}` }],
  ])('%s, named Bearer, not cached', async (_name, headers) => {
    const answer = await t.call({ method: 'GET', url: '/admin/v1/relay', headers });
    expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized', remaining: null });
    expect(answer.headers['www-authenticate']).toBe('Bearer');
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('a second Authorization header that is not the token', async () => {
    const answer = await t.call({ method: 'GET', url: '/admin/v1/relay', headers: { authorization: [`Bearer ${ADMIN_TOKEN}`, 'Bearer other'] as unknown as string } });
    expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('an unknown path or method under /admin, without the token: the admin area shows nothing', async () => {
    for (const [method, url] of [['GET', '/admin/v1/no-such-thing'], ['DELETE', '/admin/v1/relay'], ['GET', '/admin'], ['POST', '/admin/']] as const) {
      expect(errorOf(await t.call({ method, url })), `${method} ${url}`).toMatchObject({ status: 401, code: 'unauthorized' });
    }
  });
});

describe('404 route_not_found', () => {
  it('an unknown path under /admin with the token', async () => {
    const answer = await t.call({ method: 'GET', url: '/admin/v1/no-such-thing', headers: token });
    expect(errorOf(answer)).toMatchObject({ status: 404, code: 'route_not_found' });
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('a path that only starts like /admin is no admin path: on the per-IP bucket, no token asked', async () => {
    const answer = await t.call({ method: 'GET', url: '/adminx' });
    expect(errorOf(answer)).toMatchObject({ status: 404, code: 'route_not_found' });
    expect(answer.headers['ratelimit-limit']).toBe('120');
  });
});
