import { z } from 'zod';
import { SEARCH_LIMIT_MAX } from '../../../contracts/http';
import { CompanyProfile, PersonProfile } from '../../../contracts/profiles';
import { toWellFormed } from '../../../contracts/text';

/**
 * The upstream HTTP protocol the HTTP source speaks and the sandbox network serves.
 *
 *   GET /companies/by-slug/{slug}      200 CompanyEnvelope | 404 NotFoundBody(not_found)
 *   GET /companies/by-id/{id}          200 CompanyEnvelope | 404 NotFoundBody(unresolvable_id)
 *   GET /companies/by-domain/{domain}  200 CompanyEnvelope | 404 NotFoundBody(not_found)
 *   GET /people/by-id/{id}             200 PersonEnvelope  | 404 NotFoundBody(not_found)
 *   GET /people/by-name?name=          200 PersonEnvelope  | 404 NotFoundBody(not_found)
 *   GET /search?q=&limit=              200 SearchEnvelope
 *
 * Failures: 403 (blocked), 429 + Retry-After (rate limited), 5xx (upstream error),
 * 408/504 (upstream gave up: timeout), a 200 whose body is not the envelope (parse error).
 * A 404 only counts as a definitive answer when its body says so: a 404 from a wrong base URL or
 * a proxy must not be cached as "no such company".
 */
export const PATHS = {
  companyBySlug: (slug: string) => `/companies/by-slug/${encode(slug)}`,
  companyById: (id: string) => `/companies/by-id/${encode(id)}`,
  companyByDomain: (domain: string) => `/companies/by-domain/${encode(domain)}`,
  personById: (id: string) => `/people/by-id/${encode(id)}`,
  personByName: (name: string) => `/people/by-name?name=${encode(name)}`,
  search: (query: string, limit: number) => `/search?q=${encode(query)}&limit=${limit}`,
} as const;

/**
 * encodeURIComponent throws "URI malformed" on an unpaired surrogate, and that message once
 * reached a caller in a 500. The request schemas refuse such text before any charge
 * (contracts/text.ts); should one slip through, it is encoded as U+FFFD, as the WHATWG URL
 * encoder does, instead of throwing.
 */
function encode(component: string): string {
  return encodeURIComponent(toWellFormed(component));
}

/** The API passes `limit` through to the source: one maximum for both. */
export { SEARCH_LIMIT_MAX };

export const CompanyAliasesWire = z.strictObject({
  id: z.string().regex(/^[1-9][0-9]{0,18}$/),
  /** Current slug first, then earlier ones. */
  slugs: z.array(z.string().min(1)).min(1),
  /** Registrable domains the company answers for, its website's first. */
  domains: z.array(z.string().min(1)),
});

export const CompanyEnvelope = z
  .strictObject({ company: CompanyProfile, aliases: CompanyAliasesWire })
  .refine((e) => e.aliases.id === e.company.id && e.aliases.slugs[0] === e.company.slug, {
    message: 'aliases disagree with the company they describe',
  });

export const PersonEnvelope = z.strictObject({ person: PersonProfile });

export const SearchResult = z.strictObject({
  position: z.int().positive(),
  title: z.string(),
  url: z.url(),
  snippet: z.string(),
});

export const SearchEnvelope = z.strictObject({ results: z.array(SearchResult) });

export const NotFoundBody = z.object({ error: z.enum(['not_found', 'unresolvable_id']) });

export type CompanyEnvelope = z.infer<typeof CompanyEnvelope>;
export type PersonEnvelope = z.infer<typeof PersonEnvelope>;
export type SearchResult = z.infer<typeof SearchResult>;
export type SearchEnvelope = z.infer<typeof SearchEnvelope>;
export type NotFoundBody = z.infer<typeof NotFoundBody>;
