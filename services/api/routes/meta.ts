import type { FastifyInstance } from 'fastify';
import { errorCatalogueList, renderErrorsDocHtml } from '../../../contracts/errors';
import { API_VERSION, buildOpenApiDocument, renderDocsIndexHtml } from '../../../contracts/openapi';
import { pricingTable } from '../../ledger/pricing';
import { docsUrlFor, type AppDeps } from '../app';

/** The Meta area: public, unauthenticated, on the per-IP bucket. */
export function registerMetaRoutes(app: FastifyInstance, deps: AppDeps) {
  const config = { area: 'meta' as const };
  let openApi: Record<string, unknown> | undefined;

  app.get('/v1/health', { config }, async (_req, reply) => {
    const database = await deps.store.sql.query('SELECT 1').then(() => 'ok' as const, () => 'fail' as const);
    const status = database === 'ok' ? 'ok' : 'degraded';
    return reply.status(status === 'ok' ? 200 : 503).send({ status, version: API_VERSION, checks: { database } });
  });

  app.get('/v1/pricing', { config }, async () => pricingTable());

  app.get('/v1/errors', { config }, async (req) => errorCatalogueList(docsUrlFor(deps.config, req)));

  app.get('/v1/openapi.json', { config }, async (req) => {
    openApi ??= buildOpenApiDocument({ serverUrl: `${req.protocol}://${req.headers.host ?? `${deps.config.host}:${deps.config.port}`}` });
    return openApi;
  });

  app.get('/docs', { config }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(renderDocsIndexHtml()));

  app.get('/docs/errors', { config }, async (req, reply) =>
    reply.type('text/html; charset=utf-8').send(renderErrorsDocHtml(docsUrlFor(deps.config, req))),
  );
}
