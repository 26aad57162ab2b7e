import { ApiError, type Billing } from '../../contracts/errors';
import { inCanonicalOrder } from '../../contracts/content-hash';
import { streams, type KeyMode, type RefundedErrorCode } from '../../contracts/events';
import type { OnError } from '../../contracts/http';
import { sourceForMode, usesCache } from '../common/key-mode';
import type { SqlExecutor } from '../eventstore/sql';
import { DatabaseUnavailableError } from '../eventstore/unavailable';
import type { ChargeCommand, ChargeResult, Ledger, SettleCommand, VoidCommand } from '../ledger/ledger';
import { recordFailureAfterCharge } from '../metrics/metrics';
import { aliases, companyAlias, companyAliases, entities, normalizeQuery, personAlias, personAliases } from './aliases';
import { decideFailureAfterCharge, decideFetched, decideFromCache, decideStale, type CachedEntry, type StaleVerdict, type FailureSettlement, type FetchVerdict, type LookupAnswer, type LookupAsked, type LookupErrorAnswer, type NotFoundCode, type SourceOutcome } from './decider';
import type { CacheIndexMemory } from './cache-index-memory';
import { ageSeconds, cacheDecision } from './freshness';
import { parseDomain, type CompanyReference, type PersonReference } from './references';
import type { Source, SourceResult } from './source/source';

export type { LookupAnswer };

/** The call a charge belongs to. */
type CallRef = Pick<SettleCommand, 'workspaceId' | 'requestId' | 'keyId' | 'operation'>;

/** Who is asking: the call's request id, its key's workspace, and the key's mode. */
export interface Caller {
  requestId: string;
  workspaceId: string;
  keyId: string;
  /** `test`: fetched from the sandbox network only, never charged, never through the cache (key-mode.ts). */
  mode: KeyMode;
  /** Set for an item of a batch call (services/batch): its charge waits for its turn. */
  turn?: ChargeTurn;
}

/**
 * The turn of one item of a batch: the items are charged in their order (the ledger's writer
 * applies charges in the order they are submitted), whatever order their cache reads finish in.
 */
export interface ChargeTurn {
  /**
   * Resolves once the batch knows the item holds a token of the key's bucket; throws the item's
   * refusal otherwise. The item only reads (the cache) before it: its first write waits here.
   */
  admitted(): Promise<void>;
  /**
   * Waits for the item's admission (admitted) and its turn; a live fetch then takes its
   * concurrency slot in it. False: no slot to be had, the item is refused (429
   * `concurrency_limited`) before any charge.
   */
  begin(liveFetch: boolean): Promise<boolean>;
  /** The item's charge is submitted, or it needs none: the next item's turn may begin. */
  end(): void;
}

/** A lookup answered: the answer, what it cost and the balance after it. */
export interface LookupResult {
  answer: LookupAnswer;
  billing: { charged: number; balance: number };
  /** Answered with a stale copy (`on_error: "stale"`): the failure of the live fetch it stood in for. */
  staleBecause?: RefundedErrorCode;
}

interface CachedRow {
  entity: string | null;
  code: NotFoundCode | null;
  reason: string | null;
  alias_fetched_at: Date | string;
  data: Record<string, unknown> | null;
  content_hash: string | null;
  fetched_at: Date | string | null;
}

/** One lookup operation, described for the shared cache-charge-fetch-settle flow. */
interface LookupPlan extends LookupAsked {
  fetch(source: Source): Promise<SourceOutcome>;
}

/** How a call asked to be served: `max_age` and `on_error` of its body. */
interface Asking {
  maxAge: number;
  onError: OnError;
}

/**
 * The I/O around the lookup decider (decider.ts): cache read, ledger calls, the live fetch.
 * A failed lookup throws an ApiError that carries its billing; nothing is written back to the caller.
 */
export class LookupService {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly ledger: Ledger,
    private readonly source: Source,
    private readonly clock: () => Date = () => new Date(),
    /** The cache index kept in process (bounded, invalidated by every instance's writes). */
    private readonly memory?: CacheIndexMemory,
    /** Where test keys' calls fetch: the built-in sandbox network, whatever `source` is. */
    private readonly testSource?: Source,
  ) {}

  private sourceFor(mode: KeyMode): Source {
    if (sourceForMode(mode) === 'configured') return this.source;
    if (!this.testSource) throw new Error('a test key called, and no sandbox source is configured for test keys');
    return this.testSource;
  }

  /** References arrive parsed: refusing a malformed one is the HTTP layer's job, before any charge. */
  async company(caller: Caller, ref: CompanyReference, maxAge: number, onError?: OnError): Promise<LookupResult> {
    const alias = companyAlias(ref);
    return this.run(caller, { maxAge, onError }, {
      operation: 'company',
      alias,
      kind: 'company',
      notFoundReason: ref.kind === 'id' ? 'no_public_page' : 'no_company',
      fetch: async (source) => companyFetched(await (ref.kind === 'slug' ? source.companyBySlug(ref.slug) : source.companyById(ref.id)), alias),
    });
  }

  /** `domain` is already the registrable domain (see parseDomain). */
  async domain(caller: Caller, domain: string, maxAge: number, onError?: OnError): Promise<LookupResult> {
    const alias = aliases.domain(domain);
    const { answer, ...rest } = await this.run(caller, { maxAge, onError }, {
      operation: 'domain',
      alias,
      kind: 'company',
      notFoundReason: 'no_company_for_domain',
      fetch: async (source) => companyFetched(await source.companyByDomain(domain), alias),
    });
    const website = typeof answer.data.website === 'string' ? answer.data.website : '';
    const websiteDomain = website ? parseDomain(website) : { ok: false as const };
    return { answer: { ...answer, resolved: { domain, confirmed: websiteDomain.ok && websiteDomain.domain === domain } }, ...rest };
  }

  async person(caller: Caller, ref: PersonReference, maxAge: number, onError?: OnError): Promise<LookupResult> {
    const alias = personAlias(ref);
    return this.run(caller, { maxAge, onError }, {
      operation: ref.kind === 'url' ? 'person_url' : 'person_name',
      alias,
      kind: 'person',
      notFoundReason: ref.kind === 'url' ? 'no_profile_at_url' : 'no_profile_for_name',
      fetch: async (source) => {
        const result = await (ref.kind === 'url' ? source.personById(ref.publicIdentifier) : source.personByName(ref.name));
        return toFetched(result, (found) => ({
          entity: entities.person(found.aliases.publicIdentifier),
          entityKind: 'person',
          stream: streams.person(found.aliases.publicIdentifier.toLowerCase()),
          aliases: personAliases(found.aliases.publicIdentifier, alias),
        }));
      },
    });
  }

  async search(caller: Caller, query: string, limit: number, maxAge: number, onError?: OnError): Promise<LookupResult> {
    const normalized = normalizeQuery(query);
    const alias = aliases.search(normalized, limit);
    return this.run(caller, { maxAge, onError }, {
      operation: 'search',
      alias,
      kind: 'search',
      notFoundReason: 'no_results',
      fetch: async (source) => {
        const result = await source.search(query, limit);
        if (result.kind !== 'found') return toFetched(result, () => { throw new Error('unreachable'); });
        return {
          kind: 'found',
          entity: entities.search(normalized, limit),
          entityKind: 'search',
          stream: streams.search(limit, normalized),
          data: { query, results: result.data.results },
          aliases: [alias],
        };
      },
    });
  }

  /** Free, never the profile itself: what the cache holds for one reference. A test key has no cache to look at. */
  async cacheEntry(alias: string, mode: KeyMode = 'live') {
    const entry = usesCache(mode) ? await this.cached(alias) : undefined;
    if (!entry) return { cached: false, found: false, fetched_at: null, age_seconds: null, content_hash: null };
    return {
      cached: true,
      found: entry.kind === 'profile',
      fetched_at: entry.fetchedAt.toISOString(),
      age_seconds: ageSeconds(entry.fetchedAt, this.clock()),
      content_hash: entry.kind === 'profile' ? entry.contentHash : null,
    };
  }

  /** The profile the cache holds for a reference, with its entity (what a watch compares with); free. */
  async cachedProfile(alias: string): Promise<Extract<CachedEntry, { kind: 'profile' }> | undefined> {
    const entry = await this.cached(alias);
    return entry?.kind === 'profile' ? entry : undefined;
  }

  /** Entry counts by kind: profiles and cached not-founds, domain resolutions, search pages. */
  async cacheStats(mode: KeyMode = 'live') {
    // A test key has no cache: none of the live one's entries is its.
    if (!usesCache(mode)) return { entries: 0, company: 0, domain: 0, person: 0, search: 0 };
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

  private async cached(alias: string): Promise<CachedEntry | undefined> {
    const { rows } = await this.sql.query<CachedRow>(
      `SELECT a.entity, a.code, a.reason, a.fetched_at AS alias_fetched_at, e.data, e.content_hash, e.fetched_at
         FROM cache_aliases a LEFT JOIN cache_entities e ON e.entity = a.entity
        WHERE a.alias = $1`,
      [alias],
    );
    const row = rows[0];
    if (!row) return undefined;
    if (row.entity === null) return { kind: 'not_found', code: row.code, reason: row.reason, fetchedAt: new Date(row.alias_fetched_at) };
    // jsonb reordered the keys: back in the order the answer serialises (once per read, not per hit).
    return { kind: 'profile', entity: row.entity, data: inCanonicalOrder(row.data!), contentHash: row.content_hash!, fetchedAt: new Date(row.fetched_at!) };
  }

  /**
   * The one flow of every lookup: cache decision, charge (balance checked atomically), live fetch
   * when needed, then settle: keep the charge, lower it to the not-found price, or refund it.
   */
  private async run(caller: Caller, { maxAge, onError }: Asking, lookup: LookupPlan): Promise<LookupResult> {
    const plan = { ...lookup, mode: caller.mode };
    // Before any charge: a test call with no sandbox to go to is refused, not charged then refunded.
    const source = this.sourceFor(caller.mode);
    const base = { workspaceId: caller.workspaceId, requestId: caller.requestId, keyId: caller.keyId, operation: plan.operation, mode: caller.mode };
    // A test call never reads the live cache (nor writes it: the decider leaves out the entity events),
    // so it has no stale copy either.
    const cached = !usesCache(caller.mode)
      ? undefined
      : this.memory
        ? await this.memory.read(plan.alias, (entry) => cacheDecision(entry, maxAge, this.clock()) === 'HIT', (alias) => this.cached(alias))
        : await this.cached(plan.alias);
    const verdict = decideFromCache({ asked: plan, cached, maxAge, now: this.clock() });

    if (verdict.kind === 'cached_not_found') {
      caller.turn?.end();
      await caller.turn?.admitted();
      throw lookupError(verdict.error, { charged: 0, balance: await this.ledger.recordUncharged({ ...base, completed: verdict.completed }) });
    }

    if (caller.turn && !(await caller.turn.begin(verdict.kind === 'fetch'))) {
      caller.turn.end();
      throw new ApiError('concurrency_limited', { retryAfterSeconds: 1 });
    }
    // Submitted to the ledger's writer at once (before its first await): the turn can pass on.
    const charging = this.charge({ ...base, credits: verdict.charge, ...(verdict.kind === 'hit' ? { completed: verdict.completed } : {}) });
    caller.turn?.end();
    const charged = await charging;
    if (charged.kind === 'insufficient_credits') throw lookupError({ code: 'insufficient_credits' }, { charged: 0, balance: charged.balance });
    if (verdict.kind === 'hit') return { answer: verdict.answer, billing: { charged: verdict.charge, balance: charged.balanceAfter } };

    // From here the charge stands until settled. A failure that is no outage is refunded in this
    // same answer (Billing rule 3): the abandoned-charge sweeper is for crashed instances only.
    let settled: { balance: number; refunded: number };
    let fetched: FetchVerdict | StaleVerdict;
    let stale: StaleVerdict | null = null;
    try {
      const outcome = await plan.fetch(source).catch((err: unknown): SourceOutcome => ({ kind: 'failure', code: 'internal_error', message: err instanceof Error ? err.message : String(err) }));
      // Opt-in (`on_error: "stale"`): a failed fetch answered with the cached copy, if any.
      stale =
        outcome.kind === 'failure'
          ? decideStale({ asked: plan, onError, status: verdict.status, charged: verdict.charge, failure: outcome, cached, now: this.clock() })
          : null;
      fetched =
        stale ??
        decideFetched({ asked: plan, status: verdict.status, charged: verdict.charge, outcome, fetchedAt: this.clock(), requestId: caller.requestId });
      settled = await this.settle({ ...base, ...fetched.settlement });
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) throw err;
      const settlement = decideFailureAfterCharge({ asked: plan, status: verdict.status, charged: verdict.charge });
      throw await this.refundAfterFailure(base, settlement, { charged: verdict.charge, balance: charged.balanceAfter }, err);
    }
    const billing = { charged: verdict.charge - settled.refunded, balance: settled.balance };
    if ('error' in fetched) throw lookupError(fetched.error, billing);
    if (stale) return { answer: stale.answer, billing, staleBecause: stale.staleBecause };
    return { answer: fetched.answer, billing };
  }

  /**
   * A charged lookup failed on our side (a write refused for a reason other than an outage, a bug):
   * the charge goes back now (`decideFailureAfterCharge`) and the caller is told so,
   * `internal_error` with nothing charged. If even the refund fails, the caller is told the charge
   * stands (`asCharged`); the abandoned-charge sweeper refunds it later.
   */
  private async refundAfterFailure(call: CallRef, settlement: FailureSettlement, asCharged: Billing, failure: unknown): Promise<ApiError> {
    try {
      const refund = await this.settle({ ...call, ...settlement });
      recordFailureAfterCharge(call.operation, 'in_answer');
      return new ApiError('internal_error', { cause: failure, billing: { charged: asCharged.charged - refund.refunded, balance: refund.balance } });
    } catch (refundError) {
      // The database went away meanwhile: 503 with nothing charged, refunded once it answers (settle).
      if (refundError instanceof DatabaseUnavailableError) throw refundError;
      recordFailureAfterCharge(call.operation, 'failed');
      return new ApiError('internal_error', { cause: new AggregateError([failure, refundError], 'a charged lookup failed, and so did its refund'), billing: asCharged });
    }
  }

  /**
   * The database went away while the charge committed: it may stand. The caller is answered 503
   * with nothing charged, so it is refunded if it did commit, as soon as the database answers.
   */
  private async charge(cmd: ChargeCommand): Promise<ChargeResult> {
    try {
      return await this.ledger.charge(cmd);
    } catch (err) {
      if (err instanceof DatabaseUnavailableError && err.commitOutcomeUnknown) {
        this.ledger.voidChargeEventually(voidOf(cmd, cmd.completed?.cache_status ?? null));
      }
      throw err;
    }
  }

  /**
   * The outcome cannot be recorded while the database is away: the caller is answered 503 with
   * nothing charged (the error carries no billing), and the charge is refunded as soon as the
   * database answers (Billing rule 3), not a minute later by the sweeper.
   */
  private async settle(cmd: SettleCommand): Promise<{ balance: number; refunded: number }> {
    try {
      return await this.ledger.settle(cmd);
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) this.ledger.voidChargeEventually(voidOf(cmd, cmd.completed.cache_status));
      throw err;
    }
  }
}

function lookupError(answer: LookupErrorAnswer, billing: Billing): ApiError {
  const { code, ...options } = answer;
  return new ApiError(code, { ...options, billing });
}

function voidOf(cmd: ChargeCommand | SettleCommand, cacheStatus: VoidCommand['cacheStatus']): VoidCommand {
  return { workspaceId: cmd.workspaceId, requestId: cmd.requestId, keyId: cmd.keyId, operation: cmd.operation, mode: cmd.mode, cacheStatus };
}

function toFetched<T extends object, A>(
  result: SourceResult<T, A>,
  describe: (found: { data: T; aliases: A }) => { entity: string; entityKind: 'company' | 'person' | 'search'; stream: string; aliases: string[] },
): SourceOutcome {
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

function companyFetched(result: Awaited<ReturnType<Source['companyBySlug']>>, asked: string): SourceOutcome {
  return toFetched(result, (found) => ({
    entity: entities.company(found.aliases.id),
    entityKind: 'company',
    stream: streams.company(found.aliases.id),
    aliases: companyAliases(found.aliases, asked),
  }));
}
