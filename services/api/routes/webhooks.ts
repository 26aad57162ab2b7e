import fp from 'fastify-plugin';
import { ApiError } from '../../../contracts/errors';
import { WebhookStore } from '../../webhooks/webhook-store';
import { webhookUrlProblem } from '../../webhooks/webhook-url';
import { deleteWebhookEndpoint } from '../../watches/watch-service';
import { route } from '../../http/route';
import { DEPS_PLUGIN } from '../../http/deps-plugin';

/** Webhook endpoints of the key's workspace (docs/api.md "Webhooks"): free. */
export const webhookRoutes = fp(
  async (app) => {
    const { deps } = app;
    const webhooks = new WebhookStore(deps.store.sql);
    const allowed = deps.config.webhooks.allowedHosts;
    const checkUrl = (url: string | undefined) => {
      const problem = url === undefined ? null : webhookUrlProblem(url, allowed);
      if (problem) throw new ApiError('invalid_request', { reason: 'webhook_url_refused', details: [{ field: 'url', issue: 'invalid_type', message: `\`url\` ${problem}` }] });
    };
    const noEndpoint = () => new ApiError('not_found', { reason: 'no_webhook_endpoint', message: 'No such webhook endpoint in this workspace.' });
    const meta = (requestId: string) => ({ request_id: requestId });

    route(app, 'createWebhookEndpoint', async ({ req, body }) => {
      checkUrl(body.url);
      const created = await webhooks.create(req.apiKey!.workspaceId, body);
      req.log.info({ endpoint_id: created.id }, 'webhook endpoint registered');
      return { data: created, meta: meta(req.id) };
    });

    route(app, 'listWebhookEndpoints', async ({ req }) => ({ data: await webhooks.list(req.apiKey!.workspaceId), meta: meta(req.id) }));

    route(app, 'getWebhookEndpoint', async ({ req, params }) => {
      const endpoint = await webhooks.get(req.apiKey!.workspaceId, params.id);
      if (!endpoint) throw noEndpoint();
      return { data: endpoint, meta: meta(req.id) };
    });

    route(app, 'updateWebhookEndpoint', async ({ req, params, body }) => {
      checkUrl(body.url);
      const endpoint = await webhooks.update(req.apiKey!.workspaceId, params.id, body);
      if (!endpoint) throw noEndpoint();
      return { data: endpoint, meta: meta(req.id) };
    });

    route(app, 'deleteWebhookEndpoint', async ({ req, params }) => {
      const deleted = await deleteWebhookEndpoint(deps.store, req.apiKey!.workspaceId, params.id);
      if (!deleted) throw noEndpoint();
      req.log.info({ endpoint_id: params.id, deleted_watches: deleted.deletedWatches }, 'webhook endpoint deleted, and the watches delivering to it');
      return { data: { id: params.id, deleted: true as const, deleted_watches: deleted.deletedWatches }, meta: meta(req.id) };
    });

    route(app, 'rotateWebhookSecret', async ({ req, params }) => {
      const rotated = await webhooks.rotateSecret(req.apiKey!.workspaceId, params.id, deps.config.webhooks.secretOverlapMs);
      if (!rotated) throw noEndpoint();
      req.log.info({ endpoint_id: rotated.id, previous_secret_expires_at: rotated.previous_secret_expires_at }, 'webhook secret rotated');
      return { data: rotated, meta: meta(req.id) };
    });

    route(app, 'listWebhookDeliveries', async ({ req, params, query }) => {
      if (!(await webhooks.get(req.apiKey!.workspaceId, params.id))) throw noEndpoint();
      return { data: await webhooks.deliveries(params.id, query.limit), meta: meta(req.id) };
    });

    route(app, 'resendWebhookDelivery', async ({ req, params }) => {
      if (!(await webhooks.get(req.apiKey!.workspaceId, params.id))) throw noEndpoint();
      const delivery = await webhooks.resend(params.id, params.delivery_id);
      if (!delivery) throw new ApiError('not_found', { reason: 'no_webhook_delivery', message: 'No such delivery of this webhook endpoint.' });
      req.log.info({ endpoint_id: params.id, delivery_id: delivery.id }, 'webhook delivery re-sent');
      return { data: delivery, meta: meta(req.id) };
    });
  },
  { name: 'routes-webhooks', dependencies: [DEPS_PLUGIN] },
);
