import type { CompanyProfile, PersonProfile } from '../../../contracts/profiles';
import type { SearchResult } from './wire';

/**
 * The source port: where live fetches go. One adapter (HTTP) serves both the built-in sandbox
 * network and any SOURCE_URL, so the live path is always the same code.
 */

export type SourceFailureCode = 'upstream_error' | 'parse_error' | 'blocked' | 'source_rate_limited' | 'timeout';

/** Facts the cache needs to answer every input form of a company from one entry. */
export type CompanyAliases = {
  id: string;
  /** Current slug first, then earlier ones. */
  slugs: string[];
  /** Registrable domains the company answers for, its website's first. */
  domains: string[];
};

export type PersonAliases = { publicIdentifier: string };

export type SearchData = { results: SearchResult[] };

export type SourceFailure = {
  kind: 'failure';
  code: SourceFailureCode;
  /** Whole seconds, at least 1; set for blocked, source_rate_limited and timeout. */
  retryAfterSeconds?: number;
  message: string;
};

export type SourceResult<T, A> =
  | { kind: 'found'; data: T; aliases: A }
  | { kind: 'not_found' }
  | { kind: 'unresolvable_id' }
  | SourceFailure;

export type CompanyResult = SourceResult<CompanyProfile, CompanyAliases>;
export type PersonResult = SourceResult<PersonProfile, PersonAliases>;
export type SearchOutcome = SourceResult<SearchData, null>;

export interface Source {
  /** By current or earlier slug; the answer carries the current slug. */
  companyBySlug(slug: string): Promise<CompanyResult>;
  /** By numeric id; an id without a public page is `unresolvable_id`. */
  companyById(id: string): Promise<CompanyResult>;
  /** By registrable domain (already reduced, e.g. `acme.co.uk`). */
  companyByDomain(domain: string): Promise<CompanyResult>;
  personById(publicIdentifier: string): Promise<PersonResult>;
  personByName(name: string): Promise<PersonResult>;
  /** `limit` from 1 to SEARCH_LIMIT_MAX. */
  search(query: string, limit: number): Promise<SearchOutcome>;
}

export type { SearchResult };
