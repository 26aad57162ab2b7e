import type { CompanyReference, PersonReference } from './references';

/**
 * Keys of the cache index. Every input form of an entity becomes one alias that points to the
 * entity; a not-found answer is an alias with no entity.
 */
export const aliases = {
  companySlug: (slug: string) => `company:slug:${slug.toLowerCase()}`,
  companyId: (id: string) => `company:id:${id.replace(/^0+(?=\d)/, '')}`,
  domain: (domain: string) => `domain:${domain.toLowerCase()}`,
  personId: (publicIdentifier: string) => `person:id:${publicIdentifier.toLowerCase()}`,
  personName: (normalizedName: string) => `person:name:${normalizedName}`,
  search: (normalizedQuery: string, limit: number) => `search:${limit}:${normalizedQuery}`,
};

export const entities = {
  company: (id: string) => `company:${id}`,
  person: (publicIdentifier: string) => `person:${publicIdentifier.toLowerCase()}`,
  search: (normalizedQuery: string, limit: number) => `search:${limit}:${normalizedQuery}`,
};

export function companyAlias(ref: CompanyReference): string {
  return ref.kind === 'slug' ? aliases.companySlug(ref.slug) : aliases.companyId(ref.id);
}

export function personAlias(ref: PersonReference): string {
  return ref.kind === 'url' ? aliases.personId(ref.publicIdentifier) : aliases.personName(ref.normalizedName);
}

/** Every alias a fetched company answers to, sorted so concurrent writers lock rows in one order. */
export function companyAliases(facts: { id: string; slugs: string[]; domains: string[] }, asked: string): string[] {
  return [
    ...new Set([asked, aliases.companyId(facts.id), ...facts.slugs.map(aliases.companySlug), ...facts.domains.map(aliases.domain)]),
  ].sort();
}

export function personAliases(publicIdentifier: string, asked: string): string[] {
  return [...new Set([asked, aliases.personId(publicIdentifier)])].sort();
}

export const normalizeQuery = (q: string) => q.trim().replace(/\s+/g, ' ').toLowerCase();
