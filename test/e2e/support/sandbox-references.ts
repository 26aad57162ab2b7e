// References a test can call its own. The sandbox has only a handful of fixed entries (services/sandbox/fixed.ts),
// and a test that shares one with another test of its file sees the cache the other left behind (a HIT
// where it expects a MISS, or the reverse when it runs alone with `vitest run -t`). The sandbox's
// generated part (at least 10,000 companies and 50,000 people from a fixed seed) gives each test
// records nobody else in the file looks up; the records are read from the sandbox's own world
// (the test fixture, not the service under test), so the same number names the same record in
// every run.
import { getWorld } from '../../../services/sandbox/world';

export interface OwnCompany {
  name: string;
  slug: string;
  /** A former slug that still resolves to the company. */
  oldSlug: string;
  id: string;
  /** The registrable domain of its website: a domain lookup of it is `confirmed: true`. */
  domain: string;
}

export interface OwnPerson {
  publicIdentifier: string;
  url: string;
}

/**
 * The `n`-th generated company that has a former slug (n ≥ 0; there are over a thousand).
 * Give every test of a file its own `n`.
 */
export function ownCompany(n: number): OwnCompany {
  const world = getWorld();
  let seen = 0;
  for (let i = world.fixedCompanyCount; i < world.companies.length; i++) {
    const c = world.companies[i]!;
    if (c.oldSlugs.length === 0) continue;
    if (seen++ === n) return { name: c.name, slug: c.slug, oldSlug: c.oldSlugs[0]!, id: c.id, domain: c.domains[0]! };
  }
  throw new Error(`the sandbox has fewer than ${n + 1} companies with a former slug`);
}

/** The `n`-th generated person (n ≥ 0). Give every test of a file its own `n`. */
export function ownPerson(n: number): OwnPerson {
  const world = getWorld();
  const p = world.people[world.fixedPersonCount + n];
  if (p === undefined) throw new Error(`the sandbox has fewer than ${n + 1} generated people`);
  return { publicIdentifier: p.publicIdentifier, url: `https://www.linkedin.com/in/${p.publicIdentifier}` };
}

/** A registrable domain no sandbox company answers for (`label` keeps it apart from other tests'). */
export function ownUnknownDomain(label: string): string {
  const domain = `e2e-nowhere-${label}.com`;
  if (getWorld().companyIndexByDomain(domain) !== undefined) throw new Error(`${domain} belongs to a sandbox company`);
  return domain;
}
