import fp from 'fastify-plugin';
import { scrape } from '../../metrics/metrics';
import { DEPS_PLUGIN } from '../../http/deps-plugin';
import { route } from '../../http/route';

/**
 * GET /metrics on the main port when METRICS_PORT is unset. An operator's endpoint, in no OpenAPI
 * document (its row is internal): admitted as the admin API is, so it takes the admin token
 * (Prometheus: `authorization: {credentials_file: ...}`) and no per-IP token, and it is never cached. With METRICS_PORT set it is served there only, without a token
 * (services/metrics/metrics-server.ts), and not here.
 */
export const metricsRoutes = fp(
  async (app) => {
    if (app.deps.config.metricsPort !== undefined) return;
    route(app, 'metrics', async ({ reply }) => {
      const { contentType, body } = await scrape();
      return reply.type(contentType).send(body);
    });
  },
  { name: 'routes-metrics', dependencies: [DEPS_PLUGIN] },
);
