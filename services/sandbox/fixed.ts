import type { ErrorCode } from '../../contracts/errors';
import type { CompanyProfile, PersonProfile } from '../../contracts/profiles';

/**
 * The fixed entries of the sandbox network, written out by hand so tests and docs can rely on
 * them exactly. Everything else in the network is generated.
 */

export const NETWORK_ORIGIN = 'https://www.linkedin.com';
export const companyPageUrl = (slug: string) => `${NETWORK_ORIGIN}/company/${slug}`;
export const personPageUrl = (publicIdentifier: string) => `${NETWORK_ORIGIN}/in/${publicIdentifier}`;

/** Failure triggers: usable as a company slug, a domain's first label, a person id, a name or a query. */
export const TRIGGERS = [
  'sandbox-timeout',
  'sandbox-blocked',
  'sandbox-source-rate-limited',
  'sandbox-upstream-error',
  'sandbox-parse-error',
  'sandbox-slow',
] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** What a lookup or search answers for each trigger (the source's failure is the API's error code; none: found, late). Shown on /docs. */
export const SANDBOX_TRIGGER_ERRORS: readonly { trigger: Trigger; code: ErrorCode | null }[] = [
  { trigger: 'sandbox-timeout', code: 'timeout' },
  { trigger: 'sandbox-blocked', code: 'blocked' },
  { trigger: 'sandbox-source-rate-limited', code: 'source_rate_limited' },
  { trigger: 'sandbox-upstream-error', code: 'upstream_error' },
  { trigger: 'sandbox-parse-error', code: 'parse_error' },
  { trigger: 'sandbox-slow', code: null },
];

/** The company whose follower_count changes on every fetch. */
export const CHANGING_COMPANY_SLUG = 'sandbox-changing';
/** How long `sandbox-slow` makes the caller wait before it answers. */
export const SLOW_DELAY_MS = 2000;

/** Known-absent keys, reserved so the generator can never produce them. */
export const UNKNOWN = {
  companyId: '999999999',
  domain: 'no-company-here.com',
  personId: 'nobody-here-000',
} as const;

export type FixedCompany = { profile: CompanyProfile; oldSlugs: string[]; domains: string[] };

function company(p: Omit<CompanyProfile, 'urn' | 'url'>): CompanyProfile {
  // Key order matches the generated records so canonical JSON looks the same everywhere.
  return {
    id: p.id,
    urn: `urn:li:company:${p.id}`,
    slug: p.slug,
    url: companyPageUrl(p.slug),
    name: p.name,
    tagline: p.tagline,
    description: p.description,
    website: p.website,
    industry: p.industry,
    company_size: p.company_size,
    employee_count: p.employee_count,
    follower_count: p.follower_count,
    headquarters: p.headquarters,
    founded_year: p.founded_year,
    type: p.type,
    specialties: p.specialties,
  };
}

export const FIXED_COMPANIES: readonly FixedCompany[] = [
  {
    profile: company({
      id: '1337',
      slug: 'acme-robotics',
      name: 'Acme Robotics',
      tagline: 'Robots that do the heavy lifting',
      description:
        'Acme Robotics designs and builds autonomous mobile robots for warehouses and factories, ' +
        'from the motion controller to the fleet software.',
      website: 'https://www.acmerobotics.com',
      industry: 'Automation Machinery Manufacturing',
      company_size: { min: 201, max: 500 },
      employee_count: 342,
      follower_count: 15230,
      headquarters: { city: 'Pittsburgh', region: 'Pennsylvania', country: 'United States' },
      founded_year: 2009,
      type: 'Privately Held',
      specialties: ['Robotics', 'Autonomous Mobile Robots', 'Motion Control', 'Fleet Management'],
    }),
    oldSlugs: ['acme-robotics-inc'],
    domains: ['acmerobotics.com'],
  },
  {
    profile: company({
      id: '4242',
      slug: 'globex',
      name: 'Globex Corporation',
      tagline: 'Global solutions for a global world',
      description:
        'Globex Corporation is a diversified industrial group serving customers in more than ' +
        '40 countries with energy, logistics and engineering services.',
      website: 'https://www.globex-corp.com',
      industry: 'Industrial Machinery Manufacturing',
      company_size: { min: 10001, max: null },
      employee_count: 23814,
      follower_count: 412977,
      headquarters: { city: 'Cypress Creek', region: 'Oregon', country: 'United States' },
      founded_year: 1956,
      type: 'Public Company',
      specialties: ['Energy', 'Logistics', 'Engineering Services'],
    }),
    oldSlugs: [],
    // globex.com answers for Globex although its website says otherwise (`confirmed: false`).
    domains: ['globex-corp.com', 'globex.com'],
  },
  {
    profile: company({
      id: '7001',
      slug: CHANGING_COMPANY_SLUG,
      name: 'Sandbox Changing Co',
      tagline: 'A page whose follower count never stands still',
      description: 'A sandbox company whose follower_count changes on every fetch, to exercise change detection.',
      website: 'https://www.sandbox-changing.com',
      industry: 'Software Development',
      company_size: { min: 11, max: 50 },
      employee_count: 23,
      follower_count: 1000,
      headquarters: { city: 'Austin', region: 'Texas', country: 'United States' },
      founded_year: 2020,
      type: 'Privately Held',
      specialties: ['Change Detection'],
    }),
    oldSlugs: [],
    domains: ['sandbox-changing.com'],
  },
  {
    profile: company({
      id: '7002',
      slug: 'sandbox-slow',
      name: 'Sandbox Slow Inc',
      tagline: 'Good things come to those who wait',
      description: 'A sandbox company that answers after about two seconds.',
      website: 'https://www.sandbox-slow.com',
      industry: 'Software Development',
      company_size: { min: 2, max: 10 },
      employee_count: 4,
      follower_count: 87,
      headquarters: { city: 'Portland', region: 'Maine', country: 'United States' },
      founded_year: 2021,
      type: 'Privately Held',
      specialties: ['Patience'],
    }),
    oldSlugs: [],
    domains: ['sandbox-slow.com'],
  },
];

export const FIXED_PEOPLE: readonly PersonProfile[] = [
  {
    public_identifier: 'jane-doe-42',
    url: personPageUrl('jane-doe-42'),
    full_name: 'Jane Doe',
    first_name: 'Jane',
    last_name: 'Doe',
    headline: 'Head of Robotics Engineering at Acme Robotics',
    location: { city: 'Pittsburgh', region: 'Pennsylvania', country: 'United States' },
    about:
      'Robotics engineer who likes shipping hardware. I lead the team that builds the motion ' +
      'control and navigation stack of our autonomous mobile robots.',
    employers: [
      {
        company_name: 'Acme Robotics',
        company_id: '1337',
        title: 'Head of Robotics Engineering',
        start_date: '2021-03',
        end_date: null,
        is_current: true,
      },
      {
        company_name: 'Globex Corporation',
        company_id: '4242',
        title: 'Senior Controls Engineer',
        start_date: '2016-07',
        end_date: '2021-02',
        is_current: false,
      },
    ],
    schools: [
      {
        name: 'Carnegie Mellon University',
        degree: 'Master of Science',
        field_of_study: 'Robotics',
        start_year: 2014,
        end_year: 2016,
      },
    ],
    follower_count: 1842,
  },
  {
    public_identifier: 'sandbox-slow',
    url: personPageUrl('sandbox-slow'),
    full_name: 'Sandy Slow',
    first_name: 'Sandy',
    last_name: 'Slow',
    headline: 'Chief Waiting Officer at Sandbox Slow Inc',
    location: { city: 'Portland', region: 'Maine', country: 'United States' },
    about: 'A sandbox profile that answers after about two seconds.',
    employers: [
      {
        company_name: 'Sandbox Slow Inc',
        company_id: '7002',
        title: 'Chief Waiting Officer',
        start_date: '2021-01',
        end_date: null,
        is_current: true,
      },
    ],
    schools: [],
    follower_count: 12,
  },
];
