import { ApiError } from '../../contracts/errors';
import type { WebhookEventType } from '../../contracts/webhooks';
import type { AllowedHosts } from './address-policy';
import { webhookUrlProblem } from './webhook-url';
import type { DeliveryView, WebhookEndpointView, WebhookStore } from './webhook-store';

/**
 * A workspace's webhook endpoints as both the public API (by key) and the console (by session)
 * manage them: the URL rule at registration and change, another workspace's endpoint as none, a
 * delivery only through its endpoint. The answers' envelopes are the callers'.
 */
export class WorkspaceWebhooks {
  constructor(
    private readonly store: WebhookStore,
    private readonly settings: { allowedHosts: AllowedHosts; secretOverlapMs: number },
    /** The endpoint's deletion with what goes with it (services/watches: its watches end too); undefined for no such endpoint. */
    private readonly deleteEndpoint: (workspaceId: string, id: string) => Promise<{ deletedWatches: string[] } | undefined>,
  ) {}

  create(workspaceId: string, input: { url: string; event_types: WebhookEventType[]; description?: string }) {
    this.checkUrl(input.url);
    return this.store.create(workspaceId, input);
  }

  list(workspaceId: string): Promise<WebhookEndpointView[]> {
    return this.store.list(workspaceId);
  }

  async get(workspaceId: string, id: string): Promise<WebhookEndpointView> {
    return (await this.store.get(workspaceId, id)) ?? throwNoEndpoint();
  }

  async update(workspaceId: string, id: string, patch: Parameters<WebhookStore['update']>[2]): Promise<WebhookEndpointView> {
    this.checkUrl(patch.url);
    return (await this.store.update(workspaceId, id, patch)) ?? throwNoEndpoint();
  }

  /** Deletes the endpoint and the watches delivering to it (docs/api.md "Watches"); returns their ids. */
  async delete(workspaceId: string, id: string): Promise<{ deletedWatches: string[] }> {
    return (await this.deleteEndpoint(workspaceId, id)) ?? throwNoEndpoint();
  }

  async rotateSecret(workspaceId: string, id: string) {
    return (await this.store.rotateSecret(workspaceId, id, this.settings.secretOverlapMs)) ?? throwNoEndpoint();
  }

  async deliveries(workspaceId: string, id: string, limit: number): Promise<DeliveryView[]> {
    await this.get(workspaceId, id);
    return this.store.deliveries(id, limit);
  }

  async resend(workspaceId: string, id: string, deliveryId: string): Promise<DeliveryView> {
    await this.get(workspaceId, id);
    const delivery = await this.store.resend(id, deliveryId);
    if (!delivery) throw new ApiError('not_found', { reason: 'no_webhook_delivery', message: 'No such delivery of this webhook endpoint.' });
    return delivery;
  }

  /** Why each failing endpoint of the workspace fails: the last attempt of its last delivery given up. */
  failingReasons(workspaceId: string) {
    return this.store.failingReasons(workspaceId);
  }

  private checkUrl(url: string | undefined) {
    const problem = url === undefined ? null : webhookUrlProblem(url, this.settings.allowedHosts);
    if (problem) throw new ApiError('invalid_request', { reason: 'webhook_url_refused', details: [{ field: 'url', issue: 'invalid_type', message: `\`url\` ${problem}` }] });
  }
}

function throwNoEndpoint(): never {
  throw new ApiError('not_found', { reason: 'no_webhook_endpoint', message: 'No such webhook endpoint in this workspace.' });
}
