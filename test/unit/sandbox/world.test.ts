import { getDomain } from 'tldts';
import { beforeAll, describe, expect, it } from 'vitest';
import { CompanyProfile, PERSON_ABOUT_MAX_CHARS, PersonProfile } from '../../../contracts/profiles';
import { CHANGING_COMPANY_SLUG, TRIGGERS, UNKNOWN } from '../../../services/sandbox/fixed';
import { GENERATED_COMPANIES, GENERATED_PEOPLE, World, getWorld, normalizeName, slugify } from '../../../services/sandbox/world';

let world: World;
beforeAll(() => {
  world = getWorld();
}, 30_000);

/** Every `step`-th index, so samples cover the whole range, fixed entries included. */
const sample = (count: number, step: number) => Array.from({ length: Math.ceil(count / step) }, (_, i) => i * step);

describe('sandbox world: size and uniqueness', () => {
  it('holds at least 10,000 companies and 50,000 people', () => {
    expect(world.companies.length).toBeGreaterThanOrEqual(10_000);
    expect(world.people.length).toBeGreaterThanOrEqual(50_000);
    expect(world.companies.length).toBe(GENERATED_COMPANIES + world.fixedCompanyCount);
    expect(world.people.length).toBe(GENERATED_PEOPLE + world.fixedPersonCount);
  });

  it('gives every company unique slugs (current and old), ids and domains', () => {
    const slugs = world.companies.flatMap((c) => [c.slug, ...c.oldSlugs]);
    expect(new Set(slugs).size).toBe(slugs.length);
    expect(new Set(world.companies.map((c) => c.id)).size).toBe(world.companies.length);
    const domains = world.companies.flatMap((c) => c.domains);
    expect(new Set(domains).size).toBe(domains.length);
  });

  it('gives every person a unique public identifier', () => {
    expect(new Set(world.people.map((p) => p.publicIdentifier)).size).toBe(world.people.length);
  });

  it('makes only valid slugs and ids', () => {
    for (const c of world.companies) {
      for (const slug of [c.slug, ...c.oldSlugs]) expect(slug).toMatch(/^(?=.*[a-z])[a-z0-9._-]{1,100}$/);
      expect(c.id).toMatch(/^[1-9][0-9]{0,18}$/);
    }
  });

  it('never generates the reserved keys', () => {
    // sandbox-slow is the one trigger that ends in a record: the fixed company and person of that name.
    for (const t of TRIGGERS.filter((t) => t !== 'sandbox-slow')) {
      expect(world.companyIndexBySlug(t)).toBeUndefined();
      expect(world.personIndexById(t)).toBeUndefined();
    }
    expect(world.companyIndexById(UNKNOWN.companyId)).toBeUndefined();
    expect(world.companyIndexByDomain(UNKNOWN.domain)).toBeUndefined();
    expect(world.personIndexById(UNKNOWN.personId)).toBeUndefined();
    const generatedSlugs = world.companies.slice(world.fixedCompanyCount).flatMap((c) => [c.slug, ...c.oldSlugs]);
    expect(generatedSlugs.filter((s) => s.startsWith('sandbox-'))).toEqual([]);
    expect(world.companies.slice(world.fixedCompanyCount).flatMap((c) => c.domains).filter((d) => d.startsWith('sandbox-'))).toEqual([]);
  });
});

describe('sandbox world: aliases resolve', () => {
  it('resolves every current slug, old slug, id and domain to its own company', () => {
    world.companies.forEach((c, i) => {
      expect(world.companyIndexBySlug(c.slug)).toBe(i);
      for (const old of c.oldSlugs) expect(world.companyIndexBySlug(old)).toBe(i);
      expect(world.companyIndexById(c.id)).toBe(i);
      for (const d of c.domains) expect(world.companyIndexByDomain(d)).toBe(i);
    });
  });

  it('gives some companies one or two old slugs', () => {
    const withOld = world.companies.filter((c) => c.oldSlugs.length > 0);
    expect(withOld.length).toBeGreaterThan(500);
    expect(Math.max(...world.companies.map((c) => c.oldSlugs.length))).toBe(2);
  });

  it("maps each company's website registrable domain to it", () => {
    for (const i of sample(world.companies.length, 7)) {
      const c = world.companies[i];
      const website = world.companyProfile(i).website!;
      expect(getDomain(website)).toBe(c.domains[0]);
      expect(world.companyIndexByDomain(getDomain(website)!)).toBe(i);
    }
  });

  it('looks slugs, domains and ids up case-insensitively and ids without leading zeros', () => {
    expect(world.companyIndexBySlug('ACME-Robotics')).toBe(world.companyIndexBySlug('acme-robotics'));
    expect(world.companyIndexByDomain('AcmeRobotics.com')).toBe(world.companyIndexBySlug('acme-robotics'));
    expect(world.companyIndexById('0001337')).toBe(world.companyIndexBySlug('acme-robotics'));
  });

  it('resolves a person by name ignoring case and whitespace, the first of equal names', () => {
    const jane = world.personIndexById('jane-doe-42')!;
    expect(world.personIndexByName('Jane Doe')).toBe(jane);
    expect(world.personIndexByName('  jane   DOE ')).toBe(jane);
    const p = world.people[5000];
    const first = world.people.findIndex((q) => normalizeName(`${q.firstName} ${q.lastName}`) === normalizeName(`${p.firstName} ${p.lastName}`));
    expect(world.personIndexByName(`${p.firstName.toUpperCase()}  ${p.lastName}`)).toBe(first);
  });
});

describe('sandbox world: fixed entries', () => {
  it('has acme-robotics, globex and the changing company as services/sandbox/fixed.ts writes them', () => {
    const acme = world.companyIndexBySlug('acme-robotics-inc')!;
    expect(world.companyAliases(acme)).toEqual({ id: '1337', slugs: ['acme-robotics', 'acme-robotics-inc'], domains: ['acmerobotics.com'] });
    expect(world.companyProfile(acme).website).toBe('https://www.acmerobotics.com');
    const globex = world.companyIndexByDomain('globex.com')!;
    expect(world.companyProfile(globex)).toMatchObject({ id: '4242', slug: 'globex', website: 'https://www.globex-corp.com' });
    expect(world.isChangingCompany(world.companyIndexBySlug(CHANGING_COMPANY_SLUG)!)).toBe(true);
    expect(world.isChangingCompany(acme)).toBe(false);
  });

  it('has Jane Doe with two employers (the current one first) and one school', () => {
    const jane = world.personProfile(world.personIndexById('jane-doe-42')!);
    expect(jane.full_name).toBe('Jane Doe');
    expect(jane.employers.map((e) => e.is_current)).toEqual([true, false]);
    expect(jane.schools).toHaveLength(1);
  });
});

describe('sandbox world: records', () => {
  it('derives records that parse with the profile schemas', () => {
    for (const i of sample(world.companies.length, 13)) expect(() => CompanyProfile.parse(world.companyProfile(i))).not.toThrow();
    for (const i of sample(world.people.length, 61)) expect(() => PersonProfile.parse(world.personProfile(i))).not.toThrow();
  });

  it('keeps each record consistent with the index', () => {
    for (const i of sample(world.companies.length, 97)) {
      const c = world.companyProfile(i);
      expect({ id: c.id, slug: c.slug, name: c.name }).toEqual({ id: world.companies[i].id, slug: world.companies[i].slug, name: world.companies[i].name });
      expect(c.urn).toBe(`urn:li:company:${c.id}`);
      expect(c.url).toBe(`https://www.linkedin.com/company/${c.slug}`);
    }
  });

  it('lists current employers first, references real companies by name and id, and caps About at 300 characters', () => {
    let onNetwork = 0;
    for (const i of sample(world.people.length, 37)) {
      const p = world.personProfile(i);
      const firstPast = p.employers.findIndex((e) => !e.is_current);
      if (firstPast >= 0) expect(p.employers.slice(firstPast).some((e) => e.is_current)).toBe(false);
      for (const e of p.employers) {
        if (e.start_date && e.end_date) expect(e.start_date <= e.end_date).toBe(true);
        if (e.company_id === null) continue;
        onNetwork++;
        const company = world.companyIndexById(e.company_id);
        expect(company).toBeDefined();
        expect(world.companies[company!].name).toBe(e.company_name);
      }
      if (p.about !== null) expect(p.about.length).toBeLessThanOrEqual(PERSON_ABOUT_MAX_CHARS);
    }
    expect(onNetwork).toBeGreaterThan(1000);
  });

  it('derives the same record on every call and in a freshly built world', () => {
    const fresh = new World();
    for (const i of [0, 1, 4, 777, 9_999]) expect(fresh.companyProfile(i)).toEqual(world.companyProfile(i));
    for (const i of [0, 2, 31_415, 50_001]) expect(fresh.personProfile(i)).toEqual(world.personProfile(i));
    expect(world.companyProfile(500)).toEqual(world.companyProfile(500));
    expect(fresh.companies.map((c) => c.slug)).toEqual(world.companies.map((c) => c.slug));
  }, 30_000);

  it('hands out copies, so a caller cannot change the network', () => {
    const acme = world.companyIndexBySlug('acme-robotics')!;
    world.companyProfile(acme).follower_count = -1;
    world.personProfile(0).employers.pop();
    expect(world.companyProfile(acme).follower_count).toBe(15230);
    expect(world.personProfile(0).employers).toHaveLength(2);
  });
});

describe('sandbox world: search', () => {
  it('ranks the exact company first and numbers positions from 1 up to the limit', () => {
    const results = world.search('Acme Robotics', 5);
    expect(results[0]).toMatchObject({ position: 1, url: 'https://www.linkedin.com/company/acme-robotics' });
    expect(results.map((r) => r.position)).toEqual(results.map((_, i) => i + 1));
    expect(results.length).toBeLessThanOrEqual(5);
  });

  it('finds generated people and companies, honours the limit and is deterministic', () => {
    const p = world.people[1234];
    const results = world.search(`${p.firstName} ${p.lastName}`, 50);
    expect(results.length).toBe(50);
    expect(results.some((r) => r.url.endsWith(`/in/${p.publicIdentifier}`))).toBe(true);
    expect(world.search(`${p.firstName} ${p.lastName}`, 50)).toEqual(results);
    expect(world.search(p.lastName, 3)).toHaveLength(3);
  });

  it('answers an empty list when nothing matches', () => {
    expect(world.search('zzqxv', 10)).toEqual([]);
  });
});

describe('slugify', () => {
  it('lowercases, strips accents and joins words with single dashes', () => {
    expect(slugify('Hyatt - Pfannerstill')).toBe('hyatt-pfannerstill');
    expect(slugify('Ward, Kuhn and Hills')).toBe('ward-kuhn-and-hills');
    expect(slugify('Émile Zoë GmbH.')).toBe('emile-zoe-gmbh');
  });
});
