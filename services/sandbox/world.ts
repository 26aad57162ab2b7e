import { Faker, en } from '@faker-js/faker';
import type { CompanyProfile, Education, Employment, PersonProfile, Place } from '../../contracts/profiles';
import { PERSON_ABOUT_MAX_CHARS } from '../../contracts/profiles';
import type { CompanyAliases } from '../lookup/source/source';
import type { SearchResult } from '../lookup/source/wire';
import {
  CHANGING_COMPANY_SLUG,
  FIXED_COMPANIES,
  FIXED_PEOPLE,
  TRIGGERS,
  UNKNOWN,
  companyPageUrl,
  personPageUrl,
} from './fixed';

/**
 * The synthetic professional network.
 *
 * Start-up builds only the cheap indexes (names, slugs, ids, domains, public identifiers) in one
 * seeded pass. A full record is derived on demand from its own seed (`RECORD_SEED + index`), so it
 * is the same in every process and on every call, without generating 60,000 records up front.
 */

export const WORLD_SEED = 424_242;
export const GENERATED_COMPANIES = 10_000;
export const GENERATED_PEOPLE = 50_000;
const COMPANY_RECORD_SEED = 1_000_000;
const PERSON_RECORD_SEED = 2_000_000;
/** Records are dated against a fixed "today" so they never depend on the clock. */
const REFERENCE_YEAR = 2025;
const REFERENCE_MONTH = 6;

export type CompanyEntry = {
  name: string;
  /** Current slug. */
  slug: string;
  oldSlugs: string[];
  id: string;
  /** Registrable domains the company answers for, its website's first. */
  domains: string[];
  website: string;
};

export type PersonEntry = { publicIdentifier: string; firstName: string; lastName: string };


/** Lowercase, accents stripped, runs of anything else turned into single dashes. */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
}

/** Name lookups ignore case and surrounding or repeated whitespace. */
export function normalizeName(name: string): string {
  return name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

const isReservedKey = (key: string) => key.startsWith('sandbox-') || (TRIGGERS as readonly string[]).includes(key);

const INDUSTRIES = [
  'Software Development', 'IT Services and IT Consulting', 'Financial Services', 'Banking',
  'Hospitals and Health Care', 'Pharmaceutical Manufacturing', 'Retail', 'Construction',
  'Real Estate', 'Higher Education', 'Marketing Services', 'Advertising Services',
  'Staffing and Recruiting', 'Insurance', 'Telecommunications', 'Biotechnology Research',
  'Industrial Machinery Manufacturing', 'Automation Machinery Manufacturing', 'Food and Beverage Services',
  'Transportation, Logistics, Supply Chain and Storage', 'Renewable Energy Power Generation',
  'Oil and Gas', 'Legal Services', 'Business Consulting and Services', 'Entertainment Providers',
  'Design Services', 'Government Administration', 'Non-profit Organizations', 'Wellness and Fitness Services',
  'Computer and Network Security',
];
/** The network's headcount buckets; `max: null` is the open-ended top bucket. */
const SIZE_BUCKETS: { min: number; max: number | null; weight: number }[] = [
  { min: 2, max: 10, weight: 20 },
  { min: 11, max: 50, weight: 25 },
  { min: 51, max: 200, weight: 20 },
  { min: 201, max: 500, weight: 12 },
  { min: 501, max: 1000, weight: 8 },
  { min: 1001, max: 5000, weight: 7 },
  { min: 5001, max: 10000, weight: 4 },
  { min: 10001, max: null, weight: 4 },
];
const COMPANY_TYPES = [
  { value: 'Privately Held', weight: 60 },
  { value: 'Public Company', weight: 12 },
  { value: 'Partnership', weight: 8 },
  { value: 'Self-Employed', weight: 5 },
  { value: 'Nonprofit', weight: 8 },
  { value: 'Government Agency', weight: 3 },
  { value: 'Educational', weight: 4 },
];
const TLDS = [
  { value: 'com', weight: 70 },
  { value: 'io', weight: 8 },
  { value: 'co', weight: 5 },
  { value: 'net', weight: 5 },
  { value: 'ai', weight: 4 },
  { value: 'co.uk', weight: 4 },
  { value: 'de', weight: 4 },
];
const OLD_SLUG_SUFFIXES = ['inc', 'llc', 'group', 'co', 'hq', 'global', 'old', 'official'];
const ABROAD: { country: string; regions: string[] }[] = [
  { country: 'United Kingdom', regions: ['England', 'Scotland', 'Wales'] },
  { country: 'Germany', regions: ['Bavaria', 'Berlin', 'Hesse', 'Hamburg'] },
  { country: 'Canada', regions: ['Ontario', 'Quebec', 'British Columbia'] },
  { country: 'India', regions: ['Karnataka', 'Maharashtra', 'Telangana'] },
  { country: 'Australia', regions: ['New South Wales', 'Victoria'] },
  { country: 'France', regions: ['Île-de-France', 'Auvergne-Rhône-Alpes'] },
  { country: 'Netherlands', regions: ['North Holland', 'South Holland'] },
];
const DEGREES = [
  'Bachelor of Science', 'Bachelor of Arts', 'Master of Science', 'Master of Business Administration',
  'Master of Arts', 'Doctor of Philosophy', 'Associate of Science',
];
const FIELDS = [
  'Computer Science', 'Economics', 'Business Administration', 'Mechanical Engineering', 'Marketing',
  'Psychology', 'Finance', 'Electrical Engineering', 'Biology', 'Communication', 'Mathematics',
  'Political Science', 'Design', 'Accounting', 'Nursing',
];
const SEARCH_STOPWORDS = new Set(['and', 'the', 'of', 'at', 'in', 'for', 'llc', 'inc', 'ltd', 'co']);

function newFaker(seed: number): Faker {
  const f = new Faker({ locale: [en] });
  f.seed(seed);
  return f;
}

function truncateAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > max / 2 ? cut.slice(0, lastSpace) : cut).replace(/[\s,.;:]+$/, '')}…`;
}

function tokens(text: string): string[] {
  return slugify(text)
    .split('-')
    .filter((t) => t.length >= 2 && !SEARCH_STOPWORDS.has(t));
}

const ym = (year: number, month: number) => `${year}-${String(month).padStart(2, '0')}`;

export class World {
  readonly companies: CompanyEntry[] = [];
  readonly people: PersonEntry[] = [];
  readonly fixedCompanyCount = FIXED_COMPANIES.length;
  readonly fixedPersonCount = FIXED_PEOPLE.length;

  private readonly companyBySlugKey = new Map<string, number>();
  private readonly companyByIdKey = new Map<string, number>();
  private readonly companyByDomainKey = new Map<string, number>();
  private readonly personByIdKey = new Map<string, number>();
  private readonly personByNameKey = new Map<string, number>();
  /** Token -> entity references: a company as its index i, a person as -(i + 1). */
  private searchIndex?: Map<string, number[]>;
  /** Reseeded for every record; records are built synchronously, so one instance is enough. */
  private readonly recordFaker = new Faker({ locale: [en] });

  constructor() {
    this.indexFixedEntries();
    this.generateCompanies();
    this.generatePeople();
  }

  // ---- lookups: each answers an index or undefined --------------------------------------------

  companyIndexBySlug(slug: string): number | undefined {
    return this.companyBySlugKey.get(slug.toLowerCase());
  }

  companyIndexById(id: string): number | undefined {
    if (!/^[0-9]{1,19}$/.test(id)) return undefined;
    return this.companyByIdKey.get(BigInt(id).toString());
  }

  companyIndexByDomain(domain: string): number | undefined {
    return this.companyByDomainKey.get(domain.toLowerCase().replace(/\.$/, ''));
  }

  personIndexById(publicIdentifier: string): number | undefined {
    return this.personByIdKey.get(publicIdentifier.toLowerCase());
  }

  personIndexByName(name: string): number | undefined {
    return this.personByNameKey.get(normalizeName(name));
  }

  isChangingCompany(index: number): boolean {
    return this.companies[index].slug === CHANGING_COMPANY_SLUG;
  }

  companyAliases(index: number): CompanyAliases {
    const c = this.companies[index];
    return { id: c.id, slugs: [c.slug, ...c.oldSlugs], domains: [...c.domains] };
  }

  // ---- full records, derived on demand ----------------------------------------------------------

  companyProfile(index: number): CompanyProfile {
    if (index < this.fixedCompanyCount) return structuredClone(FIXED_COMPANIES[index].profile);
    const c = this.companies[index];
    const f = this.reseeded(COMPANY_RECORD_SEED + index);
    const bucket = f.helpers.weightedArrayElement(SIZE_BUCKETS.map((b) => ({ value: b, weight: b.weight })));
    const employeeCount = f.datatype.boolean(0.92)
      ? f.number.int({ min: Math.max(1, Math.floor(bucket.min / 2)), max: bucket.max ?? bucket.min * 4 })
      : null;
    const specialties = f.helpers.uniqueArray(
      () => `${f.company.buzzAdjective()} ${f.company.buzzNoun()}`.replace(/^./, (ch) => ch.toUpperCase()),
      f.number.int({ min: 0, max: 6 }),
    );
    return {
      id: c.id,
      urn: `urn:li:company:${c.id}`,
      slug: c.slug,
      url: companyPageUrl(c.slug),
      name: c.name,
      tagline: f.datatype.boolean(0.85) ? f.company.catchPhrase() : null,
      description: f.datatype.boolean(0.95)
        ? `${c.name} ${f.helpers.arrayElement(['helps teams', 'exists to', 'builds products that', 'works with partners to'])} ` +
          `${f.company.buzzPhrase()}. ${f.company.catchPhrase()}.`
        : null,
      website: c.website,
      industry: f.datatype.boolean(0.97) ? f.helpers.arrayElement(INDUSTRIES) : null,
      company_size: { min: bucket.min, max: bucket.max },
      employee_count: employeeCount,
      follower_count: Math.round(10 ** f.number.float({ min: 1, max: 6.3 })),
      headquarters: f.datatype.boolean(0.95) ? this.place(f) : null,
      founded_year: f.datatype.boolean(0.9) ? f.number.int({ min: 1890, max: REFERENCE_YEAR - 1 }) : null,
      type: f.datatype.boolean(0.95) ? f.helpers.weightedArrayElement(COMPANY_TYPES) : null,
      specialties,
    };
  }

  personProfile(index: number): PersonProfile {
    if (index < this.fixedPersonCount) return structuredClone(FIXED_PEOPLE[index]);
    const p = this.people[index];
    const f = this.reseeded(PERSON_RECORD_SEED + index);
    const employers = this.career(f);
    const current = employers.find((e) => e.is_current);
    const headline = current
      ? `${current.title} at ${current.company_name}`
      : f.datatype.boolean(0.6)
        ? f.person.jobTitle()
        : null;
    let about: string | null = null;
    if (f.datatype.boolean(0.8)) {
      const sentences = [
        `${f.helpers.arrayElement(['Experienced', 'Curious', 'Hands-on', 'Results-driven', 'Friendly'])} ${f.person.jobTitle().toLowerCase()} with a passion for ${f.company.buzzPhrase()}.`,
        `I ${f.helpers.arrayElement(['enjoy', 'specialise in', 'care about', 'spend my days on'])} ${f.company.buzzPhrase()} and ${f.company.buzzPhrase()}.`,
        `Previously ${f.person.jobDescriptor().toLowerCase()} ${f.person.jobArea().toLowerCase()} work across ${f.number.int({ min: 2, max: 12 })} teams.`,
        `Outside work: ${f.word.noun()}, ${f.word.noun()} and ${f.word.noun()}.`,
      ];
      about = truncateAtWord(sentences.slice(0, f.number.int({ min: 1, max: 4 })).join(' '), PERSON_ABOUT_MAX_CHARS);
    }
    return {
      public_identifier: p.publicIdentifier,
      url: personPageUrl(p.publicIdentifier),
      full_name: `${p.firstName} ${p.lastName}`,
      first_name: p.firstName,
      last_name: p.lastName,
      headline,
      location: f.datatype.boolean(0.95) ? this.place(f) : null,
      about,
      employers,
      schools: this.schools(f),
      follower_count: Math.round(10 ** f.number.float({ min: 0, max: 4.5 })),
    };
  }

  // ---- web search over the same world ---------------------------------------------------------

  search(query: string, limit: number): SearchResult[] {
    const index = (this.searchIndex ??= this.buildSearchIndex());
    const queryTokens = [...new Set(tokens(query))];
    const normalizedQuery = normalizeName(query);
    const scores = new Map<number, number>();
    for (const t of queryTokens) for (const ref of index.get(t) ?? []) scores.set(ref, (scores.get(ref) ?? 0) + 1);
    const exactBonus = (ref: number) => {
      const name = ref >= 0 ? this.companies[ref].name : `${this.people[-ref - 1].firstName} ${this.people[-ref - 1].lastName}`;
      return normalizeName(name) === normalizedQuery || (ref >= 0 && this.companies[ref].slug === normalizedQuery) ? 10 : 0;
    };
    const ranked = [...scores.entries()]
      .map(([ref, score]) => ({ ref, score: score + exactBonus(ref) }))
      // Best score first; then companies before people; then network order. Fully deterministic.
      .sort((a, b) => b.score - a.score || Number(b.ref >= 0) - Number(a.ref >= 0) || Math.abs(a.ref) - Math.abs(b.ref));

    const results: SearchResult[] = [];
    for (const { ref } of ranked) {
      if (results.length >= limit) break;
      if (ref >= 0) {
        const c = this.companyProfile(ref);
        results.push({
          position: 0,
          title: `${c.name} | LinkedIn`,
          url: c.url,
          snippet: truncateAtWord(
            [c.tagline, c.industry, c.follower_count !== null ? `${c.follower_count} followers` : null]
              .filter(Boolean)
              .join(' · '),
            200,
          ),
        });
        if (c.website && results.length < limit) {
          results.push({
            position: 0,
            title: c.tagline ? `${c.name} - ${c.tagline}` : c.name,
            url: c.website,
            snippet: truncateAtWord(c.description ?? c.name, 200),
          });
        }
      } else {
        const p = this.personProfile(-ref - 1);
        const place = p.location ? [p.location.city, p.location.country].filter(Boolean).join(', ') : null;
        results.push({
          position: 0,
          title: p.headline ? `${p.full_name} - ${p.headline} | LinkedIn` : `${p.full_name} | LinkedIn`,
          url: p.url,
          snippet: truncateAtWord([place, p.about].filter(Boolean).join(' · ') || p.full_name, 200),
        });
      }
    }
    return results.map((r, i) => ({ ...r, position: i + 1 }));
  }

  // ---- generation --------------------------------------------------------------------------------

  private addCompany(entry: CompanyEntry): number {
    const index = this.companies.push(entry) - 1;
    for (const slug of [entry.slug, ...entry.oldSlugs]) this.companyBySlugKey.set(slug, index);
    this.companyByIdKey.set(entry.id, index);
    for (const domain of entry.domains) this.companyByDomainKey.set(domain, index);
    return index;
  }

  private addPerson(entry: PersonEntry): number {
    const index = this.people.push(entry) - 1;
    this.personByIdKey.set(entry.publicIdentifier, index);
    const nameKey = normalizeName(`${entry.firstName} ${entry.lastName}`);
    // Several people may share a name; the name resolves to the first of them.
    if (!this.personByNameKey.has(nameKey)) this.personByNameKey.set(nameKey, index);
    return index;
  }

  private indexFixedEntries(): void {
    for (const c of FIXED_COMPANIES) {
      this.addCompany({
        name: c.profile.name,
        slug: c.profile.slug,
        oldSlugs: [...c.oldSlugs],
        id: c.profile.id,
        domains: [...c.domains],
        website: c.profile.website ?? '',
      });
    }
    for (const p of FIXED_PEOPLE) {
      this.addPerson({ publicIdentifier: p.public_identifier, firstName: p.first_name, lastName: p.last_name });
    }
  }

  private generateCompanies(): void {
    const f = newFaker(WORLD_SEED);
    const takenIds = new Set<string>([...this.companyByIdKey.keys(), UNKNOWN.companyId]);
    const slugTaken = (s: string) => this.companyBySlugKey.has(s) || isReservedKey(s);
    const domainTaken = (d: string) => this.companyByDomainKey.has(d) || d === UNKNOWN.domain;
    const first = this.companies.length;

    for (let i = 0; i < GENERATED_COMPANIES; i++) {
      const name = f.company.name();
      const baseSlug = slugify(name);
      let slug = baseSlug;
      for (let n = 2; slugTaken(slug); n++) slug = `${baseSlug}-${n}`;

      let id: string;
      do id = String(f.number.int({ min: 10_000, max: 99_999_999 }));
      while (takenIds.has(id));
      takenIds.add(id);

      const label = slugify(name.replace(/\b(LLC|Inc|Group|and Sons)\b/g, '')).replace(/-/g, '');
      const tld = f.helpers.weightedArrayElement(TLDS);
      let domain = `${label}.${tld}`;
      for (let n = 2; domainTaken(domain); n++) domain = `${label}${n}.${tld}`;
      const domains = [domain];
      // A few companies also answer for a second domain their website does not name.
      if (f.datatype.boolean(0.04)) {
        const extra = `${label}.${tld === 'com' ? 'net' : 'com'}`;
        if (!domainTaken(extra) && extra !== domain) domains.push(extra);
      }
      this.addCompany({ name, slug, oldSlugs: [], id, domains, website: `https://www.${domain}` });
    }

    // Old slugs come second, so they can never take a slug some later company holds today.
    for (let i = first; i < this.companies.length; i++) {
      if (!f.datatype.boolean(0.12)) continue;
      const c = this.companies[i];
      const wanted = f.number.int({ min: 1, max: 2 });
      for (const suffix of f.helpers.shuffle([...OLD_SLUG_SUFFIXES])) {
        if (c.oldSlugs.length >= wanted) break;
        const old = `${c.slug}-${suffix}`.slice(0, 100);
        if (slugTaken(old)) continue;
        c.oldSlugs.push(old);
        this.companyBySlugKey.set(old, i);
      }
    }
  }

  private generatePeople(): void {
    const f = newFaker(WORLD_SEED + 1);
    const reservedNames = new Set(FIXED_PEOPLE.map((p) => normalizeName(p.full_name)));
    for (let i = 0; i < GENERATED_PEOPLE; i++) {
      let firstName: string;
      let lastName: string;
      do {
        firstName = f.person.firstName();
        lastName = f.person.lastName();
      } while (reservedNames.has(normalizeName(`${firstName} ${lastName}`)));
      const base = `${slugify(firstName)}-${slugify(lastName)}`;
      let publicIdentifier: string;
      do {
        const suffix = f.datatype.boolean(0.2)
          ? String(f.number.int({ min: 1, max: 999 }))
          : f.string.hexadecimal({ length: 8, casing: 'lower', prefix: '' });
        publicIdentifier = `${base}-${suffix}`;
      } while (this.personByIdKey.has(publicIdentifier) || publicIdentifier === UNKNOWN.personId || isReservedKey(publicIdentifier));
      this.addPerson({ publicIdentifier, firstName, lastName });
    }
  }

  private reseeded(seed: number): Faker {
    this.recordFaker.seed(seed);
    return this.recordFaker;
  }

  private place(f: Faker): Place {
    if (f.datatype.boolean(0.7)) {
      return { city: f.location.city(), region: f.location.state(), country: 'United States' };
    }
    const abroad = f.helpers.arrayElement(ABROAD);
    return { city: f.location.city(), region: f.helpers.arrayElement(abroad.regions), country: abroad.country };
  }

  /** A career told backwards from today: current positions first, then the most recent past ones. */
  private career(f: Faker): Employment[] {
    const count = f.helpers.weightedArrayElement([
      { value: 0, weight: 5 },
      { value: 1, weight: 25 },
      { value: 2, weight: 30 },
      { value: 3, weight: 25 },
      { value: 4, weight: 15 },
    ]);
    const generated = this.companies.length - this.fixedCompanyCount;
    const employers: Employment[] = [];
    // Months since year 0, counting back from the reference month.
    let cursor = REFERENCE_YEAR * 12 + (REFERENCE_MONTH - 1);
    const hasCurrent = f.datatype.boolean(0.85);
    for (let j = 0; j < count; j++) {
      const isCurrent = j === 0 && hasCurrent;
      const end = isCurrent ? cursor : cursor - f.number.int({ min: 0, max: 8 });
      const start = end - f.number.int({ min: 4, max: 84 });
      if (start < 1980 * 12) break;
      const onNetwork = f.datatype.boolean(0.88);
      const company = onNetwork ? this.companies[this.fixedCompanyCount + f.number.int({ min: 0, max: generated - 1 })] : null;
      employers.push({
        company_name: company ? company.name : f.company.name(),
        company_id: company ? company.id : null,
        title: f.datatype.boolean(0.97) ? f.person.jobTitle() : null,
        start_date: ym(Math.floor(start / 12), (start % 12) + 1),
        end_date: isCurrent ? null : ym(Math.floor(end / 12), (end % 12) + 1),
        is_current: isCurrent,
      });
      cursor = start - 1;
    }
    return employers;
  }

  private schools(f: Faker): Education[] {
    const count = f.helpers.weightedArrayElement([
      { value: 0, weight: 15 },
      { value: 1, weight: 55 },
      { value: 2, weight: 30 },
    ]);
    const schools: Education[] = [];
    let endYear = f.number.int({ min: 1985, max: REFERENCE_YEAR });
    for (let j = 0; j < count; j++) {
      const startYear = endYear - f.number.int({ min: 1, max: 5 });
      const name = f.helpers.arrayElement([
        () => `${f.location.city()} University`,
        () => `University of ${f.location.state()}`,
        () => `${f.person.lastName()} College`,
        () => `${f.location.state()} State University`,
        () => `${f.location.city()} Institute of Technology`,
      ])();
      schools.push({
        name,
        degree: f.datatype.boolean(0.85) ? f.helpers.arrayElement(DEGREES) : null,
        field_of_study: f.datatype.boolean(0.85) ? f.helpers.arrayElement(FIELDS) : null,
        start_year: startYear,
        end_year: endYear,
      });
      endYear = startYear - f.number.int({ min: 0, max: 3 });
    }
    return schools;
  }

  private buildSearchIndex(): Map<string, number[]> {
    const index = new Map<string, number[]>();
    const add = (token: string, ref: number) => {
      const list = index.get(token);
      if (list === undefined) index.set(token, [ref]);
      else if (list[list.length - 1] !== ref) list.push(ref);
    };
    this.companies.forEach((c, i) => {
      for (const t of new Set([...tokens(c.name), ...tokens(c.slug)])) add(t, i);
    });
    this.people.forEach((p, i) => {
      for (const t of new Set(tokens(`${p.firstName} ${p.lastName}`))) add(t, -(i + 1));
    });
    return index;
  }
}

let shared: World | undefined;

/** The world is immutable once built, so every sandbox in the process shares one. */
export function getWorld(): World {
  return (shared ??= new World());
}
