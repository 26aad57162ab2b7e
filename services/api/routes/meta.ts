import fp from 'fastify-plugin';
import { buildAsyncApiDocument } from '../../../contracts/asyncapi';
import { errorCatalogueList, renderErrorsDocHtml } from '../../../contracts/errors';
import { API_VERSION, buildAdminOpenApiDocument, buildOpenApiDocument, renderDocsIndexHtml, type OpenApiOptions } from '../../../contracts/openapi';
import { InstanceLifecycle, readinessOf } from '../../health/readiness';
import { notFoundPricesText, pricingTable } from '../../ledger/pricing';
import { route } from '../../http/route';
import { sendStaticAsset } from '../../http/static-assets';
import { DEPS_PLUGIN } from '../../http/deps-plugin';
import { docsUrlFor, publicBaseUrl } from '../../http/public-url';
import type { FastifyRequest } from 'fastify';
import { endpoint } from '../../../contracts/endpoints';
import { SANDBOX_TRIGGER_ERRORS } from '../../sandbox/fixed';
import { docsAssets, docsAssetUrl, newStyleNonce, referenceCsp, renderReferenceHtml } from '../docs-web/assets';

/**
 * The HTML pages are static text and links: they load nothing, run nothing, and are never framed
 * (no clickjacking) nor leak the page address to the sites they link to.
 */
const DOCS_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * The reference runs scripts from this host only (Redoc's bundle, which fetches the OpenAPI
 * document from this host); Redoc's style elements carry the nonce of the answer (referenceCsp),
 * so no inline style needs 'unsafe-inline'. A page with a fresh nonce each time is never stored.
 */
const referencePageHeaders = (nonce: string) => ({ ...DOCS_PAGE_HEADERS, 'content-security-policy': referenceCsp(nonce), 'cache-control': 'no-store' });

/** Distinct base URLs whose OpenAPI document is kept (only a trusted proxy can make more than one). */
const OPENAPI_CACHE_ENTRIES = 16;

/** The Meta area (public, unauthenticated, on the per-IP bucket), and the admin API's own OpenAPI document. */
export const metaRoutes = fp(
  async (app) => {
    const { deps } = app;
    // Built per base URL, not once from whichever request came first: each caller sees its own.
    const servedDocument = (build: (opts: OpenApiOptions) => Record<string, unknown>) => {
      const byBase = new Map<string, Record<string, unknown>>();
      return (req: FastifyRequest) => {
        const serverUrl = publicBaseUrl(deps.config, req);
        const docsUrl = docsUrlFor(deps.config, req);
        const cacheKey = `${serverUrl} ${docsUrl}`;
        let document = byBase.get(cacheKey);
        if (!document) {
          if (byBase.size >= OPENAPI_CACHE_ENTRIES) byBase.clear();
          document = build({ serverUrl, docsUrl });
          byBase.set(cacheKey, document);
        }
        return document;
      };
    };

    route(app, 'health', async ({ reply }) => {
      const database = await deps.store.sql.query('SELECT 1').then(() => 'ok' as const, () => 'fail' as const);
      const status = database === 'ok' ? 'ok' : 'degraded';
      return reply.status(status === 'ok' ? 200 : 503).send({ status, version: API_VERSION, checks: { database } });
    });

    // Answered from memory: no dependency is asked, so a probe never waits on one (see readiness.ts).
    const lifecycle = deps.lifecycle ?? InstanceLifecycle.started();
    route(app, 'ready', async ({ reply }) => {
      const { status, checks, failures } = readinessOf(lifecycle.current);
      return reply.status(status === 'ok' ? 200 : 503).send({ status, version: API_VERSION, checks, failures });
    });

    // The price table and the docs index are the same for every caller: built once, here.
    const pricing = pricingTable();
    route(app, 'pricing', async () => pricing);

    route(app, 'errors', async ({ req }) => errorCatalogueList(docsUrlFor(deps.config, req)));

    const openApi = servedDocument(buildOpenApiDocument);
    route(app, 'openapi', async ({ req }) => openApi(req));
    const adminOpenApi = servedDocument(buildAdminOpenApiDocument);
    route(app, 'adminOpenApi', async ({ req }) => adminOpenApi(req));

    // The Kafka topics (docs/events.md): the same for every caller, so built once.
    let asyncApiDocument: Record<string, unknown> | undefined;
    route(app, 'asyncapi', async () => (asyncApiDocument ??= buildAsyncApiDocument()));

    const docsPage = { stylesheetHref: docsAssetUrl('docs.css'), sandboxTriggers: SANDBOX_TRIGGER_ERRORS };
    const docsIndexHtml = renderDocsIndexHtml(docsPage);
    route(app, 'docs', async ({ reply }) => reply.headers(DOCS_PAGE_HEADERS).send(docsIndexHtml));

    // Its links carry the caller's docs URL: only the prices' sentence is built once.
    const notFoundPrices = notFoundPricesText();
    route(app, 'docsErrors', async ({ req, reply }) =>
      reply.headers(DOCS_PAGE_HEADERS).send(renderErrorsDocHtml(docsUrlFor(deps.config, req), notFoundPrices, docsPage.stylesheetHref)),
    );

    const openApiPath = endpoint('openapi').path;
    route(app, 'docsReference', async ({ reply }) => {
      const nonce = newStyleNonce();
      return reply.headers(referencePageHeaders(nonce)).send(renderReferenceHtml(openApiPath, nonce));
    });

    route(app, 'docsAsset', async ({ req, reply }) => {
      return sendStaticAsset(req, reply, docsAssets());
    });
  },
  { name: 'routes-meta', dependencies: [DEPS_PLUGIN] },
);
