import { ApiError } from '../../contracts/errors';
import { newEvent, streams, type KeyMode, type Operation } from '../../contracts/events';
import { WATCH_INTERVALS, type WatchCreateRequest, type WatchInterval } from '../../contracts/webhooks';
import { claimOneByOne } from '../common/claim-one-by-one';
import { mayStartWatches } from '../common/key-mode';
import { newRequestId, newWatchId } from '../common/ids';
import type { Logger } from '../common/log';
import { startPollLoop, type PollLoop } from '../common/poll-loop';
import type { EventStore } from '../eventstore/event-store';
import { successPrice } from '../ledger/pricing';
import type { ReadModels } from '../read-models/read-models';
import { recordWatchesDeleted, recordWatchRefresh } from '../metrics/metrics';
import { aliases, companyAlias, personAlias } from '../lookup/aliases';
import type { Caller, LookupResult, LookupService } from '../lookup/lookup-service';
import { parseCompanyReference, parseDomain, parsePersonReference } from '../lookup/references';
import { WebhookStore } from '../webhooks/webhook-store';
import { deleteWatches } from './delete-watches';
import { detectProfileChange } from './profile-change';

/** A paused watch looks at its workspace's balance this often (free) to resume by itself. */
const PAUSED_RECHECK_MS = 3_600_000;
/** A claimed watch whose instance died is due again this long after the source's timeout. */
const LEASE_MARGIN_MS = 60_000;
/** Refreshes per pass of the schedule (each claimed on its own): a stop waits for one pass at most. */
const PASS_LIMIT = 10;
/** Why a watch waits: the one pause reason there is. */
const OUT_OF_CREDITS = 'insufficient_credits' as const;

interface WatchRow {
  id: string;
  workspace_id: string;
  key_id: string;
  operation: WatchCreateRequest['operation'];
  body: Record<string, string>;
  every: WatchInterval;
  webhook_endpoint_id: string;
  paused_reason: 'insufficient_credits' | null;
  next_run_at: Date | string;
  last_run_at: Date | string | null;
  last_request_id: string | null;
  content_hash: string | null;
  data: Record<string, unknown> | null;
  created_at: Date | string;
}

const iso = (v: Date | string) => new Date(v).toISOString();

function watchView(row: WatchRow) {
  return {
    id: row.id,
    operation: row.operation,
    body: row.body,
    every: row.every,
    webhook_endpoint_id: row.webhook_endpoint_id,
    state: row.paused_reason === null ? ('active' as const) : ('paused' as const),
    paused_reason: row.paused_reason,
    next_run_at: iso(row.next_run_at),
    last_run_at: row.last_run_at === null ? null : iso(row.last_run_at),
    last_request_id: row.last_request_id,
    content_hash: row.content_hash,
    created_at: iso(row.created_at),
  };
}
/** A test key may neither create nor run a watch (services/common/key-mode.ts, mayStartWatches). */
export function refuseTestKeyForWatches(mode: KeyMode): void {
  if (!mayStartWatches(mode)) {
    throw new ApiError('forbidden', { reason: 'test_key', message: 'A test key may not create or run a watch: its refreshes are live, charged lookups. Use a live key.' });
  }
}

export type WatchView = ReturnType<typeof watchView>;

/** A watched reference, parsed: its cache alias, the operation it is billed as, and its lookup. */
interface WatchedLookup {
  alias: string;
  operation: Operation;
  run(caller: Caller): Promise<LookupResult>;
}

export type RefreshOutcome =
  | { kind: 'refreshed'; changed: boolean; requestId: string; billing: LookupResult['billing']; watch: WatchView }
  | { kind: 'paused'; requestId: string; error: ApiError }
  | { kind: 'failed'; requestId: string; error: ApiError };

export interface WatchServiceOptions {
  logger: Logger;
  /** The source's timeout: a claimed watch is not claimed again before its refresh could have ended. */
  sourceTimeoutMs: number;
  now?: () => Date;
}

/**
 * Watches (docs/api.md "Watches"): each refresh is a lookup through the LookupService with its own
 * request id, so it is charged (fetching live: a REFRESH), refunded on failure, and in the ledger
 * and usage like any call. A changed content_hash appends ProfileChanged to the entity's stream,
 * which the webhook dispatcher turns into a `profile.changed` delivery. The schedule is rows of
 * `watches` (written with the watch's events), claimed with FOR UPDATE SKIP LOCKED by any instance.
 */
export class WatchService {
  private readonly now: () => Date;

  constructor(
    private readonly store: EventStore,
    private readonly lookups: LookupService,
    private readonly readModels: Pick<ReadModels, 'balance'>,
    private readonly options: WatchServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /**
   * `caller.chosen`: the key was named in the request (the console), not the calling key (the API):
   * then one that is not the workspace's, or revoked, is 404 and a test key 403, not 401.
   */
  async create(caller: { workspaceId: string; keyId: string; chosen?: boolean }, input: WatchCreateRequest): Promise<WatchView> {
    const watched = this.watched(input.operation, input.body);
    // What the cache holds now is what a change is measured against (nothing cached: the first refresh is).
    const baseline = await this.lookups.cachedProfile(watched.alias);
    const id = newWatchId();
    const nextRunAt = new Date(this.now().getTime() + WATCH_INTERVALS[input.every]);
    const body = input.body as Record<string, string>;
    return this.store.transaction(async (tx) => {
      // FOR SHARE: an endpoint deleted meanwhile (deleteWebhookEndpoint) waits for this watch, or refuses it.
      const { rows: endpoints } = await tx.sql.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL FOR SHARE', [
        input.webhook_endpoint_id,
        caller.workspaceId,
      ]);
      if (endpoints.length === 0) throw new ApiError('not_found', { reason: 'no_webhook_endpoint', message: 'No such webhook endpoint in this workspace.' });
      // FOR SHARE too: a revocation meanwhile (revoke-key.ts, which deletes the key's watches) waits
      // for this watch, or this refuses the key as admission would have.
      const { rows: keys } = await tx.sql.query<{ mode: KeyMode }>('SELECT mode FROM api_keys WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL FOR SHARE', [
        caller.keyId,
        caller.workspaceId,
      ]);
      const key = keys[0];
      if (!key && caller.chosen) throw new ApiError('not_found', { reason: 'no_key', message: 'No such key in this workspace, or it is revoked.' });
      if (!key) throw new ApiError('unauthorized');
      refuseTestKeyForWatches(key.mode);
      const { rows } = await tx.sql.query<WatchRow>(
        `INSERT INTO watches (id, workspace_id, key_id, operation, body, every, webhook_endpoint_id, next_run_at, content_hash, data)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::timestamptz, $9, $10::jsonb) RETURNING *`,
        [id, caller.workspaceId, caller.keyId, input.operation, JSON.stringify(body), input.every, input.webhook_endpoint_id, nextRunAt.toISOString(), baseline?.contentHash ?? null, baseline ? JSON.stringify(baseline.data) : null],
      );
      await tx.append(streams.watch(id), [
        newEvent('WatchCreated', { watch_id: id, workspace_id: caller.workspaceId, key_id: caller.keyId, operation: input.operation, body, every: input.every, webhook_endpoint_id: input.webhook_endpoint_id }),
      ]);
      return watchView(rows[0]!);
    });
  }

  async list(workspaceId: string): Promise<WatchView[]> {
    const { rows } = await this.store.sql.query<WatchRow>('SELECT * FROM watches WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY created_at, id', [workspaceId]);
    return rows.map(watchView);
  }

  async get(workspaceId: string, id: string): Promise<WatchView | undefined> {
    const row = await this.row(workspaceId, id);
    return row && watchView(row);
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const deleted = await this.store.transaction((tx) => deleteWatches(tx, workspaceId, { watchId: id }));
    recordWatchesDeleted('watch_deleted', deleted.length);
    return deleted.length > 0;
  }

  /** POST /v1/watches/{id}/run: a refresh now, under the call's request id. */
  async runNow(workspaceId: string, id: string, requestId: string): Promise<RefreshOutcome | undefined> {
    const row = await this.row(workspaceId, id);
    return row && this.refresh(row, requestId, { checkBalanceFirst: false });
  }

  /**
   * A refresh now as a call answers it (by key or in the console): the refresh, or the lookup's own
   * error (out of credits: the watch is paused; a failed lookup: refunded); 404 for no such watch.
   */
  async refreshNow(workspaceId: string, id: string, requestId: string): Promise<Extract<RefreshOutcome, { kind: 'refreshed' }>> {
    const outcome = await this.runNow(workspaceId, id, requestId);
    if (!outcome) throw noWatch();
    if (outcome.kind !== 'refreshed') throw outcome.error;
    return outcome;
  }

  /** A watch of the workspace, or 404. */
  async require(workspaceId: string, id: string): Promise<WatchView> {
    return (await this.get(workspaceId, id)) ?? throwNoWatch();
  }

  /** Stops a watch of the workspace, or 404. */
  async remove(workspaceId: string, id: string): Promise<void> {
    if (!(await this.delete(workspaceId, id))) throw noWatch();
  }

  /**
   * One pass of the schedule: claims one due watch (none another instance holds), refreshes it,
   * then claims the next, up to PASS_LIMIT. Its lease covers that one refresh (the source's timeout
   * and a margin): a watch claimed in a batch and left waiting behind slow refreshes would outlive
   * its lease and be refreshed, and charged, by another instance too (services/common/claim-one-by-one.ts).
   */
  async runDue(stopped: () => boolean = () => false): Promise<number> {
    return claimOneByOne({
      claim: () => this.claimDue(),
      process: async (row) => {
        const requestId = newRequestId();
        try {
          await this.refresh(row, requestId, { checkBalanceFirst: true });
        } catch (err) {
          // The lease lapses and any instance tries again; the lookup refunded what it charged.
          this.options.logger.error({ err, watch_id: row.id, request_id: requestId }, 'scheduled watch refresh failed; retried once its claim lapses');
        }
      },
      limit: PASS_LIMIT,
      stopped,
    });
  }

  /** The earliest due watch no instance holds, now this instance's until its lease ends. */
  private async claimDue(): Promise<WatchRow | undefined> {
    const leaseMs = this.options.sourceTimeoutMs + LEASE_MARGIN_MS;
    const now = this.now();
    const { rows } = await this.store.sql.query<WatchRow>(
      `WITH due AS (
         SELECT id FROM watches WHERE deleted_at IS NULL AND next_run_at <= $1::timestamptz
          ORDER BY next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       UPDATE watches w SET next_run_at = $1::timestamptz + $2::bigint * interval '1 millisecond'
         FROM due WHERE w.id = due.id
       RETURNING w.*`,
      [now.toISOString(), leaseMs],
    );
    return rows[0];
  }

  private async row(workspaceId: string, id: string): Promise<WatchRow | undefined> {
    const { rows } = await this.store.sql.query<WatchRow>('SELECT * FROM watches WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL', [id, workspaceId]);
    return rows[0];
  }

  private watched(operation: WatchCreateRequest['operation'], body: Record<string, string>): WatchedLookup {
    switch (operation) {
      case 'company': {
        const parsed = parseCompanyReference(body.url ?? '');
        if (!parsed.ok) throw new ApiError('invalid_company_reference');
        return { alias: companyAlias(parsed.ref), operation: 'company', run: (caller) => this.lookups.company(caller, parsed.ref, 0) };
      }
      case 'domain': {
        const parsed = parseDomain(body.domain ?? '');
        if (!parsed.ok) throw new ApiError('invalid_domain');
        return { alias: aliases.domain(parsed.domain), operation: 'domain', run: (caller) => this.lookups.domain(caller, parsed.domain, 0) };
      }
      case 'person': {
        const parsed = parsePersonReference(body.url ?? '');
        if (!parsed.ok) throw new ApiError('invalid_person_reference');
        return { alias: personAlias(parsed.ref), operation: parsed.ref.kind === 'url' ? 'person_url' : 'person_name', run: (caller) => this.lookups.person(caller, parsed.ref, 0) };
      }
    }
  }

  /**
   * One refresh: a live lookup (max_age 0) charged to the watch's workspace under `requestId`.
   * A scheduled refresh of a paused watch first looks at the balance (free) and waits while it is
   * below the price. Out of credits pauses the watch (WatchPaused); a success resumes it.
   */
  private async refresh(row: WatchRow, requestId: string, { checkBalanceFirst }: { checkBalanceFirst: boolean }): Promise<RefreshOutcome> {
    const watched = this.watched(row.operation, row.body);
    const log = { watch_id: row.id, workspace_id: row.workspace_id, request_id: requestId };
    if (checkBalanceFirst && row.paused_reason !== null) {
      const balance = (await this.readModels.balance(row.workspace_id)) ?? 0;
      if (balance < successPrice(watched.operation)) {
        await this.reschedule(row.id, PAUSED_RECHECK_MS, row.every);
        recordWatchRefresh('paused');
        return { kind: 'paused', requestId, error: new ApiError('insufficient_credits', { billing: { charged: 0, balance } }) };
      }
    }
    let result: LookupResult;
    try {
      // Only live keys create watches (key-mode.ts mayStartWatches): a refresh is a live call.
      result = await watched.run({ requestId, workspaceId: row.workspace_id, keyId: row.key_id, mode: 'live' });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'insufficient_credits') {
        await this.pause(row);
        this.options.logger.warn(log, 'watch paused: the workspace is out of credits');
        recordWatchRefresh('paused');
        return { kind: 'paused', requestId, error: err };
      }
      await this.store.sql.query(
        `UPDATE watches SET last_run_at = $2::timestamptz, last_request_id = $3, next_run_at = $2::timestamptz + $4::bigint * interval '1 millisecond' WHERE id = $1`,
        [row.id, this.now().toISOString(), requestId, WATCH_INTERVALS[row.every]],
      );
      this.options.logger.warn({ ...log, code: err.code }, 'watch refresh failed; its charge was refunded');
      recordWatchRefresh('failed');
      return { kind: 'failed', requestId, error: err };
    }
    const { answer, billing } = result;
    const profile = await this.lookups.cachedProfile(watched.alias);
    const now = this.now();
    const { changed, watch } = await this.store.transaction(async (tx) => {
      // The baseline as it stands now, locked: two refreshes at once report one change, not two.
      const { rows } = await tx.sql.query<WatchRow>('SELECT * FROM watches WHERE id = $1 FOR UPDATE', [row.id]);
      const current = rows[0]!;
      const change = detectProfileChange(current.content_hash && current.data ? { contentHash: current.content_hash, data: current.data } : null, { contentHash: answer.contentHash, data: answer.data });
      const { rows: updated } = await tx.sql.query<WatchRow>(
        `UPDATE watches SET content_hash = $2, data = $3::jsonb, last_run_at = $4::timestamptz, last_request_id = $5, paused_reason = NULL,
                next_run_at = $4::timestamptz + $6::bigint * interval '1 millisecond'
          WHERE id = $1 RETURNING *`,
        [row.id, answer.contentHash, JSON.stringify(answer.data), now.toISOString(), requestId, WATCH_INTERVALS[row.every]],
      );
      if (current.paused_reason !== null) await tx.append(streams.watch(row.id), [newEvent('WatchResumed', { watch_id: row.id, workspace_id: row.workspace_id })]);
      if (change.changed && profile) {
        const kind = profile.entity.startsWith('person:') ? 'person' : 'company';
        const key = profile.entity.slice(profile.entity.indexOf(':') + 1);
        await tx.append(kind === 'person' ? streams.person(key) : streams.company(key), [
          newEvent(
            'ProfileChanged',
            {
              entity: profile.entity,
              kind,
              before_hash: change.beforeHash,
              after_hash: change.afterHash,
              changed_fields: change.changedFields,
              watch_id: row.id,
              workspace_id: row.workspace_id,
              webhook_endpoint_id: row.webhook_endpoint_id,
              request_id: requestId,
            },
            requestId,
          ),
        ]);
      }
      return { changed: change.changed, watch: watchView(updated[0]!) };
    });
    this.options.logger.info({ ...log, changed, credits_charged: billing.charged }, 'watch refreshed');
    recordWatchRefresh(changed ? 'changed' : 'unchanged');
    return { kind: 'refreshed', changed, requestId, billing, watch };
  }

  private async pause(row: WatchRow): Promise<void> {
    await this.store.transaction(async (tx) => {
      const { rowCount } = await tx.sql.query(
        'UPDATE watches SET paused_reason = $3, next_run_at = $2::timestamptz WHERE id = $1 AND paused_reason IS NULL',
        [row.id, new Date(this.now().getTime() + Math.min(PAUSED_RECHECK_MS, WATCH_INTERVALS[row.every])).toISOString(), OUT_OF_CREDITS],
      );
      if (rowCount > 0) await tx.append(streams.watch(row.id), [newEvent('WatchPaused', { watch_id: row.id, workspace_id: row.workspace_id, reason: OUT_OF_CREDITS })]);
    });
  }

  private async reschedule(id: string, afterMs: number, every: WatchInterval): Promise<void> {
    await this.store.sql.query('UPDATE watches SET next_run_at = $2::timestamptz WHERE id = $1', [id, new Date(this.now().getTime() + Math.min(afterMs, WATCH_INTERVALS[every])).toISOString()]);
  }
}

const noWatch = () => new ApiError('not_found', { reason: 'no_watch', message: 'No such watch in this workspace.' });
function throwNoWatch(): never {
  throw noWatch();
}

/** Runs the schedule on one instance: a pass every `pollMs` (each claims only what no other instance holds). */
export function startWatchScheduler(watches: WatchService, pollMs: number, logger: Logger): PollLoop {
  return startPollLoop({ pass: (stopped) => watches.runDue(stopped), everyMs: pollMs, logger, failed: 'watch schedule pass failed; the next pass retries' });
}

/**
 * DELETE /v1/webhook-endpoints/{id} (docs/api.md "Webhooks", "Watches"): the endpoint and, in the
 * same transaction, every watch delivering to it. A watch's refreshes are charged and their only
 * output is its endpoint's webhook: left behind, it would go on charging for nothing anyone
 * receives. Undefined when the workspace has no such endpoint; otherwise the watches deleted.
 */
export async function deleteWebhookEndpoint(store: EventStore, workspaceId: string, endpointId: string): Promise<{ deletedWatches: string[] } | undefined> {
  const deleted = await store.transaction(async (tx) => {
    if (!(await new WebhookStore(tx.sql).delete(workspaceId, endpointId))) return undefined;
    return { deletedWatches: await deleteWatches(tx, workspaceId, { endpointId }) };
  });
  if (deleted) recordWatchesDeleted('webhook_endpoint_deleted', deleted.deletedWatches.length);
  return deleted;
}
