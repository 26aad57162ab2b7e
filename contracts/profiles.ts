import { z } from 'zod';

/**
 * The two profile shapes the service returns as `data` (docs/api.md "Success answer").
 * Every key is always present; a fact the network does not hold is `null`, never absent, so the
 * same profile always canonicalises to the same JSON and the same `content_hash`.
 * Objects are strict: an upstream shape we do not know fails parsing instead of leaking through.
 */

const digits = z.string().regex(/^[1-9][0-9]{0,18}$/, 'expected a numeric id of 1-19 digits');
const nonNegativeInt = z.int().nonnegative();
const year = z.int().min(1800).max(2100);
/** `YYYY-MM`: profile dates on the network are month-precise. */
const yearMonth = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'expected YYYY-MM');

export const Place = z
  .strictObject({
    city: z.string().min(1).nullable().meta({ description: 'City, or null.' }),
    region: z.string().min(1).nullable().meta({ description: 'Region or state, or null.' }),
    country: z.string().min(1).nullable().meta({ description: 'Country, or null.' }),
  })
  .meta({ id: 'Place', description: 'A location; any part the network does not show is null.' });

export const CompanySize = z
  .strictObject({
    min: nonNegativeInt.meta({ description: 'Smallest headcount of the bucket.' }),
    /** null for the open-ended top bucket (`10001+`). */
    max: nonNegativeInt.nullable().meta({ description: 'Largest headcount of the bucket; null for the open-ended top bucket.' }),
  })
  .refine((s) => s.max === null || s.max >= s.min, { message: 'max must be >= min' })
  .meta({ id: 'CompanySize', description: 'The headcount bucket the company states; max is null for "10001+".' });

export const CompanyProfile = z
  .strictObject({
    id: digits.meta({ description: 'The numeric company id, as a string of digits.' }),
    urn: z.string().regex(/^urn:li:company:[1-9][0-9]{0,18}$/).meta({ description: '`urn:li:company:<id>`.' }),
    slug: z.string().min(1).max(100).meta({ description: 'The current slug of the company page.' }),
    url: z.url().meta({ description: 'The canonical company page URL.' }),
    name: z.string().min(1).meta({ description: 'The company name.' }),
    tagline: z.string().nullable().meta({ description: 'The short tagline, or null.' }),
    description: z.string().nullable().meta({ description: 'The About text, or null.' }),
    website: z.url().nullable().meta({ description: 'The company website as stated on its page, or null.' }),
    industry: z.string().nullable().meta({ description: 'The industry, or null.' }),
    company_size: CompanySize.nullable().meta({ description: 'The stated headcount bucket, or null.' }),
    employee_count: nonNegativeInt.nullable().meta({ description: 'Members listing the company as their employer, or null.' }),
    follower_count: nonNegativeInt.meta({ description: 'Followers of the company page.' }),
    headquarters: Place.nullable().meta({ description: 'Where the company is based, or null.' }),
    founded_year: year.nullable().meta({ description: 'The year founded, or null.' }),
    type: z.string().nullable().meta({ description: 'The kind of organisation (e.g. Privately Held), or null.' }),
    specialties: z.array(z.string().min(1)).meta({ description: 'The specialties listed on the page (possibly empty).' }),
  })
  .meta({ id: 'CompanyProfile', description: 'A company page of the professional network.' });

export const Employment = z
  .strictObject({
    company_name: z.string().min(1).meta({ description: 'The employer name.' }),
    /** null when the employer has no company page on the network. */
    company_id: digits.nullable().meta({ description: 'The employer numeric company id; null when it has no company page.' }),
    title: z.string().nullable().meta({ description: 'The job title, or null.' }),
    start_date: yearMonth.nullable().meta({ description: '`YYYY-MM`, or null.' }),
    /** null while the position is current. */
    end_date: yearMonth.nullable().meta({ description: '`YYYY-MM`; null while the position is current.' }),
    is_current: z.boolean().meta({ description: 'True for a current position.' }),
  })
  .refine((e) => !e.is_current || e.end_date === null, { message: 'a current position has no end_date', path: ['end_date'] })
  .meta({ id: 'Employment' });

export const Education = z
  .strictObject({
    name: z.string().min(1).meta({ description: 'The school name.' }),
    degree: z.string().nullable().meta({ description: 'The degree, or null.' }),
    field_of_study: z.string().nullable().meta({ description: 'The field of study, or null.' }),
    start_year: year.nullable().meta({ description: 'The first year, or null.' }),
    end_year: year.nullable().meta({ description: 'The last year, or null.' }),
  })
  .meta({ id: 'Education' });

export const PERSON_ABOUT_MAX_CHARS = 300;

export const PersonProfile = z
  .strictObject({
    public_identifier: z.string().min(1).max(100).meta({ description: 'The id in the profile URL (`/in/<public_identifier>`).' }),
    url: z.url().meta({ description: 'The canonical profile URL.' }),
    full_name: z.string().min(1).meta({ description: 'The full name.' }),
    first_name: z.string().min(1).meta({ description: 'The first name.' }),
    last_name: z.string().meta({ description: 'The last name (may be empty).' }),
    headline: z.string().nullable().meta({ description: 'The headline, or null.' }),
    location: Place.nullable().meta({ description: 'Where the person is, or null.' }),
    /** The start of the About text. */
    about: z.string().max(PERSON_ABOUT_MAX_CHARS).nullable().meta({ description: 'The start of the About text (at most 300 characters), or null.' }),
    employers: z.array(Employment).meta({ description: 'Positions, current ones first.' }),
    schools: z.array(Education).meta({ description: 'Education.' }),
    follower_count: nonNegativeInt.meta({ description: 'Followers of the profile.' }),
  })
  .refine(
    (p) => {
      // Current positions come first: once a past one appears, no current one may follow.
      const firstPast = p.employers.findIndex((e) => !e.is_current);
      return firstPast === -1 || p.employers.slice(firstPast).every((e) => !e.is_current);
    },
    { message: 'current employers must come first', path: ['employers'] },
  )
  .meta({ id: 'PersonProfile', description: "A person's public mini profile." });

export type Place = z.infer<typeof Place>;
export type CompanySize = z.infer<typeof CompanySize>;
export type CompanyProfile = z.infer<typeof CompanyProfile>;
export type Employment = z.infer<typeof Employment>;
export type Education = z.infer<typeof Education>;
export type PersonProfile = z.infer<typeof PersonProfile>;
