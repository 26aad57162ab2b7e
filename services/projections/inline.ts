import type { EventData } from '../../contracts/events';
import { appendedEvent, writesStatement, type InlineProjection, type WritesWithAppend } from '../eventstore/event-store';
import type { RecordedEvent } from '../eventstore/types';
import { KEY_CHANGES_CHANNEL, keyCreatedPayload } from '../keys/authenticator';
import { CACHE_CHANGES_CHANNEL, cacheAliasesChangedBy } from '../lookup/cache-index-memory';
import { MEMBERS_PROJECTION_TABLES, membersProjection } from './members';
import { projectionOf } from './handlers';
import { lockedWorkspaceKey, SELECT_WORKSPACES_FOR_UPDATE, workspaceRowOf, type WorkspaceRow } from '../ledger/locked-workspace';
import { chargeRowsToStore, planLedgerWrites, workspacesTouched, type LedgerWrites } from './ledger-plan';

/**
 * Workspace balance and limits, the ledger view with balance_after, and the charges not settled
 * in their own transaction (chargeRowsToStore). Set-based:
 * one read of the touched workspaces (locked, in id order) unless the transaction has locked them
 * already, the pure plan, then one statement writing every table, however many events there
 * are: a batch of charges costs the same statements as one charge. When the rows are locked
 * already, the writes go in the append's own statement (withAppend), and the batching writer's
 * COMMIT with it: one round trip for append, projection and commit.
 */
export const ledgerProjection: InlineProjection = {
  name: 'ledger',
  types: ['WorkspaceCreated', 'CreditsGranted', 'LimitsChanged', 'LookupCharged', 'LookupRefunded', 'LookupCompleted'],
  async apply(tx, events, locked = new Map()) {
    const { current, unread } = lockedRowsOf(events, locked);
    if (unread.length > 0) {
      const { rows } = await tx.query<WorkspaceRow>(SELECT_WORKSPACES_FOR_UPDATE, [unread]);
      for (const r of rows) current.set(r.id, workspaceRowOf(r));
    }
    const plan = planLedgerWrites(current, events);
    for (const w of plan.workspaces) locked.set(lockedWorkspaceKey(w.id), w);
    const writes = ledgerWrites(plan, 'recorded');
    // Nobody reads its result: it goes with the transaction's next statement or its COMMIT.
    if (!writes) return;
    const statement = writesStatement(writes);
    tx.deferWrite(statement.text, statement.params);
  },
  withAppend(events, locked) {
    // A workspace's creation has no locked row to plan from (and its instant is its row's).
    if (events.some((e) => e.type === 'WorkspaceCreated')) return undefined;
    const { current, unread } = lockedRowsOf(events, locked);
    // A row this transaction has not read: apply() reads it after the append.
    if (unread.length > 0) return undefined;
    const plan = planLedgerWrites(current, events);
    return { writes: ledgerWrites(plan, 'pending'), locked: plan.workspaces.map((w): [string, unknown] => [lockedWorkspaceKey(w.id), w]) };
  },
};

/** The rows of the workspaces `events` touch that the transaction holds locked, and the ids of the others. */
function lockedRowsOf(events: RecordedEvent[], locked: ReadonlyMap<string, unknown>) {
  const current = new Map<string, WorkspaceRow>();
  const unread: string[] = [];
  for (const id of workspacesTouched(events)) {
    const row = locked.get(lockedWorkspaceKey(id)) as WorkspaceRow | undefined;
    if (row) current.set(id, row);
    else unread.push(id);
  }
  return { current, unread };
}

/**
 * Every table of the plan in one set of CTEs (each writes nothing when its arrays are empty);
 * null when there is nothing to write. Positions and instants as appendedEvent reads them:
 * 'recorded' events' own, or 'pending' (planned before the append) their ordinals. A
 * workspace row's created_at is always its own (pending events never create one).
 */
function ledgerWrites(plan: LedgerWrites, form: 'recorded' | 'pending'): WritesWithAppend | null {
  const { workspaces: ws, ledgerEntries: le } = plan;
  const ch = chargeRowsToStore(plan);
  // Earlier charges refunded and/or settled here, one row each (a statement may not update a row twice).
  const earlier = new Map<string, { credits: number | null; settled: boolean }>();
  for (const r of plan.refunds) earlier.set(r.request_id, { credits: r.credits, settled: false });
  for (const id of plan.settled) earlier.set(id, { credits: earlier.get(id)?.credits ?? null, settled: true });
  if (ws.length + le.length + ch.length + earlier.size === 0) return null;
  const created = appendedEvent('recorded', 'created', { instant: 'u.created_at' });
  const entry = appendedEvent(form, 'entry', { position: 'u.position', instant: 'u.recorded_at' });
  const charge = appendedEvent(form, 'charge', { instant: 'u.charged_at' });
  return {
    ctes: (p) => `ledger_workspaces AS (
         INSERT INTO workspaces (id, name, balance, max_concurrency, created_at, last_ledger_hash)
         SELECT u.id, u.name, u.balance, u.max_concurrency, ${created.instant}, u.last_ledger_hash
           FROM unnest(${p(1)}::text[], ${p(2)}::text[], ${p(3)}::bigint[], ${p(4)}::int[], ${p(5)}::bigint[], ${p(6)}::text[])
             AS u(id, name, balance, max_concurrency, created_at, last_ledger_hash)
         ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, max_concurrency = EXCLUDED.max_concurrency,
           last_ledger_hash = EXCLUDED.last_ledger_hash
       ), ledger_entries_written AS (
         INSERT INTO ledger_entries (position, workspace_id, type, request_id, key_id, credits, balance_after, recorded_at)
         SELECT ${entry.position}, u.workspace_id, u.type, u.request_id, u.key_id, u.credits, u.balance_after, ${entry.instant}
           FROM unnest(${p(7)}::bigint[], ${p(8)}::text[], ${p(9)}::text[], ${p(10)}::text[], ${p(11)}::text[], ${p(12)}::bigint[], ${p(13)}::bigint[], ${p(14)}::bigint[])
             AS u(position, workspace_id, type, request_id, key_id, credits, balance_after, recorded_at) ${entry.join}
       ), ledger_charges AS (
         INSERT INTO charges (request_id, workspace_id, key_id, operation, credits, charged_at, refunded_credits, settled)
         SELECT u.request_id, u.workspace_id, u.key_id, u.operation, u.credits, ${charge.instant}, u.refunded_credits, u.settled
           FROM unnest(${p(15)}::text[], ${p(16)}::text[], ${p(17)}::text[], ${p(18)}::text[], ${p(19)}::bigint[], ${p(20)}::bigint[], ${p(21)}::bigint[], ${p(22)}::boolean[])
             AS u(request_id, workspace_id, key_id, operation, credits, charged_at, refunded_credits, settled) ${charge.join}
       ), ledger_earlier_charges AS (
         UPDATE charges c SET refunded_credits = coalesce(u.credits, c.refunded_credits), settled = c.settled OR u.settled
           FROM unnest(${p(23)}::text[], ${p(24)}::bigint[], ${p(25)}::boolean[]) AS u(request_id, credits, settled)
          WHERE c.request_id = u.request_id
       )`,
    params: [
      ws.map((w) => w.id), ws.map((w) => w.name), ws.map((w) => w.balance), ws.map((w) => w.max_concurrency), ws.map((w) => w.created_at.getTime()), ws.map((w) => w.last_ledger_hash),
      le.map((x) => x.position), le.map((x) => x.workspace_id), le.map((x) => x.type), le.map((x) => x.request_id),
      le.map((x) => x.key_id), le.map((x) => x.credits), le.map((x) => x.balance_after), le.map((x) => x.recorded_at.getTime()),
      ch.map((c) => c.request_id), ch.map((c) => c.workspace_id), ch.map((c) => c.key_id), ch.map((c) => c.operation),
      ch.map((c) => c.credits), ch.map((c) => c.charged_at.getTime()), ch.map((c) => c.refunded_credits), ch.map((c) => c.settled),
      [...earlier.keys()], [...earlier.values()].map((u) => u.credits), [...earlier.values()].map((u) => u.settled),
    ],
  };
}

/**
 * API keys, read by authentication; revocation is visible the moment it commits. A new key's hash
 * is announced at commit, for every instance's key set (KeyAuthenticator).
 */
export const keysProjection = projectionOf('api_keys', {
  async ApiKeyCreated(tx, e: RecordedEvent<EventData<'ApiKeyCreated'>>) {
    const d = e.data;
    await tx.query(
      `WITH created AS (
         INSERT INTO api_keys (id, workspace_id, key_hash, prefix, name, rate_limit_per_minute, created_at, mode)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $10) RETURNING key_hash
       )
       SELECT pg_notify($8, $9) FROM created`,
      [d.key_id, d.workspace_id, d.key_hash, d.prefix, d.name, d.rate_limit_per_minute, e.recordedAt, KEY_CHANGES_CHANNEL, keyCreatedPayload(d.key_hash), d.mode ?? 'live'],
    );
  },
  async ApiKeyRevoked(tx, e: RecordedEvent<EventData<'ApiKeyRevoked'>>) {
    await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [e.data.key_id, e.recordedAt]);
  },
});

/**
 * The cache index: entity data plus every alias that leads to it, and cached not-founds. An alias
 * can be written from two streams (an entity's and a not-found's) whose commits may land in either
 * order; the higher log position wins, so a rebuild in log order gives the same rows.
 */
export const cacheProjection = projectionOf('cache_index', {
  async ProfileFetched(tx, e: RecordedEvent<EventData<'ProfileFetched'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO cache_entities (entity, kind, data, content_hash, fetched_at, position)
       VALUES ($1, $2, $3::json, $4, $5, $6)
       ON CONFLICT (entity) DO UPDATE SET data = EXCLUDED.data, content_hash = EXCLUDED.content_hash,
         fetched_at = EXCLUDED.fetched_at, position = EXCLUDED.position
       WHERE cache_entities.position < EXCLUDED.position`,
      [d.entity, d.kind, JSON.stringify(d.data), d.content_hash, d.fetched_at, e.position],
    );
    await tx.query(
      `INSERT INTO cache_aliases (alias, kind, entity, code, reason, fetched_at, position)
       SELECT a, $2, $3, NULL, NULL, $4, $5 FROM unnest($1::text[]) AS a
       ON CONFLICT (alias) DO UPDATE SET entity = EXCLUDED.entity, code = NULL, reason = NULL,
         fetched_at = EXCLUDED.fetched_at, position = EXCLUDED.position
       WHERE cache_aliases.position < EXCLUDED.position`,
      [d.aliases, d.kind, d.entity, d.fetched_at, e.position],
    );
    // Instances keeping the index in memory drop these aliases once this commits.
    await tx.query('SELECT pg_notify($1, a) FROM unnest($2::text[]) AS a', [CACHE_CHANGES_CHANNEL, cacheAliasesChangedBy(e)]);
  },
  async ProfileNotFound(tx, e: RecordedEvent<EventData<'ProfileNotFound'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO cache_aliases (alias, kind, entity, code, reason, fetched_at, position)
       VALUES ($1, $2, NULL, $3, $4, $5, $6)
       ON CONFLICT (alias) DO UPDATE SET entity = NULL, code = EXCLUDED.code, reason = EXCLUDED.reason,
         fetched_at = EXCLUDED.fetched_at, position = EXCLUDED.position
       WHERE cache_aliases.position < EXCLUDED.position`,
      [d.alias, d.kind, d.code, d.reason, d.fetched_at, e.position],
    );
    await tx.query('SELECT pg_notify($1, a) FROM unnest($2::text[]) AS a', [CACHE_CHANGES_CHANNEL, cacheAliasesChangedBy(e)]);
  },
});

export const INLINE_PROJECTIONS = [ledgerProjection, keysProjection, cacheProjection, membersProjection];

/** Tables each inline projection owns, for rebuilds. */
export const INLINE_TABLES: Record<string, string[]> = {
  ledger: ['workspaces', 'ledger_entries', 'charges'],
  api_keys: ['api_keys'],
  cache_index: ['cache_entities', 'cache_aliases'],
  console: MEMBERS_PROJECTION_TABLES,
};
