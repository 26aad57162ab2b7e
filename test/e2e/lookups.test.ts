// End-to-end: the three lookups, search and the cache area over real HTTP, on PGlite and on
// PostgreSQL (+ Redis), then a restart on the same data. Expectations come from
// docs/api.md. The tests of one backend share a server, but none builds on
// another's cache: a test that expects a MISS looks up references no other test of this file
// touches (the fixed entries of services/sandbox/fixed.ts, each used by one test, or generated ones of its
// own),
// and a test that needs a cached copy puts it there itself. Any one runs alone with `-t`.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { expectDetail, expectError, expectSuccess, expectedContentHash, ledgerTypes } from './support/contract';
import { backends, call, newCustomer, startE2eServer, type Customer, type E2eServer } from './support/harness';
import { ownCompany, ownPerson, ownUnknownDomain } from './support/sandbox-references';

const ACME_FORMS = [
  'https://www.linkedin.com/company/acme-robotics',
  'http://linkedin.com/company/acme-robotics',
  'linkedin.com/company/acme-robotics',
  'www.linkedin.com/company/acme-robotics/',
  'HTTPS://WWW.LINKEDIN.COM/COMPANY/ACME-ROBOTICS/',
  'https://m.linkedin.com/company/acme-robotics',
  'https://uk.linkedin.com/company/acme-robotics/',
  'https://de.linkedin.com/company/Acme-Robotics',
  'https://www.linkedin.com/company/acme-robotics?trk=public_profile&src=x',
  'https://www.linkedin.com/company/acme-robotics/#about',
  'https://www.linkedin.com/company/acme-robotics/about/',
  'https://www.linkedin.com/company/acme-robotics/jobs?q=1#top',
  'https://www.linkedin.com/company/acme%2Drobotics/',
  'acme-robotics',
  'ACME-Robotics',
  'acme-robotics-inc',
  'https://www.linkedin.com/company/acme-robotics-inc/',
  '1337',
  '/company/1337',
  'https://www.linkedin.com/company/1337/',
  'urn:li:company:1337',
  'urn:li:organization:1337',
  'urn:li:fsd_company:1337',
];

const COMPANY_FIELDS = [
  'id', 'urn', 'slug', 'url', 'name', 'tagline', 'description', 'website', 'industry', 'company_size',
  'employee_count', 'follower_count', 'headquarters', 'founded_year', 'type', 'specialties',
].sort();
const PERSON_FIELDS = [
  'public_identifier', 'url', 'full_name', 'first_name', 'last_name', 'headline', 'location', 'about',
  'employers', 'schools', 'follower_count',
].sort();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(backends())('lookups over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let server: E2eServer;
    let c: Customer;
    let balance = 10_000;

    beforeAll(async () => {
      server = await startE2eServer(backend);
      c = await newCustomer(server, balance, 'lookups');
    });
    // Each test counts from the real balance, so one failure does not cascade into the next.
    beforeEach(async () => {
      balance = await c.balance();
    });
    afterAll(async () => server?.stop());

    /** POSTs and checks a success envelope, keeping the running balance. */
    async function ok(path: string, body: unknown, cache: 'HIT' | 'MISS' | 'REFRESH', price: number) {
      const res = await c.post(path, body);
      balance -= price;
      expect(res.status, `${path} ${JSON.stringify(body)}: ${res.text}`).toBe(200);
      return { res, ...expectSuccess(res, { cache, charged: price, remaining: balance }) };
    }

    /** Like ok(), where a HIT and a live fetch are both right (the reference may be cached or not). */
    async function okAnyCache(path: string, body: unknown, price: number) {
      const res = await c.post(path, body);
      balance -= price;
      expect(res.status, `${path} ${JSON.stringify(body)}: ${res.text}`).toBe(200);
      expect(['HIT', 'MISS', 'REFRESH']).toContain(res.body?.meta?.cache?.status);
      return { res, ...expectSuccess(res, { cache: res.body.meta.cache.status, charged: price, remaining: balance }) };
    }

    test('a company: the first lookup is a MISS, every other input form of it a HIT at the same price', async () => {
      const first = await ok('/v1/company', { url: 'https://www.linkedin.com/company/acme-robotics/' }, 'MISS', 1);
      expect(Object.keys(first.data).sort()).toEqual(COMPANY_FIELDS);
      expect(Object.keys(first.meta).sort()).toEqual(['cache', 'content_hash', 'credits_charged', 'credits_remaining', 'request_id']);
      expect(Object.keys(first.meta.cache).sort()).toEqual(['age_seconds', 'fetched_at', 'status']);
      expect(first.data).toMatchObject({
        id: '1337',
        urn: 'urn:li:company:1337',
        slug: 'acme-robotics',
        website: 'https://www.acmerobotics.com',
      });
      const d = first.data;
      expect(typeof d.name).toBe('string');
      expect(d.url).toMatch(/linkedin\.com\/company\//);
      expect(Number.isInteger(d.follower_count)).toBe(true);
      expect(d.company_size === null || (Number.isInteger(d.company_size.min) && 'max' in d.company_size)).toBe(true);
      expect(d.headquarters === null || Object.keys(d.headquarters).sort().join() === 'city,country,region').toBe(true);
      expect(Array.isArray(d.specialties)).toBe(true);

      for (const url of ACME_FORMS) {
        const hit = await ok('/v1/company', { url }, 'HIT', 1);
        expect(hit.data, url).toEqual(first.data);
        expect(hit.meta.content_hash, url).toBe(first.meta.content_hash);
        expect(hit.meta.cache.fetched_at).toBe(first.meta.cache.fetched_at);
        expect(hit.meta.resolved).toBeUndefined();
        expect(hit.requestId).not.toBe(first.requestId);
      }
      expect(await c.balance()).toBe(balance);
      // The charge of a live success stays in the ledger under its request id.
      expect(await ledgerTypes(server, c.workspaceId, first.requestId)).toContainEqual(['LookupCharged', expect.any(Number)]);
    });

    test('domain lookups: registrable domain, meta.resolved with confirmed, 4 credits', async () => {
      // globex.com is not the company's own website: resolved but not confirmed.
      const first = await ok('/v1/domain', { domain: 'globex.com' }, 'MISS', 4);
      expect(first.meta.resolved).toEqual({ domain: 'globex.com', confirmed: false });
      expect(first.data.id).toBe('4242');
      expect(Object.keys(first.data).sort()).toEqual(COMPANY_FIELDS);
      expect(Object.keys(first.meta).sort()).toEqual(['cache', 'content_hash', 'credits_charged', 'credits_remaining', 'request_id', 'resolved']);
      for (const domain of ['https://shop.globex.com/cart?x=1#y', 'WWW.GLOBEX.COM', 'http://globex.com/']) {
        const hit = await ok('/v1/domain', { domain }, 'HIT', 4);
        expect(hit.meta.resolved).toEqual({ domain: 'globex.com', confirmed: false });
        expect(hit.data).toEqual(first.data);
      }
      // A known company's own website domain: confirmed (cached with the company or fetched live).
      const own = ownCompany(0);
      const company = await ok('/v1/company', { url: own.slug }, 'MISS', 1);
      for (const domain of [`shop.${own.domain}`, `https://www.${own.domain}/contact`, own.domain]) {
        const res = await c.post('/v1/domain', { domain });
        balance -= 4;
        expect(['HIT', 'MISS']).toContain(res.body?.meta?.cache?.status);
        const got = expectSuccess(res, { cache: res.body.meta.cache.status, charged: 4, remaining: balance });
        expect(got.meta.resolved).toEqual({ domain: own.domain, confirmed: true });
        expect(got.data).toEqual(company.data);
      }
      const again = await ok('/v1/domain', { domain: own.domain }, 'HIT', 4);
      expect(again.meta.content_hash).toBe(company.meta.content_hash);
      const confirmedGlobex = await c.post('/v1/domain', { domain: 'www.globex-corp.com' });
      balance -= 4;
      expect(confirmedGlobex.body.meta.resolved).toEqual({ domain: 'globex-corp.com', confirmed: true });
    });

    test('a domain with no company: 404 not_found at 4 credits, then free from the cache', async () => {
      const miss = await c.post('/v1/domain', { domain: 'no-company-here.com' });
      balance -= 4;
      expectError(miss, server, { code: 'not_found', reason: 'no_company_for_domain', charged: 4, remaining: balance });
      const again = await c.post('/v1/domain', { domain: 'https://www.no-company-here.com/x' });
      expectError(again, server, { code: 'not_found', reason: 'no_company_for_domain', charged: 0, remaining: balance });
      expect(await c.balance()).toBe(balance);
      // A cached not-found follows max_age too: 0 asks the source again, at the not-found price.
      const live = await c.post('/v1/domain', { domain: 'no-company-here.com', max_age: 0 });
      balance -= 4;
      expectError(live, server, { code: 'not_found', reason: 'no_company_for_domain', charged: 4, remaining: balance });
      expect(await c.balance()).toBe(balance);
    });

    test('a company first looked up by URN is a HIT by slug', async () => {
      const own = ownCompany(1);
      const first = await ok('/v1/company', { url: `urn:li:fsd_company:${own.id}` }, 'MISS', 1);
      expect(first.data).toMatchObject({ id: own.id, slug: own.slug });
      const bySlug = await ok('/v1/company', { url: `https://www.linkedin.com/company/${own.slug.toUpperCase()}` }, 'HIT', 1);
      expect(bySlug.data).toEqual(first.data);
    });

    test('a person by URL (1 credit) and by name (3 credits)', async () => {
      const byUrl = await ok('/v1/person', { url: 'https://www.linkedin.com/in/jane-doe-42/' }, 'MISS', 1);
      const p = byUrl.data;
      expect(Object.keys(p).sort()).toEqual(PERSON_FIELDS);
      expect(p.public_identifier).toBe('jane-doe-42');
      expect(p.full_name).toBe('Jane Doe');
      expect(p.employers).toHaveLength(2);
      expect(p.employers.map((e: any) => e.is_current)).toEqual([true, false]);
      for (const e of p.employers) {
        expect(Object.keys(e).sort()).toEqual(['company_id', 'company_name', 'end_date', 'is_current', 'start_date', 'title']);
      }
      expect(p.schools).toHaveLength(1);
      expect(Object.keys(p.schools[0]).sort()).toEqual(['degree', 'end_year', 'field_of_study', 'name', 'start_year']);
      expect(p.about === null || p.about.length <= 300).toBe(true);
      expect(p.location === null || Object.keys(p.location).sort().join() === 'city,country,region').toBe(true);
      expect(Number.isInteger(p.follower_count)).toBe(true);
      expect(byUrl.meta.resolved).toBeUndefined();

      for (const url of ['linkedin.com/in/jane-doe-42', 'HTTPS://WWW.LINKEDIN.COM/IN/JANE-DOE-42/recent-activity/?trk=x#top', 'https://uk.linkedin.com/in/jane-doe-42']) {
        const hit = await ok('/v1/person', { url }, 'HIT', 1);
        expect(hit.data).toEqual(p);
        expect(hit.meta.content_hash).toBe(byUrl.meta.content_hash);
      }

      const byName = await c.post('/v1/person', { url: 'Jane Doe' });
      balance -= 3;
      expect(['HIT', 'MISS']).toContain(byName.body?.meta?.cache?.status);
      const named = expectSuccess(byName, { cache: byName.body.meta.cache.status, charged: 3, remaining: balance });
      expect(named.data).toEqual(p);
      expect(named.meta.content_hash).toBe(byUrl.meta.content_hash);
      await ok('/v1/person', { url: 'Jane Doe' }, 'HIT', 3);
    });

    test('a person not found: by name costs 1 (no_profile_for_name), by URL 1 (no_profile_at_url), free from the cache', async () => {
      const name = await c.post('/v1/person', { url: 'Zebulon Quixotic-Nobody' });
      balance -= 1;
      expectError(name, server, { code: 'not_found', reason: 'no_profile_for_name', charged: 1, remaining: balance });
      expectError(await c.post('/v1/person', { url: 'Zebulon Quixotic-Nobody' }), server, { code: 'not_found', reason: 'no_profile_for_name', charged: 0, remaining: balance });

      const url = await c.post('/v1/person', { url: 'https://www.linkedin.com/in/nobody-here-000' });
      balance -= 1;
      expectError(url, server, { code: 'not_found', reason: 'no_profile_at_url', charged: 1, remaining: balance });
      expectError(await c.post('/v1/person', { url: 'linkedin.com/in/nobody-here-000/' }), server, { code: 'not_found', reason: 'no_profile_at_url', charged: 0, remaining: balance });
      expect(await c.balance()).toBe(balance);
    });

    test('max_age 0: REFRESH when cached, MISS when not; stable entries keep their content_hash', async () => {
      const own = ownCompany(2);
      const cached = await ok('/v1/company', { url: own.slug }, 'MISS', 1);
      const refreshed = await ok('/v1/company', { url: own.slug, max_age: 0 }, 'REFRESH', 1);
      expect(refreshed.meta.content_hash).toBe(cached.meta.content_hash);
      expect(refreshed.data).toEqual(cached.data);
      expect(refreshed.meta.cache.fetched_at > cached.meta.cache.fetched_at).toBe(true);
      // The refreshed copy is what the cache now serves.
      const hit = await ok('/v1/company', { url: `urn:li:company:${own.id}` }, 'HIT', 1);
      expect(hit.meta.cache.fetched_at).toBe(refreshed.meta.cache.fetched_at);
      expect(hit.meta.content_hash).toBe(cached.meta.content_hash);

      const fresh = await ok('/v1/person', { url: 'https://www.linkedin.com/in/sandbox-slow', max_age: 0 }, 'MISS', 1);
      expect(fresh.data.public_identifier).toBe('sandbox-slow');
    });

    test('sandbox-changing: a new content_hash on every live fetch, the same one on a HIT', async () => {
      // Cached first (by this test alone), so both live fetches below replace a copy.
      await okAnyCache('/v1/company', { url: 'sandbox-changing' }, 1);
      const first = await ok('/v1/company', { url: 'sandbox-changing', max_age: 0 }, 'REFRESH', 1);
      const second = await ok('/v1/company', { url: 'sandbox-changing', max_age: 0 }, 'REFRESH', 1);
      expect(second.meta.content_hash).not.toBe(first.meta.content_hash);
      expect(second.data.follower_count).not.toBe(first.data.follower_count);
      const { follower_count: _a, ...restFirst } = first.data;
      const { follower_count: _b, ...restSecond } = second.data;
      expect(restSecond).toEqual(restFirst);
      const hit = await ok('/v1/company', { url: 'sandbox-changing' }, 'HIT', 1);
      expect(hit.meta.content_hash).toBe(second.meta.content_hash);
      expect(hit.meta.content_hash).toBe(expectedContentHash(second.data));
    });

    test('max_age: an older copy than max_age is refreshed; Age and age_seconds count since the fetch', async () => {
      const { slug } = ownCompany(3);
      const fetched = await ok('/v1/company', { url: slug }, 'MISS', 1);
      await sleep(2100);
      const hit = await ok('/v1/company', { url: slug, max_age: 315_360_000 }, 'HIT', 1);
      expect(hit.meta.cache.age_seconds).toBeGreaterThanOrEqual(2);
      expect(hit.meta.cache.fetched_at).toBe(fetched.meta.cache.fetched_at);
      const stale = await ok('/v1/company', { url: slug, max_age: 1 }, 'REFRESH', 1);
      expect(stale.meta.cache.age_seconds).toBe(0);
      expect(stale.meta.content_hash).toBe(fetched.meta.content_hash);
    });

    test.each([
      ['a string', '60'],
      ['a fraction', 1.5],
      ['a negative number', -1],
      ['a number above 315360000', 315_360_001],
      ['null', null],
      ['a boolean', true],
    ])('max_age as %s is 400 invalid_request naming max_age, never charged', async (_label, maxAge) => {
      for (const [path, body] of [
        ['/v1/company', { url: 'acme-robotics', max_age: maxAge }],
        ['/v1/domain', { domain: 'acmerobotics.com', max_age: maxAge }],
        ['/v1/person', { url: 'jane doe', max_age: maxAge }],
      ] as const) {
        const res = await c.post(path, body);
        expectError(res, server, { code: 'invalid_request', remaining: balance });
        expectDetail(res, 'max_age', typeof maxAge === 'number' && Number.isInteger(maxAge) ? (maxAge < 0 ? 'too_small' : 'too_big') : 'invalid_type');
        expect(await ledgerTypes(server, c.workspaceId, res.body.meta.request_id)).toEqual([]);
      }
      expect(await c.balance()).toBe(balance);
    });

    test('search: 1 credit, results shaped {position, title, url, snippet}, limit 1..50 (default 10)', async () => {
      const res = await c.post('/v1/search', { query: 'acme robotics' });
      balance -= 1;
      expect(['MISS', 'HIT']).toContain(res.body?.meta?.cache?.status);
      const { data } = expectSuccess(res, { cache: res.body.meta.cache.status, charged: 1, remaining: balance });
      expect(data.query).toBe('acme robotics');
      expect(data.results.length).toBeGreaterThan(0);
      expect(data.results.length).toBeLessThanOrEqual(10);
      data.results.forEach((r: any, i: number) => {
        expect(Object.keys(r).sort()).toEqual(['position', 'snippet', 'title', 'url']);
        expect(r.position).toBe(i + 1);
      });
      const three = await c.post('/v1/search', { query: 'robotics', limit: 3 });
      balance -= 1;
      expect(three.status).toBe(200);
      expect(three.body.data.results.length).toBeLessThanOrEqual(3);
      const fifty = await c.post('/v1/search', { query: 'robotics', limit: 50 });
      balance -= 1;
      expect(fifty.status).toBe(200);
      expect(fifty.body.data.results.length).toBeLessThanOrEqual(50);
      expect(fifty.body.meta.credits_remaining).toBe(balance);

      for (const [body, field, issue] of [
        [{ query: 'x', limit: 0 }, 'limit', 'too_small'],
        [{ query: 'x', limit: 51 }, 'limit', 'too_big'],
        [{ query: 'x', limit: 2.5 }, 'limit', 'invalid_type'],
        [{ query: 'x', limit: '5' }, 'limit', 'invalid_type'],
        [{ query: '' }, 'query', 'too_small'],
        [{ query: 'q'.repeat(257) }, 'query', 'too_big'],
        [{}, 'query', 'required'],
        [{ query: 'x', page: 2 }, 'page', 'unknown_field'],
      ] as const) {
        const bad = await c.post('/v1/search', body);
        expectError(bad, server, { code: 'invalid_request', remaining: balance });
        expectDetail(bad, field, issue);
      }
      const max = await c.post('/v1/search', { query: 'q'.repeat(256), limit: 1 });
      balance -= 1;
      expect(max.status).toBe(200);
      expect(await c.balance()).toBe(balance);
    });

    test('cache area: free, never the profile; cached/found/fetched_at/age_seconds/content_hash; stats', async () => {
      // What this test finds in the cache, it put there: a company (then its domain), a domain
      // with no company, a person.
      const own = ownCompany(4);
      const looked = await ok('/v1/company', { url: own.slug }, 'MISS', 1);
      await okAnyCache('/v1/domain', { domain: own.domain }, 4);
      const noCompany = ownUnknownDomain('cache-area');
      const absent = await c.post('/v1/domain', { domain: noCompany });
      balance -= 4;
      expectError(absent, server, { code: 'not_found', charged: 4, remaining: balance });
      const ownOne = ownPerson(0);
      const personLooked = await ok('/v1/person', { url: ownOne.url }, 'MISS', 1);

      const entryKeys = ['age_seconds', 'cached', 'content_hash', 'fetched_at', 'found'];
      const company = await c.post('/v1/cache/company', { url: `https://www.linkedin.com/company/${own.oldSlug}` });
      expect(company.status, company.text).toBe(200);
      expect(Object.keys(company.body.data).sort()).toEqual(entryKeys);
      expect(company.body.data).toMatchObject({ cached: true, found: true, content_hash: looked.meta.content_hash });
      expect(Number.isInteger(company.body.data.age_seconds)).toBe(true);
      expect(new Date(company.body.data.fetched_at).toISOString()).toBe(company.body.data.fetched_at);
      expect(company.body.meta).toMatchObject({ request_id: company.headers.get('x-request-id'), credits_charged: 0, credits_remaining: balance });
      expect(company.text).not.toContain(looked.data.name);

      const notFound = await c.post('/v1/cache/domain', { domain: noCompany });
      expect(notFound.body.data).toMatchObject({ cached: true, found: false, content_hash: null });
      expect(typeof notFound.body.data.fetched_at).toBe('string');

      const never = await c.post('/v1/cache/company', { url: 'never-looked-up-e2e' });
      expect(never.body.data).toEqual({ cached: false, found: false, fetched_at: null, age_seconds: null, content_hash: null });

      const person = await c.post('/v1/cache/person', { url: ownOne.url });
      expect(person.body.data).toMatchObject({ cached: true, found: true, content_hash: personLooked.meta.content_hash });
      expect(person.text).not.toContain(personLooked.data.full_name);

      const domain = await c.post('/v1/cache/domain', { domain: `shop.${own.domain}` });
      expect(domain.body.data).toMatchObject({ cached: true, found: true });

      const stats = await call(server.url, 'GET', '/v1/cache/stats', { key: c.key });
      expect(stats.status, stats.text).toBe(200);
      for (const v of Object.values(stats.body.data)) expect(Number.isInteger(v)).toBe(true);
      expect(stats.body.data.entries).toBeGreaterThan(0);
      expect(stats.body.meta.credits_charged).toBe(0);

      expectError(await c.post('/v1/cache/company', { url: 'https://www.linkedin.com/in/jane-doe-42' }), server, { code: 'invalid_company_reference', remaining: balance });
      expectError(await c.post('/v1/cache/domain', { domain: 'localhost' }), server, { code: 'invalid_domain', remaining: balance });
      expectError(await c.post('/v1/cache/person', { url: 'ACoAAB1234567' }), server, { code: 'invalid_person_reference', remaining: balance });
      const bad = await c.post('/v1/cache/company', { url: 'acme-robotics', max_age: 5 });
      expectError(bad, server, { code: 'invalid_request', remaining: balance });
      expectDetail(bad, 'max_age', 'unknown_field');
      expectError(await call(server.url, 'GET', '/v1/cache/stats'), server, { code: 'unauthorized', remaining: null });
      expect(await c.balance()).toBe(balance);
    });

    test('a restart on the same data keeps the cache, the balance, the ledger and the keys', async () => {
      const own = ownCompany(5);
      const company = await ok('/v1/company', { url: own.slug }, 'MISS', 1);
      const person = ownPerson(1);
      await ok('/v1/person', { url: person.url }, 'MISS', 1);
      const noCompany = ownUnknownDomain('restart');
      const absent = await c.post('/v1/domain', { domain: noCompany });
      balance -= 4;
      expectError(absent, server, { code: 'not_found', charged: 4, remaining: balance });
      const revoked = await server.admin.createKey(c.workspaceId, { name: 'to revoke' });
      await server.admin.revokeKey(revoked.id);
      const statsBefore = (await call(server.url, 'GET', '/v1/cache/stats', { key: c.key })).body.data;
      const ledgerBefore = await server.admin.ledger(c.workspaceId, company.requestId);
      expect(ledgerBefore).toHaveLength(1);

      await server.restart();

      expect(await c.balance()).toBe(balance);
      expect(await server.admin.ledger(c.workspaceId, company.requestId)).toEqual(ledgerBefore);
      expect((await call(server.url, 'GET', '/v1/cache/stats', { key: c.key })).body.data).toEqual(statsBefore);
      const hit = await ok('/v1/company', { url: own.oldSlug }, 'HIT', 1);
      expect(hit.meta.content_hash).toBe(company.meta.content_hash);
      expect(hit.data).toEqual(company.data);
      await ok('/v1/person', { url: person.url }, 'HIT', 1);
      expectError(await c.post('/v1/domain', { domain: noCompany }), server, { code: 'not_found', reason: 'no_company_for_domain', charged: 0, remaining: balance });
      const denied = await call(server.url, 'POST', '/v1/company', { key: revoked.key, json: { url: 'acme-robotics' } });
      expectError(denied, server, { code: 'unauthorized', remaining: null });
      expect(await c.balance()).toBe(balance);
      // The whole log, replayed, agrees with every balance the API reported.
      const audit = await server.admin.audit();
      expect(audit).toMatchObject({ ok: true, mismatches: [] });
      expect(audit.events).toBeGreaterThan(0);
    });
  });
});
