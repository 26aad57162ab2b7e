// End-to-end: what the upstream sends is cleaned where it can be and refused only where it cannot
// (ADR 0009), and a failure after the charge is refunded in the same answer, on PGlite and on
// PostgreSQL (+ Redis). The service's SOURCE_URL is a crafted upstream (support/crafted-upstream.ts)
// serving bodies the sandbox never gives. Expectations: docs/api.md "Success answer" (about at
// most 300 characters, current employers first), docs/api.md "Prices" (`parse_error`
// and `internal_error` refunded automatically, X-Credits-Charged 0), docs/api.md "Upstream data:
// cleaned, not refused".
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { companyEnvelope, employment, personEnvelope, searchEnvelope, startCraftedUpstream, type CraftedUpstream } from './support/crafted-upstream';
import { expectError, expectSuccess, ledgerTypes } from './support/contract';
import { backends, newCustomer, startE2eServer, type Customer, type E2eServer } from './support/harness';

/** C0 (but tab and line feed), DEL and C1: never in an answer. */
const CONTROL_BUT_TAB_AND_LF = /(?![\n\t])\p{Cc}/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every string of a JSON value, with the key it sits under. */
function strings(value: unknown, key = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[key, value]];
  if (Array.isArray(value)) return value.flatMap((v) => strings(v, key));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, k));
  return [];
}

describe.each(backends())('upstream answers over HTTP on $name', (backend) => {
  describe.skipIf(!backend.available)(`on ${backend.name}`, () => {
    let upstream: CraftedUpstream;
    let server: E2eServer;
    let c: Customer;
    let serial = 0;
    /** A slug and id no other test of the file uses. */
    const fresh = () => {
      serial += 1;
      return { slug: `crafted-${serial}`, id: String(700_000 + serial) };
    };

    beforeAll(async () => {
      upstream = await startCraftedUpstream();
      server = await startE2eServer(backend, { SOURCE_URL: upstream.url });
      c = await newCustomer(server, 1000, 'upstream answers');
    });
    afterAll(async () => {
      await server?.stop();
      await upstream?.close();
    });

    describe('200: what can be cleaned is served cleaned, and charged', () => {
      test('a company name holding U+0000 and other control characters: the characters removed, 1 credit', async () => {
        const { slug, id } = fresh();
        upstream.company(slug, companyEnvelope(slug, id, { name: 'Acme\u0000 Ro\u0007bo\u0085tics\u001F', tagline: 'Tag\nline\t!' }));
        const before = await c.balance();
        const res = await c.post('/v1/company', { url: slug });
        const { data, requestId } = expectSuccess(res, { cache: 'MISS', charged: 1, remaining: before - 1 });
        expect(data.name).toBe('Acme Robotics');
        // Single-line text loses tabs and line feeds too; the About text keeps them.
        expect(data.tagline).toBe('Tagline!');
        expect(await ledgerTypes(server, c.workspaceId, requestId)).toEqual([['LookupCharged', -1]]);
        // Stored cleaned: the cached copy is the same bytes.
        const hit = await c.post('/v1/company', { url: slug });
        expect(expectSuccess(hit, { cache: 'HIT', charged: 1, remaining: before - 2 }).meta.content_hash).toBe(res.body.meta.content_hash);
        expect(hit.body.data).toEqual(data);
      });

      test('every string of a company is cleaned; the long description keeps line feeds and tabs; lone surrogates become U+FFFD', async () => {
        const { slug, id } = fresh();
        upstream.company(
          slug,
          // Written by hand: JSON.stringify would escape the lone surrogate the same way, but this is the wire as sent.
          JSON.stringify(
            companyEnvelope(slug, id, {
              description: 'Line one\r\n\tLine two\u0000\u009B',
              industry: 'Soft\u0001ware',
              type: 'Privately\u007F Held',
              specialties: ['robots\u0000', '\u0002arms'],
              headquarters: { city: 'Ly\u0000on', region: null, country: 'F\u0085R' },
            }),
          ).replace('"Crafted Upstream Inc"', '"Half \\ud83d a pair"'),
        );
        const before = await c.balance();
        const res = await c.post('/v1/company', { url: slug });
        const { data } = expectSuccess(res, { cache: 'MISS', charged: 1, remaining: before - 1 });
        expect(data).toMatchObject({
          name: 'Half \uFFFD a pair',
          description: 'Line one\n\tLine two',
          industry: 'Software',
          type: 'Privately Held',
          specialties: ['robots', 'arms'],
          headquarters: { city: 'Lyon', region: null, country: 'FR' },
        });
        for (const [key, text] of strings(data)) {
          expect(LONE_SURROGATE.test(text), key).toBe(false);
          expect(CONTROL_BUT_TAB_AND_LF.test(text), key).toBe(false);
          if (key !== 'description') expect(/[\t\n]/.test(text), key).toBe(false);
        }
      });

      test('an About past 300 characters is cut to its first 300; one that would split a surrogate pair stops before it', async () => {
        const long = `${'a'.repeat(299)}bcdef`;
        upstream.person('crafted-long-about', personEnvelope('crafted-long-about', { about: long }));
        const pair = `${'a'.repeat(299)}😀 and more`;
        upstream.person('crafted-pair-about', personEnvelope('crafted-pair-about', { about: pair }));
        const before = await c.balance();

        const res = await c.post('/v1/person', { url: 'https://www.linkedin.com/in/crafted-long-about' });
        expect(expectSuccess(res, { cache: 'MISS', charged: 1, remaining: before - 1 }).data.about).toBe(`${'a'.repeat(299)}b`);

        const split = await c.post('/v1/person', { url: 'https://www.linkedin.com/in/crafted-pair-about' });
        expect(expectSuccess(split, { cache: 'MISS', charged: 1, remaining: before - 2 }).data.about).toBe('a'.repeat(299));
      });

      test('control characters removed before the About is cut: 300 characters of text are kept', async () => {
        upstream.person('crafted-about-controls', personEnvelope('crafted-about-controls', { about: `\u0000\u0000${'x'.repeat(300)}\u0001` }));
        const res = await c.post('/v1/person', { url: 'https://www.linkedin.com/in/crafted-about-controls' });
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.about).toBe('x'.repeat(300));
      });

      test('employers listed past before current are served current first, each group in the upstream order', async () => {
        const employers = [
          employment('Past One', false),
          employment('Current One', true),
          employment('Past Two', false),
          employment('Current Two', true),
        ];
        upstream.person('crafted-employers', personEnvelope('crafted-employers', { employers }));
        const before = await c.balance();
        const res = await c.post('/v1/person', { url: 'https://www.linkedin.com/in/crafted-employers' });
        const { data } = expectSuccess(res, { cache: 'MISS', charged: 1, remaining: before - 1 });
        expect(data.employers.map((e: { company_name: string }) => e.company_name)).toEqual(['Current One', 'Current Two', 'Past One', 'Past Two']);
      });

      test('a domain lookup and a person lookup by name are cleaned the same way', async () => {
        const { slug, id } = fresh();
        upstream.domain('crafted-clean.com', companyEnvelope(slug, id, { name: 'Domain\u0000 Co\u0001', website: 'https://www.crafted-clean.com' }));
        upstream.personNamed('Named Person', personEnvelope('crafted-named', { full_name: 'Named\u0000 Person', about: 'n'.repeat(310), employers: [employment('Was', false), employment('Is', true)] }));
        const before = await c.balance();
        const domain = await c.post('/v1/domain', { domain: 'crafted-clean.com' });
        expect(expectSuccess(domain, { cache: 'MISS', charged: 4, remaining: before - 4 }).data.name).toBe('Domain Co');
        expect(domain.body.meta.resolved).toEqual({ domain: 'crafted-clean.com', confirmed: true });
        const named = await c.post('/v1/person', { url: 'Named Person' });
        const { data } = expectSuccess(named, { cache: 'MISS', charged: 3, remaining: before - 7 });
        expect(data.full_name).toBe('Named Person');
        expect(data.about).toBe('n'.repeat(300));
        expect(data.employers.map((e: { company_name: string }) => e.company_name)).toEqual(['Is', 'Was']);
      });

      test('search results are cleaned too: titles single-line, snippets keep line feeds', async () => {
        upstream.search('crafted query', searchEnvelope([{ title: 'Acme\u0000\nRobotics', snippet: 'Robots\u0000\nand arms\u0085' }]));
        const before = await c.balance();
        const res = await c.post('/v1/search', { query: 'crafted query' });
        const { data } = expectSuccess(res, { cache: 'MISS', charged: 1, remaining: before - 1 });
        expect(data.results[0]).toMatchObject({ title: 'AcmeRobotics', snippet: 'Robots\nand arms' });
      });

      test('the same profile once cleaned has the same content_hash, whatever controls it came with', async () => {
        const { slug, id } = fresh();
        upstream.company(slug, companyEnvelope(slug, id, { name: 'Clean\u0000 Name', specialties: ['a\u0001b'] }));
        const dirty = await c.post('/v1/company', { url: slug, max_age: 0 });
        expect(dirty.status, dirty.text).toBe(200);
        upstream.company(slug, companyEnvelope(slug, id, { name: 'Clean Name', specialties: ['ab'] }));
        const clean = await c.post('/v1/company', { url: slug, max_age: 0 });
        expect(clean.status, clean.text).toBe(200);
        expect(clean.body.meta.cache.status).toBe('REFRESH');
        expect(clean.body.meta.content_hash).toBe(dirty.body.meta.content_hash);
      });
    });

    describe('502 parse_error: what still breaks the profile after cleaning, refunded', () => {
      test.each([
        ['a name of nothing but control characters', { name: '\u0000\u0001\u009F' }],
        ['a specialty that cleans to nothing', { specialties: ['\u0000'] }],
        ['a founded year that is no year', { founded_year: 'long ago' }],
      ])('%s: 502 parse_error, X-Credits-Charged 0, the charge and its refund in the ledger', async (_label, spoiled) => {
        const { slug, id } = fresh();
        upstream.company(slug, companyEnvelope(slug, id, spoiled));
        const before = await c.balance();
        const res = await c.post('/v1/company', { url: slug });
        expectError(res, server, { code: 'parse_error', charged: 0, remaining: before });
        expect(await ledgerTypes(server, c.workspaceId, res.body.meta.request_id)).toEqual([
          ['LookupCharged', -1],
          ['LookupRefunded', 1],
        ]);
        expect(await c.balance()).toBe(before);
      });
    });

    // A write the database refuses for a reason of its own: a trigger on the server's own
    // database, installed by the test (the embedded database cannot be reached from outside; the
    // lookup service's integration test covers it there), so these cases exist on PostgreSQL only.
    if (backend.name === 'PostgreSQL') describe('a failure after the charge: refunded in the same answer', () => {
      let db: pg.Client | undefined;
      beforeAll(async () => {
        db = new pg.Client({ connectionString: server.databaseUrl });
        await db.connect();
        await db.query(`
          CREATE FUNCTION refuse_profile_write() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.data->'data'->>'name' = 'Refused Write Inc' THEN
              RAISE EXCEPTION 'profile write refused by the test' USING ERRCODE = 'check_violation';
            END IF;
            IF NEW.data->'data'->>'name' = 'Database Gone Inc' THEN
              PERFORM pg_terminate_backend(pg_backend_pid());
            END IF;
            RETURN NEW;
          END $$;
          CREATE TRIGGER refuse_profile_write BEFORE INSERT ON events
            FOR EACH ROW WHEN (NEW.type = 'ProfileFetched') EXECUTE FUNCTION refuse_profile_write();`);
      });
      afterAll(async () => {
        await db?.query('DROP TRIGGER IF EXISTS refuse_profile_write ON events; DROP FUNCTION IF EXISTS refuse_profile_write()');
        await db?.end();
      });

      test('500 internal_error: the ProfileFetched append refused, X-Credits-Charged 0, charge and refund under the request id, balance back', async () => {
        const { slug, id } = fresh();
        upstream.company(slug, companyEnvelope(slug, id, { name: 'Refused Write Inc' }));
        const before = await c.balance();
        const res = await c.post('/v1/company', { url: slug });
        expectError(res, server, { code: 'internal_error', charged: 0, remaining: before });
        expect(res.headers.get('x-credits-charged')).toBe('0');
        expect(await ledgerTypes(server, c.workspaceId, res.body.meta.request_id)).toEqual([
          ['LookupCharged', -1],
          ['LookupRefunded', 1],
        ]);
        expect(await c.balance()).toBe(before);
        // Settled once: the lookup is recorded as an internal_error, nothing left for the sweeper.
        const { rows } = await db!.query('SELECT settled, refunded_credits FROM charges WHERE request_id = $1', [res.body.meta.request_id]);
        expect(rows).toEqual([{ settled: true, refunded_credits: 1 }]);
      });

      test('503 service_unavailable when the database goes away at that write (unchanged): nothing charged, refunded as soon as it answers', async () => {
        const { slug, id } = fresh();
        upstream.company(slug, companyEnvelope(slug, id, { name: 'Database Gone Inc' }));
        const before = await c.balance();
        const res = await c.post('/v1/company', { url: slug });
        expectError(res, server, { code: 'service_unavailable', charged: 0 });
        const requestId = res.body.meta.request_id;
        await expect.poll(() => ledgerTypes(server, c.workspaceId, requestId), { timeout: 10_000 }).toEqual([
          ['LookupCharged', -1],
          ['LookupRefunded', 1],
        ]);
        expect(await c.balance()).toBe(before);
      });
    });
  });
});
