import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../../../contracts/errors';
import {
  CreditsGrantRequest,
  KeyCreateRequest,
  LedgerQuery,
  UsageQuery,
  WorkspaceCreateRequest,
  WorkspacePatchRequest,
} from '../../../contracts/http';
import { parseValue } from '../../../contracts/validation';
import { UnknownKeyError, UnknownWorkspaceError } from '../../ledger/ledger';
import { audit } from '../../projections/audit';
import { jsonBody, type AppDeps } from '../app';

/** Operators and the console: bearer ADMIN_TOKEN, on no rate-limit bucket. */
export function registerAdminRoutes(app: FastifyInstance, deps: AppDeps) {
  const { ledger } = deps;
  const expected = Buffer.from(deps.config.adminToken);
  const config = { area: 'admin' as const };

  app.register(async (admin) => {
    admin.addHook('onRequest', async (req) => {
      const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
      const given = Buffer.from(m?.[1] ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new ApiError('unauthorized', { message: 'The admin token is missing or wrong.' });
      }
    });
    admin.setErrorHandler((error, _req, _reply) => {
      if (error instanceof UnknownWorkspaceError || error instanceof UnknownKeyError) {
        throw new ApiError('not_found', { message: error.message, reason: error instanceof UnknownKeyError ? 'no_key' : 'no_workspace' });
      }
      throw error;
    });

    admin.post('/admin/v1/workspaces', { config }, async (req, reply) => {
      const body = jsonBody(req, WorkspaceCreateRequest);
      const ws = await ledger.createWorkspace({ name: body.name, credits: body.credits, maxConcurrency: body.max_concurrency });
      return reply.status(201).send({ id: ws.id, name: ws.name, balance: ws.balance, max_concurrency: ws.max_concurrency });
    });

    admin.get<{ Params: { id: string } }>('/admin/v1/workspaces/:id', { config }, async (req) => {
      const ws = await ledger.getWorkspace(req.params.id);
      if (!ws) throw new UnknownWorkspaceError(req.params.id);
      return ws;
    });

    admin.patch<{ Params: { id: string } }>('/admin/v1/workspaces/:id', { config }, async (req) => {
      const body = jsonBody(req, WorkspacePatchRequest);
      const workspace = await ledger.changeLimits(req.params.id, body.max_concurrency);
      deps.authenticator.forget(req.params.id);
      return workspace;
    });

    admin.post<{ Params: { id: string } }>('/admin/v1/workspaces/:id/credits', { config }, async (req, reply) => {
      const body = jsonBody(req, CreditsGrantRequest);
      return reply.status(201).send(await ledger.grantCredits(req.params.id, body.amount, body.reason));
    });

    admin.post<{ Params: { id: string } }>('/admin/v1/workspaces/:id/keys', { config }, async (req, reply) => {
      const body = jsonBody(req, KeyCreateRequest);
      return reply.status(201).send(await ledger.createKey(req.params.id, { name: body.name, rateLimitPerMinute: body.rate_limit_per_minute }));
    });

    admin.get<{ Params: { id: string } }>('/admin/v1/workspaces/:id/keys', { config }, async (req) => ({ data: await ledger.listKeys(req.params.id) }));

    admin.post<{ Params: { id: string } }>('/admin/v1/keys/:id/revoke', { config }, async (req) => {
      const revoked = await ledger.revokeKey(req.params.id);
      await deps.authenticator.revoked(req.params.id);
      return revoked;
    });

    admin.get<{ Params: { id: string } }>('/admin/v1/workspaces/:id/usage', { config }, async (req) => {
      const q = query(req, UsageQuery);
      return { data: await ledger.usage(req.params.id, { keyId: q.key_id, from: q.from, to: q.to }) };
    });

    admin.get<{ Params: { id: string } }>('/admin/v1/workspaces/:id/ledger', { config }, async (req) => {
      const q = query(req, LedgerQuery);
      return ledger.ledgerEntries(req.params.id, { requestId: q.request_id, after: q.after, limit: q.limit });
    });

    admin.post('/admin/v1/audit', { config }, async () => audit(deps.store));

    admin.get('/admin/v1/relay', { config }, async () => (deps.relayLag ? { enabled: true, ...((await deps.relayLag()) as object) } : { enabled: false }));
  });
}

function query<T>(req: FastifyRequest, schema: z.ZodType<T>): T {
  const parsed = parseValue(schema, { ...(req.query as object) });
  if (!parsed.ok) throw new ApiError('invalid_request', { details: parsed.details });
  return parsed.value;
}
