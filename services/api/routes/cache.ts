import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { CompanyCacheRequest, DomainCacheRequest, PersonCacheRequest } from '../../../contracts/http';
import { aliases, companyAlias, personAlias } from '../../lookup/aliases';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../../lookup/references';
import { jsonBody, type AppDeps } from '../app';

/** The Cache area: free, authenticated, rate limited, never the profile itself. */
export function registerCacheRoutes(app: FastifyInstance, deps: AppDeps) {
  const config = { area: 'cache' as const };
  const answer = async (req: FastifyRequest, reply: FastifyReply, data: unknown) => {
    const remaining = (await deps.ledger.balance(req.apiKey!.workspaceId)) ?? 0;
    reply.header('X-Credits-Charged', 0).header('X-Credits-Remaining', remaining);
    return { data, meta: { request_id: req.id, credits_charged: 0, credits_remaining: remaining } };
  };

  app.post('/v1/cache/company', { config }, async (req, reply) => {
    const parsed = parseCompanyReference(jsonBody(req, CompanyCacheRequest).url);
    if (!parsed.ok) throw new ApiError('invalid_company_reference');
    return answer(req, reply, await deps.lookups.cacheEntry(companyAlias(parsed.ref)));
  });

  app.post('/v1/cache/domain', { config }, async (req, reply) => {
    const parsed = parseDomain(jsonBody(req, DomainCacheRequest).domain);
    if (!parsed.ok) throw new ApiError('invalid_domain');
    return answer(req, reply, await deps.lookups.cacheEntry(aliases.domain(parsed.domain)));
  });

  app.post('/v1/cache/person', { config }, async (req, reply) => {
    const parsed = parsePersonReference(jsonBody(req, PersonCacheRequest).url);
    if (!parsed.ok) throw new ApiError('invalid_person_reference');
    return answer(req, reply, await deps.lookups.cacheEntry(personAlias(parsed.ref)));
  });

  app.get('/v1/cache/stats', { config }, async (req, reply) => answer(req, reply, await deps.lookups.cacheStats()));
}
