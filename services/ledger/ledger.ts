import { newEvent, streams, type EventData, type Operation } from '../../contracts/events';
import { generateApiKey, hashApiKey, keyDisplayPrefix, newKeyId, newWorkspaceId } from '../common/ids';
import type { EventStore, StoreTransaction } from '../eventstore/event-store';
import type { NewEvent } from '../eventstore/types';
import type { SqlExecutor } from '../eventstore/sql';
import { BatchingWriter, type WorkspaceDecision } from './batching-writer';
import { decideCharge, decideRefund } from './rules';

export const DEFAULT_MAX_CONCURRENCY = 8;
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
/** Channel on which key changes are announced to every instance sharing the database. */
export const KEY_CHANGES_CHANNEL = 'api_key_changes';

export class UnknownWorkspaceError extends Error {
  constructor(readonly workspaceId: string) {
    super(`no workspace ${workspaceId}`);
  }
}
export class UnknownKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`no API key ${keyId}`);
  }
}

export interface Workspace {
  id: string;
  name: string;
  balance: number;
  max_concurrency: number;
  created_at: string;
}

export interface ChargeCommand {
  workspaceId: string;
  requestId: string;
  keyId: string;
  operation: Operation;
  credits: number;
  /** Known at charge time (a cache hit): recorded in the same transaction. */
  completed?: Omit<EventData<'LookupCompleted'>, 'workspace_id' | 'request_id' | 'key_id' | 'operation'>;
}
export type ChargeResult = { kind: 'charged'; balanceAfter: number } | { kind: 'insufficient_credits'; balance: number };

export interface SettleCommand {
  workspaceId: string;
  requestId: string;
  keyId: string;
  operation: Operation;
  /** What the live fetch learned (ProfileFetched / ProfileNotFound), on the entity's stream. */
  entityEvents?: { stream: string; event: NewEvent }[];
  /** Credits that go back: the whole charge for a failure, the difference for a cheaper not-found. */
  refund?: { owed: number; cause: string };
  completed: Omit<EventData<'LookupCompleted'>, 'workspace_id' | 'request_id' | 'key_id' | 'operation'>;
  /** Recovery: do nothing if the charge was settled meanwhile (another sweeper, a slow instance). */
  onlyIfUnsettled?: boolean;
}

/** The money side: workspaces, keys, charges and refunds, all as events. */
export class Ledger {
  private readonly writer: BatchingWriter;

  constructor(private readonly store: EventStore) {
    this.writer = new BatchingWriter(store);
  }

  async createWorkspace(input: { name: string; credits?: number; maxConcurrency?: number }): Promise<Workspace> {
    const id = newWorkspaceId();
    const events = [newEvent('WorkspaceCreated', { workspace_id: id, name: input.name, max_concurrency: input.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY })];
    if (input.credits && input.credits > 0) events.push(newEvent('CreditsGranted', { workspace_id: id, amount: input.credits, reason: 'initial credits' }) as any);
    await this.store.append(streams.workspace(id), events, 'no_stream');
    return (await this.getWorkspace(id))!;
  }

  async getWorkspace(id: string, executor: SqlExecutor = this.store.sql): Promise<Workspace | undefined> {
    const { rows } = await executor.query<Workspace & { created_at: Date }>(
      'SELECT id, name, balance, max_concurrency, created_at FROM workspaces WHERE id = $1',
      [id],
    );
    const row = rows[0];
    return row && { ...row, created_at: new Date(row.created_at).toISOString() };
  }

  async balance(workspaceId: string): Promise<number | null> {
    const { rows } = await this.store.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [workspaceId]);
    return rows[0]?.balance ?? null;
  }

  async changeLimits(id: string, maxConcurrency: number): Promise<Workspace> {
    await this.store.transaction(async (tx) => {
      await lockWorkspace(tx, id);
      await tx.append(streams.workspace(id), [newEvent('LimitsChanged', { workspace_id: id, max_concurrency: maxConcurrency })]);
      // Instances cache a key's limits with the key: tell them at commit.
      await tx.sql.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, id]);
    });
    return (await this.getWorkspace(id))!;
  }

  async grantCredits(id: string, amount: number, reason?: string): Promise<{ balance: number }> {
    return this.store.transaction(async (tx) => {
      await lockWorkspace(tx, id);
      await tx.append(streams.workspace(id), [newEvent('CreditsGranted', { workspace_id: id, amount, reason: reason ?? null })]);
      const { rows } = await tx.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [id]);
      return { balance: rows[0]!.balance };
    });
  }

  async createKey(workspaceId: string, input: { name?: string; rateLimitPerMinute?: number }) {
    await this.requireWorkspace(workspaceId);
    const id = newKeyId();
    const key = generateApiKey();
    const prefix = keyDisplayPrefix(key);
    const rate = input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
    const [recorded] = await this.store.append(
      streams.apiKey(id),
      [newEvent('ApiKeyCreated', { key_id: id, workspace_id: workspaceId, name: input.name ?? null, prefix, key_hash: hashApiKey(key), rate_limit_per_minute: rate })],
      'no_stream',
    );
    return { id, key, prefix, name: input.name ?? null, rate_limit_per_minute: rate, created_at: recorded!.recordedAt.toISOString() };
  }

  async listKeys(workspaceId: string) {
    await this.requireWorkspace(workspaceId);
    const { rows } = await this.store.sql.query<{ id: string; prefix: string; name: string | null; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }>(
      `SELECT k.id, k.prefix, k.name, k.created_at, u.last_used_at, k.revoked_at
         FROM api_keys k LEFT JOIN key_last_used u ON u.key_id = k.id
        WHERE k.workspace_id = $1 ORDER BY k.created_at, k.id`,
      [workspaceId],
    );
    return rows.map((r) => ({ ...r, created_at: iso(r.created_at)!, last_used_at: iso(r.last_used_at), revoked_at: iso(r.revoked_at) }));
  }

  /** Revokes once; revoking again answers with the first revocation. Other instances are told at commit. */
  async revokeKey(keyId: string): Promise<{ id: string; revoked_at: string }> {
    await this.store.transaction(async (tx) => {
      // Under the row lock, so two concurrent revocations append one ApiKeyRevoked, not two.
      const found = await tx.sql.query<{ workspace_id: string; revoked_at: Date | null }>(
        'SELECT workspace_id, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE',
        [keyId],
      );
      const key = found.rows[0];
      if (!key) throw new UnknownKeyError(keyId);
      if (key.revoked_at) return;
      await tx.append(streams.apiKey(keyId), [newEvent('ApiKeyRevoked', { key_id: keyId, workspace_id: key.workspace_id })]);
      await tx.sql.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, keyId]);
    });
    const { rows } = await this.store.sql.query<{ revoked_at: Date }>('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
    return { id: keyId, revoked_at: iso(rows[0]!.revoked_at)! };
  }

  /**
   * Charges a call when the balance covers it. The balance row is locked, the decision is the
   * pure rule, and the event with its projections commits in the same (batched) transaction.
   */
  charge(cmd: ChargeCommand): Promise<ChargeResult> {
    // Built (and schema-checked) before joining the batch: the locked part only decides.
    const events = chargeEvents(cmd);
    return this.writer.submitDecision(cmd.workspaceId, streams.workspace(cmd.workspaceId), (balance) => decideChargeEvents(cmd, events, balance));
  }

  /** Records what a live lookup ended in, refunding at most once per charge. */
  settle(cmd: SettleCommand): Promise<{ balance: number; refunded: number }> {
    return this.writer.submit((tx) => settleIn(tx, cmd), cmd.workspaceId);
  }

  /**
   * Refunds charges whose lookup never completed (the instance serving it died), once they are
   * older than `graceMs`. Safe to run on every instance at once: each charge settles once.
   */
  async refundAbandonedCharges(graceMs: number): Promise<number> {
    const { rows } = await this.store.sql.query<{ request_id: string; workspace_id: string; key_id: string; operation: Operation }>(
      `SELECT request_id, workspace_id, key_id, operation FROM charges
        WHERE NOT settled AND charged_at < now() - make_interval(secs => $1) ORDER BY charged_at LIMIT 500`,
      [graceMs / 1000],
    );
    let refunded = 0;
    for (const c of rows) {
      const settled = await this.settle({
        workspaceId: c.workspace_id,
        requestId: c.request_id,
        keyId: c.key_id,
        operation: c.operation,
        onlyIfUnsettled: true,
        refund: { owed: Number.MAX_SAFE_INTEGER, cause: 'internal_error' },
        completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'internal_error' },
      });
      if (settled.refunded > 0) refunded++;
    }
    return refunded;
  }

  /** A call that charged nothing (refused, or a free not-found from cache), for usage. */
  recordUncharged(cmd: Omit<SettleCommand, 'refund' | 'entityEvents'>): Promise<void> {
    const events = [completedEvent(cmd)];
    return this.writer.submitDecision(cmd.workspaceId, streams.workspace(cmd.workspaceId), (balance) => ({
      events,
      balanceAfter: balance ?? 0,
      result: undefined,
    }));
  }

  async ledgerEntries(workspaceId: string, q: { requestId?: string; after?: number; limit: number }) {
    await this.requireWorkspace(workspaceId);
    const { rows } = await this.store.sql.query<{ position: number; type: string; request_id: string | null; key_id: string | null; credits: number; balance_after: number; recorded_at: Date }>(
      `SELECT position, type, request_id, key_id, credits, balance_after, recorded_at FROM ledger_entries
        WHERE workspace_id = $1 AND ($2::text IS NULL OR request_id = $2) AND position > $3
        ORDER BY position LIMIT $4`,
      [workspaceId, q.requestId ?? null, q.after ?? 0, q.limit + 1],
    );
    const page = rows.slice(0, q.limit).map((r) => ({ ...r, recorded_at: iso(r.recorded_at)! }));
    return { data: page, next: rows.length > q.limit ? page[page.length - 1]!.position : null };
  }

  async usage(workspaceId: string, q: { keyId?: string; from?: string; to?: string }) {
    await this.requireWorkspace(workspaceId);
    const { rows } = await this.store.sql.query<{ day: string | Date; key_id: string; operation: string; calls: number; credits_charged: number; credits_refunded: number; errors: number }>(
      `SELECT day::text AS day, key_id, operation, calls, credits_charged, credits_refunded, errors FROM usage_daily
        WHERE workspace_id = $1 AND ($2::text IS NULL OR key_id = $2)
          AND ($3::date IS NULL OR day >= $3::date) AND ($4::date IS NULL OR day <= $4::date)
        ORDER BY day, key_id, operation`,
      [workspaceId, q.keyId ?? null, q.from ?? null, q.to ?? null],
    );
    return rows.map((r) => ({ ...r, day: String(r.day) }));
  }

  private async requireWorkspace(id: string) {
    if (!(await this.getWorkspace(id))) throw new UnknownWorkspaceError(id);
  }
}

function completedEvent(cmd: Pick<SettleCommand, 'workspaceId' | 'requestId' | 'keyId' | 'operation' | 'completed'>) {
  return newEvent(
    'LookupCompleted',
    { workspace_id: cmd.workspaceId, request_id: cmd.requestId, key_id: cmd.keyId, operation: cmd.operation, ...cmd.completed },
    cmd.requestId,
  );
}

/**
 * Every write that moves a workspace's balance or limits takes its row lock first, before the
 * stream lock of the append: one lock order, so a charge racing a grant or a refund on another
 * instance waits instead of deadlocking.
 */
async function lockWorkspace(tx: StoreTransaction, workspaceId: string): Promise<number> {
  const { rows } = await tx.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
  if (!rows[0]) throw new UnknownWorkspaceError(workspaceId);
  return Number(rows[0].balance);
}

function chargeEvents(cmd: ChargeCommand): NewEvent[] {
  const events: NewEvent[] = [
    newEvent('LookupCharged', { workspace_id: cmd.workspaceId, request_id: cmd.requestId, key_id: cmd.keyId, operation: cmd.operation, credits: cmd.credits }, cmd.requestId),
  ];
  if (cmd.completed) events.push(completedEvent({ ...cmd, completed: cmd.completed }));
  return events;
}

/** A charge decided from the workspace's locked balance: its events, or a refusal with none. */
function decideChargeEvents(cmd: ChargeCommand, events: NewEvent[], balance: number | undefined): WorkspaceDecision<ChargeResult> {
  if (balance === undefined) throw new UnknownWorkspaceError(cmd.workspaceId);
  const decision = decideCharge(balance, cmd.credits);
  if (decision.kind === 'insufficient_credits') return { events: [], balanceAfter: balance, result: decision };
  return { events, balanceAfter: decision.balanceAfter, result: { kind: 'charged', balanceAfter: decision.balanceAfter } };
}

async function settleIn(tx: StoreTransaction, cmd: SettleCommand): Promise<{ balance: number; refunded: number }> {
  if (cmd.onlyIfUnsettled) {
    // Workspace row before the charge row, the order every other writer takes them in.
    await lockWorkspace(tx, cmd.workspaceId);
    const { rows } = await tx.sql.query<{ settled: boolean }>('SELECT settled FROM charges WHERE request_id = $1 FOR UPDATE', [cmd.requestId]);
    if (!rows[0] || rows[0].settled) {
      const { rows: ws } = await tx.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [cmd.workspaceId]);
      return { balance: ws[0]?.balance ?? 0, refunded: 0 };
    }
  }
  for (const { stream, event } of cmd.entityEvents ?? []) await tx.append(stream, [event]);
  let refunded = 0;
  const events = [];
  if (cmd.refund) {
    await lockWorkspace(tx, cmd.workspaceId);
    const { rows } = await tx.sql.query<{ credits: number; refunded_credits: number | null }>(
      'SELECT credits, refunded_credits FROM charges WHERE request_id = $1 FOR UPDATE',
      [cmd.requestId],
    );
    const charge = rows[0] && { credits: Number(rows[0].credits), refundedCredits: rows[0].refunded_credits === null ? null : Number(rows[0].refunded_credits) };
    const decision = decideRefund(charge, cmd.refund.owed);
    if (decision.kind === 'refund') {
      refunded = decision.credits;
      events.push(newEvent('LookupRefunded', { workspace_id: cmd.workspaceId, request_id: cmd.requestId, key_id: cmd.keyId, operation: cmd.operation, credits: refunded, cause: cmd.refund.cause }, cmd.requestId));
    }
  }
  events.push(completedEvent(cmd) as any);
  await tx.append(streams.workspace(cmd.workspaceId), events);
  const { rows } = await tx.sql.query<{ balance: number }>('SELECT balance FROM workspaces WHERE id = $1', [cmd.workspaceId]);
  return { balance: rows[0]!.balance, refunded };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
