import { z } from 'zod';

/**
 * The two profile shapes the service returns as `data` (decisions.md, "Response bodies").
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
    city: z.string().min(1).nullable(),
    region: z.string().min(1).nullable(),
    country: z.string().min(1).nullable(),
  })
  .meta({ id: 'Place', description: 'A location; any part the network does not show is null.' });

export const CompanySize = z
  .strictObject({
    min: nonNegativeInt,
    /** null for the open-ended top bucket (`10001+`). */
    max: nonNegativeInt.nullable(),
  })
  .refine((s) => s.max === null || s.max >= s.min, { message: 'max must be >= min' })
  .meta({ id: 'CompanySize', description: 'The headcount bucket the company states; max is null for "10001+".' });

export const CompanyProfile = z
  .strictObject({
    id: digits,
    urn: z.string().regex(/^urn:li:company:[1-9][0-9]{0,18}$/),
    slug: z.string().min(1).max(100),
    url: z.url(),
    name: z.string().min(1),
    tagline: z.string().nullable(),
    description: z.string().nullable(),
    website: z.url().nullable(),
    industry: z.string().nullable(),
    company_size: CompanySize.nullable(),
    employee_count: nonNegativeInt.nullable(),
    follower_count: nonNegativeInt,
    headquarters: Place.nullable(),
    founded_year: year.nullable(),
    type: z.string().nullable(),
    specialties: z.array(z.string().min(1)),
  })
  .meta({ id: 'CompanyProfile', description: 'A company page of the professional network.' });

export const Employment = z
  .strictObject({
    company_name: z.string().min(1),
    /** null when the employer has no company page on the network. */
    company_id: digits.nullable(),
    title: z.string().nullable(),
    start_date: yearMonth.nullable(),
    /** null while the position is current. */
    end_date: yearMonth.nullable(),
    is_current: z.boolean(),
  })
  .refine((e) => !e.is_current || e.end_date === null, { message: 'a current position has no end_date', path: ['end_date'] })
  .meta({ id: 'Employment' });

export const Education = z
  .strictObject({
    name: z.string().min(1),
    degree: z.string().nullable(),
    field_of_study: z.string().nullable(),
    start_year: year.nullable(),
    end_year: year.nullable(),
  })
  .meta({ id: 'Education' });

export const PERSON_ABOUT_MAX_CHARS = 300;

export const PersonProfile = z
  .strictObject({
    public_identifier: z.string().min(1).max(100),
    url: z.url(),
    full_name: z.string().min(1),
    first_name: z.string().min(1),
    last_name: z.string(),
    headline: z.string().nullable(),
    location: Place.nullable(),
    /** The start of the About text. */
    about: z.string().max(PERSON_ABOUT_MAX_CHARS).nullable(),
    employers: z.array(Employment),
    schools: z.array(Education),
    follower_count: nonNegativeInt,
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
