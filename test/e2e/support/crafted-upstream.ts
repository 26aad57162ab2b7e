// An upstream that answers what a test tells it to: a real HTTP server on loopback, given to the
// service as SOURCE_URL. It speaks the upstream protocol (paths and envelopes) and serves crafted
// 200 bodies the built-in sandbox never gives: control characters, lone surrogates, an About past
// 300 characters, employers out of order. It stands in for the scraper upstream, not for the
// service under test.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CraftedUpstream {
  url: string;
  /** A company envelope served at /companies/by-slug/{slug} (the slug as the service asks for it). */
  company(slug: string, envelope: unknown): void;
  /** A company envelope served at /companies/by-domain/{domain}. */
  domain(domain: string, envelope: unknown): void;
  /** A person envelope served at /people/by-id/{publicIdentifier}. */
  person(publicIdentifier: string, envelope: unknown): void;
  /** A person envelope served for /people/by-name?name={name}. */
  personNamed(name: string, envelope: unknown): void;
  /** A search envelope served for /search?q={query}, any limit. */
  search(query: string, envelope: unknown): void;
  close(): Promise<void>;
}

/** The body is sent as given when it is a string (JSON escapes such as `\ud800` reach the service as written). */
export async function startCraftedUpstream(): Promise<CraftedUpstream> {
  const bodies = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    const key =
      url.pathname === '/search'
        ? `search:${url.searchParams.get('q')}`
        : url.pathname === '/people/by-name'
          ? `name:${url.searchParams.get('name')}`
          : decodeURIComponent(url.pathname);
    const body = bodies.get(key);
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const set = (key: string, envelope: unknown) => bodies.set(key, typeof envelope === 'string' ? envelope : JSON.stringify(envelope));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    company: (slug, envelope) => set(`/companies/by-slug/${slug}`, envelope),
    domain: (domain, envelope) => set(`/companies/by-domain/${domain}`, envelope),
    person: (id, envelope) => set(`/people/by-id/${id}`, envelope),
    personNamed: (name, envelope) => set(`name:${name}`, envelope),
    search: (query, envelope) => set(`search:${query}`, envelope),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A well-formed company envelope (the upstream protocol's shape), to be spoiled by a test. */
export function companyEnvelope(slug: string, id: string, company: Record<string, unknown> = {}) {
  return {
    company: {
      id,
      urn: `urn:li:company:${id}`,
      slug,
      url: `https://www.linkedin.com/company/${slug}`,
      name: 'Crafted Upstream Inc',
      tagline: 'Answers what it is told',
      description: 'A company served by the crafted upstream.\nSecond line.',
      website: 'https://crafted-upstream.example.com',
      industry: 'Software Development',
      company_size: { min: 11, max: 50 },
      employee_count: 23,
      follower_count: 1200,
      headquarters: { city: 'Lyon', region: 'Auvergne-Rhône-Alpes', country: 'FR' },
      founded_year: 2015,
      type: 'Privately Held',
      specialties: ['scraping', 'testing'],
      ...company,
    },
    aliases: { id, slugs: [slug], domains: ['crafted-upstream.example.com'] },
  };
}

export function employment(companyName: string, isCurrent: boolean, extra: Record<string, unknown> = {}) {
  return {
    company_name: companyName,
    company_id: null,
    title: 'Engineer',
    start_date: '2020-01',
    end_date: isCurrent ? null : '2021-06',
    is_current: isCurrent,
    ...extra,
  };
}

/** A well-formed person envelope, to be spoiled by a test. */
export function personEnvelope(publicIdentifier: string, person: Record<string, unknown> = {}) {
  return {
    person: {
      public_identifier: publicIdentifier,
      url: `https://www.linkedin.com/in/${publicIdentifier}`,
      full_name: 'Crafted Person',
      first_name: 'Crafted',
      last_name: 'Person',
      headline: 'Served by a test',
      location: { city: 'Lyon', region: null, country: 'FR' },
      about: 'Short about.',
      employers: [employment('Now Corp', true), employment('Before Corp', false)],
      schools: [{ name: 'Test School', degree: null, field_of_study: null, start_year: 2010, end_year: 2014 }],
      follower_count: 10,
      ...person,
    },
  };
}

export function searchEnvelope(results: Array<{ title: string; snippet: string }>) {
  return {
    results: results.map((r, i) => ({ position: i + 1, url: `https://www.linkedin.com/company/result-${i + 1}`, ...r })),
  };
}
