import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contracts/errors';
import { aliases, companyAlias, personAlias } from '../../lookup/aliases';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../../lookup/references';
import { route } from '../../http/route';
import { DEPS_PLUGIN } from '../../http/deps-plugin';

/** The Cache area: free, authenticated, rate limited, never the profile itself. */
export const cacheRoutes = fp(
  async (app) => {
    const { deps } = app;
    const answer = async (req: FastifyRequest, reply: FastifyReply, data: unknown) => {
      const remaining = (await deps.readModels.balance(req.apiKey!.workspaceId)) ?? 0;
      reply.header('X-Credits-Charged', 0).header('X-Credits-Remaining', remaining);
      return { data, meta: { request_id: req.id, credits_charged: 0, credits_remaining: remaining } };
    };

    route(app, 'cacheCompany', async ({ req, reply, body }) => {
      const parsed = parseCompanyReference(body.url);
      if (!parsed.ok) throw new ApiError('invalid_company_reference');
      return answer(req, reply, await deps.lookups.cacheEntry(companyAlias(parsed.ref), req.apiKey!.mode));
    });

    route(app, 'cacheDomain', async ({ req, reply, body }) => {
      const parsed = parseDomain(body.domain);
      if (!parsed.ok) throw new ApiError('invalid_domain');
      return answer(req, reply, await deps.lookups.cacheEntry(aliases.domain(parsed.domain), req.apiKey!.mode));
    });

    route(app, 'cachePerson', async ({ req, reply, body }) => {
      const parsed = parsePersonReference(body.url);
      if (!parsed.ok) throw new ApiError('invalid_person_reference');
      return answer(req, reply, await deps.lookups.cacheEntry(personAlias(parsed.ref), req.apiKey!.mode));
    });

    route(app, 'cacheStats', async ({ req, reply }) => answer(req, reply, await deps.lookups.cacheStats(req.apiKey!.mode)));
  },
  { name: 'routes-cache', dependencies: [DEPS_PLUGIN] },
);
