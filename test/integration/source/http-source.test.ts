import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompanyProfile, PersonProfile } from '../../../contracts/profiles';
import { createHttpSource } from '../../../services/lookup/source/http-source';
import type { CompanyResult, PersonResult, Source, SourceResult } from '../../../services/lookup/source/source';
import { BLOCKED_RETRY_AFTER_SECONDS, RATE_LIMITED_RETRY_AFTER_SECONDS, startSandbox, type Sandbox } from '../../../services/sandbox/server';

/**
 * The source contract: the HTTP source against the real sandbox network over loopback HTTP.
 * Needs no external server; the sandbox runs in this process on a random port.
 */

const TIMEOUT_MS = 500;
let sandbox: Sandbox;
let source: Source;

beforeAll(async () => {
  sandbox = await startSandbox();
  source = createHttpSource({ baseUrl: sandbox.url, timeoutMs: TIMEOUT_MS });
});
afterAll(async () => {
  await sandbox?.close();
});

function found<T, A>(result: SourceResult<T, A>): { data: T; aliases: A } {
  if (result.kind !== 'found') throw new Error(`expected found, got ${JSON.stringify(result)}`);
  return result;
}

const elapsed = async <T>(work: () => Promise<T>) => {
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
};

describe('fixed companies', () => {
  it('finds acme-robotics by slug, with its aliases, and the profile parses', async () => {
    const { data, aliases } = found(await source.companyBySlug('acme-robotics'));
    expect(CompanyProfile.parse(data)).toEqual(data);
    expect(data).toMatchObject({ id: '1337', slug: 'acme-robotics', website: 'https://www.acmerobotics.com', urn: 'urn:li:company:1337' });
    expect(aliases).toEqual({ id: '1337', slugs: ['acme-robotics', 'acme-robotics-inc'], domains: ['acmerobotics.com'] });
  });

  it('answers an old slug with the company under its current slug', async () => {
    const { data, aliases } = found(await source.companyBySlug('acme-robotics-inc'));
    expect(data.slug).toBe('acme-robotics');
    expect(aliases.slugs[0]).toBe('acme-robotics');
  });

  it('finds the same company by id and by domain, slug case ignored', async () => {
    const bySlug = found(await source.companyBySlug('ACME-Robotics')).data;
    expect(found(await source.companyById('1337')).data).toEqual(bySlug);
    expect(found(await source.companyByDomain('acmerobotics.com')).data).toEqual(bySlug);
  });

  it('finds globex by its website domain and by globex.com', async () => {
    const byWebsite = found(await source.companyByDomain('globex-corp.com'));
    const byOther = found(await source.companyByDomain('globex.com'));
    expect(byOther.data).toEqual(byWebsite.data);
    expect(byOther.data).toMatchObject({ id: '4242', slug: 'globex', website: 'https://www.globex-corp.com' });
    expect(byOther.aliases.domains).toEqual(['globex-corp.com', 'globex.com']);
    expect(found(await source.companyById('4242')).data.slug).toBe('globex');
  });

  it('changes only the follower_count of sandbox-changing, on every fetch', async () => {
    const first = found(await source.companyBySlug('sandbox-changing')).data;
    const second = found(await source.companyBySlug('sandbox-changing')).data;
    const third = found(await source.companyById(first.id)).data;
    expect(new Set([first.follower_count, second.follower_count, third.follower_count]).size).toBe(3);
    expect({ ...second, follower_count: 0 }).toEqual({ ...first, follower_count: 0 });
  });

  it('keeps every other company stable across fetches', async () => {
    const a = found(await source.companyBySlug('globex')).data;
    const b = found(await source.companyBySlug('globex')).data;
    expect(b).toEqual(a);
  });
});

describe('fixed person', () => {
  it('finds jane-doe-42 by id: Jane Doe, two employers with the current one first, one school', async () => {
    const { data, aliases } = found(await source.personById('jane-doe-42'));
    expect(PersonProfile.parse(data)).toEqual(data);
    expect(aliases).toEqual({ publicIdentifier: 'jane-doe-42' });
    expect(data.full_name).toBe('Jane Doe');
    expect(data.employers.map((e) => e.is_current)).toEqual([true, false]);
    expect(data.schools).toHaveLength(1);
    expect(data.url).toBe('https://www.linkedin.com/in/jane-doe-42');
  });

  it('resolves the name Jane Doe to her, ignoring case and whitespace', async () => {
    for (const name of ['Jane Doe', '  jane   DOE ']) {
      const { data, aliases } = found(await source.personByName(name));
      expect(data.public_identifier).toBe('jane-doe-42');
      expect(aliases.publicIdentifier).toBe('jane-doe-42');
    }
  });
});

describe('unknowns are definitive answers', () => {
  it('answers not_found for an unknown slug, domain, profile and name', async () => {
    expect(await source.companyBySlug('no-such-company-anywhere')).toEqual({ kind: 'not_found' });
    expect(await source.companyByDomain('no-company-here.com')).toEqual({ kind: 'not_found' });
    expect(await source.personById('nobody-here-000')).toEqual({ kind: 'not_found' });
    expect(await source.personByName('Zzyzx Nobodyheresson')).toEqual({ kind: 'not_found' });
  });

  it('answers unresolvable_id for an id with no public page', async () => {
    expect(await source.companyById('999999999')).toEqual({ kind: 'unresolvable_id' });
  });
});

// Concurrent to keep the waits short; every test uses its own sources so single-flight never
// joins one test's fetch to another's (that would shorten the measured waits).
describe.concurrent('failure triggers', () => {
  const quick = () => createHttpSource({ baseUrl: sandbox.url, timeoutMs: TIMEOUT_MS });
  const patient = () => createHttpSource({ baseUrl: `${sandbox.url}/`, timeoutMs: 5000 });

  type Case = { name: string; run: (s: Source, trigger: string) => Promise<SourceResult<unknown, unknown>> };
  const forms: Case[] = [
    { name: 'company slug', run: (s, t) => s.companyBySlug(t) },
    { name: 'domain first label', run: (s, t) => s.companyByDomain(`${t}.com`) },
    { name: 'person id', run: (s, t) => s.personById(t) },
    { name: 'person name', run: (s, t) => s.personByName(t) },
    { name: 'search query', run: (s, t) => s.search(t, 10) },
  ];

  describe.each(forms)('as a $name', ({ run }) => {
    it('sandbox-timeout never answers: timeout after timeoutMs, with a wait advised', async () => {
      const { value, ms } = await elapsed(() => run(quick(), 'sandbox-timeout'));
      expect(value).toMatchObject({ kind: 'failure', code: 'timeout' });
      expect(value.kind === 'failure' && value.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
      expect(ms).toBeLessThan(TIMEOUT_MS + 1500);
    });

    it('sandbox-blocked: blocked, with the upstream Retry-After', async () => {
      expect(await run(quick(), 'sandbox-blocked')).toMatchObject({ kind: 'failure', code: 'blocked', retryAfterSeconds: BLOCKED_RETRY_AFTER_SECONDS });
    });

    it('sandbox-source-rate-limited: source_rate_limited, with the upstream Retry-After', async () => {
      expect(await run(quick(), 'sandbox-source-rate-limited')).toMatchObject({
        kind: 'failure',
        code: 'source_rate_limited',
        retryAfterSeconds: RATE_LIMITED_RETRY_AFTER_SECONDS,
      });
    });

    it('sandbox-upstream-error: upstream_error', async () => {
      expect(await run(quick(), 'sandbox-upstream-error')).toMatchObject({ kind: 'failure', code: 'upstream_error' });
    });

    it('sandbox-parse-error: parse_error', async () => {
      const result = await run(quick(), 'sandbox-parse-error');
      expect(result).toMatchObject({ kind: 'failure', code: 'parse_error' });
      expect(result.kind === 'failure' && result.message).toMatch(/not JSON/);
    });

    it('sandbox-slow: succeeds after about 2 seconds, or times out on a shorter deadline', async () => {
      const [slow, impatient] = await Promise.all([
        elapsed(() => run(patient(), 'sandbox-slow')),
        run(quick(), 'sandbox-slow'),
      ]);
      expect(slow.value.kind).toBe('found');
      expect(slow.ms).toBeGreaterThanOrEqual(1900);
      expect(slow.ms).toBeLessThan(4000);
      expect(impatient).toMatchObject({ kind: 'failure', code: 'timeout' });
    });
  });

  it('sandbox-slow resolves to the fixed slow company and person', async () => {
    const s = patient();
    const [company, domain, person] = await Promise.all([
      s.companyBySlug('sandbox-slow'),
      s.companyByDomain('sandbox-slow.com'),
      s.personById('sandbox-slow'),
    ]);
    expect(found(company).data.slug).toBe('sandbox-slow');
    expect(found(domain).data).toEqual(found(company).data);
    expect(found(person).data.public_identifier).toBe('sandbox-slow');
  });
});

describe('search', () => {
  it('answers results over the same world, numbered from 1, at most limit', async () => {
    const { data, aliases } = found(await source.search('acme robotics', 3));
    expect(aliases).toBeNull();
    expect(data.results.length).toBeGreaterThan(0);
    expect(data.results.length).toBeLessThanOrEqual(3);
    expect(data.results[0]).toMatchObject({ position: 1, url: 'https://www.linkedin.com/company/acme-robotics' });
    expect(data.results.map((r) => r.position)).toEqual(data.results.map((_, i) => i + 1));
  });

  it('answers an empty list, not a not-found, when nothing matches', async () => {
    expect(found(await source.search('zzqxv', 10)).data.results).toEqual([]);
  });

  it('honours a limit up to 50', async () => {
    expect(found(await source.search('group', 50)).data.results).toHaveLength(50);
  });
});

describe('single-flight', () => {
  it('shares one upstream request among concurrent fetches of the same entity', async () => {
    const path = '/companies/by-slug/globex';
    const before = sandbox.hits(path);
    const results = await Promise.all(Array.from({ length: 10 }, () => source.companyBySlug('globex')));
    expect(sandbox.hits(path) - before).toBe(1);
    for (const r of results) expect(r).toEqual(results[0]);
    // Each caller owns its answer: changing one does not change another's.
    found(results[1]).data.name = 'changed';
    expect(found(results[0]).data.name).toBe('Globex Corporation');
  });

  it('treats spellings of the same key as one entity', async () => {
    const path = '/people/by-id/jane-doe-42';
    const before = sandbox.hits(path);
    await Promise.all([source.personById('jane-doe-42'), source.personById('Jane-Doe-42'), source.personById(' jane-doe-42 ')]);
    expect(sandbox.hits(path) - before).toBe(1);
  });

  it('keeps different entities and different methods apart', async () => {
    const before = sandbox.hits();
    await Promise.all([source.companyBySlug('globex'), source.companyById('4242'), source.companyByDomain('globex.com'), source.companyBySlug('acme-robotics')]);
    expect(sandbox.hits() - before).toBe(4);
  });

  it('shares a request that times out too, and forgets it once settled', async () => {
    const path = '/companies/by-slug/sandbox-timeout';
    const before = sandbox.hits(path);
    const results = await Promise.all(Array.from({ length: 5 }, () => source.companyBySlug('sandbox-timeout')));
    expect(sandbox.hits(path) - before).toBe(1);
    for (const r of results) expect(r).toMatchObject({ kind: 'failure', code: 'timeout' });
    await source.companyBySlug('sandbox-timeout');
    expect(sandbox.hits(path) - before).toBe(2);
  });

  it('fetches again once the shared request has settled', async () => {
    const path = '/companies/by-id/4242';
    const before = sandbox.hits(path);
    await source.companyById('4242');
    await source.companyById('4242');
    expect(sandbox.hits(path) - before).toBe(2);
  });
});

describe('determinism across sandbox instances', () => {
  let other: Sandbox;
  let otherSource: Source;
  beforeAll(async () => {
    other = await startSandbox();
    otherSource = createHttpSource({ baseUrl: other.url, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await other?.close();
  });

  it('serves identical fixed and generated records from two instances', async () => {
    const pairs: [CompanyResult | PersonResult, CompanyResult | PersonResult][] = [
      [await source.companyBySlug('acme-robotics'), await otherSource.companyBySlug('acme-robotics')],
      [await source.personById('jane-doe-42'), await otherSource.personById('jane-doe-42')],
    ];
    // A generated company and person, found through search so the test does not hard-code seeds.
    const hits = found(await source.search('Group', 50)).data.results;
    const companySlug = hits.map((r) => /\/company\/([^/]+)$/.exec(r.url)?.[1]).find((s) => s && s !== 'acme-robotics')!;
    const personId = found(await source.search('John', 50)).data.results.map((r) => /\/in\/([^/]+)$/.exec(r.url)?.[1]).find(Boolean)!;
    pairs.push([await source.companyBySlug(companySlug), await otherSource.companyBySlug(companySlug)]);
    pairs.push([await source.personById(personId), await otherSource.personById(personId)]);
    for (const [a, b] of pairs) {
      expect(a.kind).toBe('found');
      expect(b).toEqual(a);
    }
    expect(found(await source.search('Acme', 10))).toEqual(found(await otherSource.search('Acme', 10)));
  });

  it('still changes sandbox-changing', async () => {
    const a = found(await source.companyBySlug('sandbox-changing')).data;
    const b = found(await otherSource.companyBySlug('sandbox-changing')).data;
    const c = found(await otherSource.companyBySlug('sandbox-changing')).data;
    expect(c.follower_count).not.toBe(b.follower_count);
    expect({ ...a, follower_count: 0 }).toEqual({ ...b, follower_count: 0 });
  });
});

describe('closing the sandbox', () => {
  it('does not hang on a request it never answers', async () => {
    const own = await startSandbox();
    const waiting = createHttpSource({ baseUrl: own.url, timeoutMs: 10_000 }).companyBySlug('sandbox-timeout');
    await new Promise((r) => setTimeout(r, 100));
    const { ms } = await elapsed(() => own.close());
    expect(ms).toBeLessThan(1000);
    // The dropped connection is an upstream failure, not a hang until the 10 s deadline.
    expect(await waiting).toMatchObject({ kind: 'failure', code: 'upstream_error' });
  });
});
