import { ApiError, type ErrorCode } from '../../contracts/errors';
import { contentHash } from '../../contracts/content-hash';
import { newEvent, streams, type Operation } from '../../contracts/events';
import type { SqlExecutor } from '../eventstore/sql';
import type { Ledger } from '../ledger/ledger';
import { chargeForOutcome, refundOwed, successPrice } from '../ledger/pricing';
import { aliases, companyAlias, companyAliases, entities, normalizeQuery, personAlias, personAliases } from './aliases';
import { ageSeconds, cacheDecision, type CacheDecision } from './freshness';
import { parseDomain, type CompanyReference, type PersonReference } from './references';
import type { Source, SourceResult } from './source/source';

/** Who is asking, and the billing state of this one request (read by the error renderer too). */
export interface CallContext {
  requestId: string;
  workspaceId: string;
  keyId: string;
  /** Credits this request has finally cost so far. */
  charged: number;
  /** Workspace balance after this request, once known. */
  balance: number | null;
}

export interface LookupAnswer {
  data: Record<string, unknown>;
  contentHash: string;
  cache: { status: CacheDecision; age_seconds: number; fetched_at: string };
  resolved?: { domain: string; confirmed: boolean };
}

interface CachedRow {
  entity: string | null;
  code: ErrorCode | null;
  reason: string | null;
  alias_fetched_at: Date | string;
  data: Record<string, unknown> | null;
  content_hash: string | null;
  fetched_at: Date | string | null;
}

type Fetched =
  | { kind: 'found'; entity: string; entityKind: 'company' | 'person' | 'search'; stream: string; data: Record<string, unknown>; aliases: string[] }
  | { kind: 'not_found'; code: 'not_found' | 'unresolvable_id' }
  | { kind: 'failure'; code: ErrorCode; retryAfterSeconds?: number; message?: string };

/** One lookup operation, described for the shared cache-charge-fetch-settle flow. */
interface LookupPlan {
  operation: Operation;
  alias: string;
  kind: 'company' | 'person' | 'search';
  notFoundReason: string;
  fetch(): Promise<Fetched>;
}

export class LookupService {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly ledger: Ledger,
    private readonly source: Source,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** References arrive parsed: refusing a malformed one is the HTTP layer's job, before any charge. */
  async company(ctx: CallContext, ref: CompanyReference, maxAge: number): Promise<LookupAnswer> {
    const alias = companyAlias(ref);
    return this.run(ctx, maxAge, {
      operation: 'company',
      alias,
      kind: 'company',
      notFoundReason: ref.kind === 'id' ? 'no_public_page' : 'no_company',
      fetch: async () => companyFetched(await (ref.kind === 'slug' ? this.source.companyBySlug(ref.slug) : this.source.companyById(ref.id)), alias),
    });
  }

  /** `domain` is already the registrable domain (see parseDomain). */
  async domain(ctx: CallContext, domain: string, maxAge: number): Promise<LookupAnswer> {
    const alias = aliases.domain(domain);
    const answer = await this.run(ctx, maxAge, {
      operation: 'domain',
      alias,
      kind: 'company',
      notFoundReason: 'no_company_for_domain',
      fetch: async () => companyFetched(await this.source.companyByDomain(domain), alias),
    });
    const website = typeof answer.data.website === 'string' ? answer.data.website : '';
    const websiteDomain = website ? parseDomain(website) : { ok: false as const };
    return { ...answer, resolved: { domain, confirmed: websiteDomain.ok && websiteDomain.domain === domain } };
  }

  async person(ctx: CallContext, ref: PersonReference, maxAge: number): Promise<LookupAnswer> {
    const alias = personAlias(ref);
    return this.run(ctx, maxAge, {
      operation: ref.kind === 'url' ? 'person_url' : 'person_name',
      alias,
      kind: 'person',
      notFoundReason: ref.kind === 'url' ? 'no_profile_at_url' : 'no_profile_for_name',
      fetch: async () => {
        const result = await (ref.kind === 'url' ? this.source.personById(ref.publicIdentifier) : this.source.personByName(ref.name));
        return toFetched(result, (found) => ({
          entity: entities.person(found.aliases.publicIdentifier),
          entityKind: 'person',
          stream: streams.person(found.aliases.publicIdentifier.toLowerCase()),
          aliases: personAliases(found.aliases.publicIdentifier, alias),
        }));
      },
    });
  }

  async search(ctx: CallContext, query: string, limit: number, maxAge: number): Promise<LookupAnswer> {
    const normalized = normalizeQuery(query);
    const alias = aliases.search(normalized, limit);
    return this.run(ctx, maxAge, {
      operation: 'search',
      alias,
      kind: 'search',
      notFoundReason: 'no_results',
      fetch: async () => {
        const result = await this.source.search(query, limit);
        if (result.kind !== 'found') return toFetched(result, () => { throw new Error('unreachable'); });
        return {
          kind: 'found',
          entity: entities.search(normalized, limit),
          entityKind: 'search',
          stream: `search-${limit}-${normalized}`,
          data: { query, results: result.data.results },
          aliases: [alias],
        };
      },
    });
  }

  /** Free, never the profile itself: what the cache holds for one reference. */
  async cacheEntry(alias: string) {
    const row = await this.cached(alias);
    if (!row) return { cached: false, found: false, fetched_at: null, age_seconds: null, content_hash: null };
    const fetchedAt = new Date(row.entity ? row.fetched_at! : row.alias_fetched_at);
    return {
      cached: true,
      found: row.entity !== null,
      fetched_at: fetchedAt.toISOString(),
      age_seconds: ageSeconds(fetchedAt, this.clock()),
      content_hash: row.entity ? row.content_hash : null,
    };
  }

  /** Entry counts by kind: profiles and cached not-founds, domain resolutions, search pages. */
  async cacheStats() {
    const { rows } = await this.sql.query<{ company: number; person: number; domain: number; search: number }>(
      `SELECT
         count(*) FILTER (WHERE alias LIKE 'company:%' AND entity IS NULL)::int
           + (SELECT count(*) FROM cache_entities WHERE kind = 'company')::int AS company,
         count(*) FILTER (WHERE alias LIKE 'person:%' AND entity IS NULL)::int
           + (SELECT count(*) FROM cache_entities WHERE kind = 'person')::int AS person,
         count(*) FILTER (WHERE alias LIKE 'domain:%')::int AS domain,
         (SELECT count(*) FROM cache_entities WHERE kind = 'search')::int AS search
       FROM cache_aliases`,
    );
    const r = rows[0]!;
    return { entries: r.company + r.person + r.domain + r.search, company: r.company, domain: r.domain, person: r.person, search: r.search };
  }

  private async cached(alias: string): Promise<CachedRow | undefined> {
    const { rows } = await this.sql.query<CachedRow>(
      `SELECT a.entity, a.code, a.reason, a.fetched_at AS alias_fetched_at, e.data, e.content_hash, e.fetched_at
         FROM cache_aliases a LEFT JOIN cache_entities e ON e.entity = a.entity
        WHERE a.alias = $1`,
      [alias],
    );
    return rows[0];
  }

  /**
   * The one flow of every lookup: cache decision, charge (balance checked atomically), live fetch
   * when needed, then settle: keep the charge, lower it to the not-found price, or refund it.
   */
  private async run(ctx: CallContext, maxAge: number, plan: LookupPlan): Promise<LookupAnswer> {
    const now = this.clock();
    const row = await this.cached(plan.alias);
    const cachedAt = row ? new Date(row.entity ? row.fetched_at! : row.alias_fetched_at) : undefined;
    const status = cacheDecision(cachedAt && { fetchedAt: cachedAt }, maxAge, now);
    const base = { workspaceId: ctx.workspaceId, requestId: ctx.requestId, keyId: ctx.keyId, operation: plan.operation };

    if (status === 'HIT' && row && cachedAt) {
      const cache = { status, age_seconds: ageSeconds(cachedAt, now), fetched_at: cachedAt.toISOString() };
      if (row.entity === null) {
        // A cached not-found is free.
        await this.ledger.recordUncharged({ ...base, completed: { outcome: 'not_found', cache_status: 'HIT', credits_charged: 0, error_code: row.code } });
        ctx.balance = await this.ledger.balance(ctx.workspaceId);
        throw new ApiError(row.code ?? 'not_found', { reason: row.reason ?? plan.notFoundReason });
      }
      const price = successPrice(plan.operation);
      const charged = await this.ledger.charge({ ...base, credits: price, completed: { outcome: 'success', cache_status: 'HIT', credits_charged: price, error_code: null } });
      if (charged.kind === 'insufficient_credits') {
        ctx.balance = charged.balance;
        throw new ApiError('insufficient_credits');
      }
      ctx.charged = price;
      ctx.balance = charged.balanceAfter;
      return { data: row.data!, contentHash: row.content_hash!, cache };
    }

    const price = successPrice(plan.operation);
    const charged = await this.ledger.charge({ ...base, credits: price });
    if (charged.kind === 'insufficient_credits') {
      ctx.balance = charged.balance;
      throw new ApiError('insufficient_credits');
    }
    ctx.charged = price;
    ctx.balance = charged.balanceAfter;

    let fetched: Fetched;
    try {
      fetched = await plan.fetch();
    } catch (err) {
      fetched = { kind: 'failure', code: 'internal_error', message: err instanceof Error ? err.message : String(err) };
    }
    const fetchedAt = this.clock();

    if (fetched.kind === 'found') {
      const hash = contentHash(fetched.data);
      const settled = await this.ledger.settle({
        ...base,
        entityEvents: [{
          stream: fetched.stream,
          event: newEvent('ProfileFetched', { entity: fetched.entity, kind: fetched.entityKind, data: fetched.data, content_hash: hash, fetched_at: fetchedAt.toISOString(), aliases: fetched.aliases }, ctx.requestId),
        }],
        completed: { outcome: 'success', cache_status: status, credits_charged: price, error_code: null },
      });
      ctx.balance = settled.balance;
      return { data: fetched.data, contentHash: hash, cache: { status, age_seconds: 0, fetched_at: fetchedAt.toISOString() } };
    }

    if (fetched.kind === 'not_found') {
      const reason = fetched.code === 'unresolvable_id' ? 'no_public_page' : plan.notFoundReason;
      const cost = chargeForOutcome(plan.operation, 'not_found', false);
      const settled = await this.ledger.settle({
        ...base,
        entityEvents: [{
          stream: streams.notFound(plan.alias),
          event: newEvent('ProfileNotFound', { kind: plan.kind === 'person' ? 'person' : 'company', alias: plan.alias, code: fetched.code, reason, fetched_at: fetchedAt.toISOString() }, ctx.requestId),
        }],
        refund: { owed: refundOwed(price, 'not_found', plan.operation), cause: 'not_found_price' },
        completed: { outcome: 'not_found', cache_status: status, credits_charged: cost, error_code: fetched.code },
      });
      ctx.charged = price - settled.refunded;
      ctx.balance = settled.balance;
      throw new ApiError(fetched.code, { reason });
    }

    const settled = await this.ledger.settle({
      ...base,
      refund: { owed: refundOwed(price, 'failure', plan.operation), cause: fetched.code },
      completed: { outcome: 'error', cache_status: status, credits_charged: 0, error_code: fetched.code },
    });
    ctx.charged = price - settled.refunded;
    ctx.balance = settled.balance;
    throw new ApiError(fetched.code, { retryAfterSeconds: fetched.retryAfterSeconds, message: fetched.message });
  }
}

function toFetched<T extends object, A>(
  result: SourceResult<T, A>,
  describe: (found: { data: T; aliases: A }) => { entity: string; entityKind: 'company' | 'person' | 'search'; stream: string; aliases: string[] },
): Fetched {
  switch (result.kind) {
    case 'found':
      return { kind: 'found', data: result.data as Record<string, unknown>, ...describe(result) };
    case 'not_found':
      return { kind: 'not_found', code: 'not_found' };
    case 'unresolvable_id':
      return { kind: 'not_found', code: 'unresolvable_id' };
    case 'failure':
      // The source's own wording stays in our logs; callers get the catalogue's message.
      return { kind: 'failure', code: result.code, retryAfterSeconds: result.retryAfterSeconds };
  }
}

function companyFetched(result: Awaited<ReturnType<Source['companyBySlug']>>, asked: string): Fetched {
  return toFetched(result, (found) => ({
    entity: entities.company(found.aliases.id),
    entityKind: 'company',
    stream: streams.company(found.aliases.id),
    aliases: companyAliases(found.aliases, asked),
  }));
}
