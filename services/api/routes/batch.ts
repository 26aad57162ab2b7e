import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BATCH_ITEM_ENDPOINTS, endpoint } from '../../../contracts/endpoints';
import { ApiError } from '../../../contracts/errors';
import type { BatchRequest } from '../../../contracts/http';
import type { z } from 'zod';
import { BatchSlots } from '../../batch/batch-slots';
import { ChargeOrder } from '../../batch/charge-order';
import { batchCharged, extraTokensWanted, itemError, itemSuccess, planItems, prepareItems, type BatchItem, type BatchTokens, type ItemPlan, type ItemResult, type Prepared } from '../../batch/rules';
import { newRequestId } from '../../common/ids';
import type { StoredResponse } from '../../idempotency/idempotency';
import type { SlotHandle } from '../../limits/concurrency';
import { apiKeyBucket } from '../../limits/rate-limiter';
import type { LookupService } from '../../lookup/lookup-service';
import { recordBatchItem } from '../../metrics/metrics';
import { toApiError } from '../../http/errors';
import { answerOnce } from '../../http/idempotent-answer';
import { setRateLimitHeaders } from '../../http/rate-limit-headers';
import { validated } from '../../http/request-body';
import { route } from '../../http/route';
import { LOOKUP_CALLS, type LookupCall } from '../lookup-calls';
import { DEPS_PLUGIN } from '../../http/deps-plugin';
import { docsUrlFor } from '../../http/public-url';
import { slotScope } from '../../common/key-mode';

/** POST /v1/batch: up to 100 lookups and searches, each answered, billed and logged as its single call (docs/api.md "Batch"). */
export const batchRoutes = fp(
  async (app) => {
    route(app, 'batch', async ({ req, reply, body, json }) => answerOnce(app, req, reply, 'batch', json, () => runBatch(app, req, reply, body.items)));
  },
  { name: 'routes-batch', dependencies: [DEPS_PLUGIN] },
);

async function runBatch(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, sent: z.output<typeof BatchRequest>['items']): Promise<StoredResponse> {
  const { deps } = app;
  const key = req.apiKey!;
  const items: BatchItem[] = sent.map((item) => ({ ...item, requestId: newRequestId() }));
  const tokens = takeItemTokens(app, req, reply, items.length);
  const docsUrl = docsUrlFor(deps.config, req);
  const order = new ChargeOrder(items.length);
  const slots = new BatchSlots(deps.slots, slotScope(key), key.maxConcurrency);
  // The balance each item's last ledger write left, in the order they finish: the last one is the
  // balance after the batch, as a single call answers the balance after its own write.
  let balanceAfterLastItem: number | undefined;

  const runItem = async (item: BatchItem, prepared: Prepared<LookupCall>, plans: Promise<ItemPlan<LookupCall>[] | null>, index: number): Promise<ItemResult> => {
    // The item runs up to its first write (its cache read) while the bucket's call is out; that
    // write waits for the item's token (ChargeTurn.admitted).
    const admitted = async () => {
      const plan = (await plans)?.[index];
      if (!plan) throw new TokensUnknown();
      if (plan.kind === 'refused') throw new ItemRefused(plan.error);
    };
    let slot: SlotHandle | null | undefined;
    const turn = order.turn(index, admitted, async () => {
      slot = await slots.acquire();
      return slot !== null;
    });
    try {
      if (!prepared.ok) {
        await admitted();
        return itemError(item, prepared.error, docsUrl);
      }
      const result = await prepared.call({ requestId: item.requestId, workspaceId: key.workspaceId, keyId: key.keyId, mode: key.mode, turn });
      balanceAfterLastItem = result.billing.balance;
      return itemSuccess(item, result);
    } catch (err) {
      // Refused past the bucket, as its single call would be at admission: nothing to log.
      if (err instanceof ItemRefused) return itemError(item, err.error, docsUrl);
      // The bucket's call failed: the whole batch answers it (below), not the items.
      if (err instanceof TokensUnknown) return itemError(item, new ApiError('service_unavailable'), docsUrl);
      const error = toApiError(err, 'apiKey');
      if (typeof error.billing?.balance === 'number') balanceAfterLastItem = error.billing.balance;
      logItemFailure(req, item, error, err);
      return itemError(item, error, docsUrl);
    } finally {
      order.end(index);
      // A slot not released frees when its lease lapses (CONCURRENCY_LEASE_MS); the answer stands.
      await slot?.release().catch((err: unknown) => req.log.warn({ err, item_request_id: item.requestId }, 'concurrency slot not released; it frees when its lease lapses'));
    }
  };

  const running = (async () => {
    // ioredis sends the bucket's call at the next setImmediate (auto-pipelining): the items' bodies
    // are judged and their caches read once it has gone out, while Redis answers.
    await new Promise((sent) => setImmediate(sent));
    const prepared = prepareItems(items, (item) => prepareCall(deps.lookups, item));
    const plans = tokens.then(
      (drawn) => planItems(prepared, drawn),
      () => null,
    );
    return Promise.all(items.map((item, index) => runItem(item, prepared[index]!, plans, index)));
  })();
  // A failed bucket call fails the batch (503), as it fails a single call's admission.
  const [, results] = await Promise.all([tokens, running]);
  for (const result of results) recordBatchItem(result.operation, result.status);
  const charged = batchCharged(results);
  // Read only when no item reached the ledger (all refused before their charge). The answer goes
  // out without the balance rather than not at all (the database may be away): each item still
  // says what it cost.
  const remaining =
    balanceAfterLastItem ??
    (await deps.readModels.balance(key.workspaceId).catch((err: unknown) => {
      req.log.warn({ err }, 'balance unreadable for the batch answer');
      return null;
    }));
  return {
    status: 200,
    headers: { 'x-request-id': req.id, 'x-credits-charged': String(charged), ...(remaining === null ? {} : { 'x-credits-remaining': String(remaining) }) },
    body: { data: results, meta: { request_id: req.id, credits_charged: charged, credits_remaining: remaining } },
  };
}

/** An item past the key's bucket: answered with `error` (429), uncharged. */
class ItemRefused extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

/** The bucket's call failed: no item may write. */
class TokensUnknown extends Error {}

/**
 * One token per item: admission took the first (as for any call); the rest come from the same
 * bucket at once, as many as it holds. The RateLimit headers say what the batch left.
 */
async function takeItemTokens(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, items: number): Promise<BatchTokens> {
  const key = req.apiKey!;
  const wanted = extraTokensWanted(items);
  if (wanted === 0) return { granted: 1, retryAfterSeconds: 0 };
  const taken = await app.deps.rateLimiter.takeUpTo(apiKeyBucket(key.keyId), key.rateLimitPerMinute, wanted);
  setRateLimitHeaders(reply, 'key', taken);
  return { granted: 1 + taken.granted, retryAfterSeconds: taken.retryAfterSeconds };
}

/** An item's call from its body, by its single endpoint's schema and parser: a body that call would refuse throws its 400. */
function prepareCall(lookups: LookupService, item: BatchItem): LookupCall {
  const id = BATCH_ITEM_ENDPOINTS[item.operation];
  const body = validated<unknown>(endpoint(id).body, item.body);
  // The operation picked the endpoint, whose schema `body` has just passed.
  return (LOOKUP_CALLS[id] as (lookups: LookupService, body: unknown) => LookupCall)(lookups, body);
}

/** Every item that is not answered with data gets a line, as a single call's 4xx/5xx gets an access line. */
function logItemFailure(req: FastifyRequest, item: BatchItem, error: ApiError, cause: unknown): void {
  const fields = { batch_item: true, item_request_id: item.requestId, operation: item.operation, status: error.status, error_code: error.code, credits_charged: error.billing?.charged ?? 0 };
  if (error.code === 'internal_error') req.log.error({ ...fields, err: cause }, 'batch item failed');
  else if (error.code === 'service_unavailable') req.log.warn({ ...fields, err: cause }, 'batch item: dependency unavailable');
  else req.log.info(fields, 'batch item answered with an error');
}
