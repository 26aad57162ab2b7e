import type { EventData } from '../../contracts/events';
import type { InlineProjection } from '../eventstore/event-store';
import type { RecordedEvent } from '../eventstore/types';
import { KEY_CHANGES_CHANNEL, keyCreatedPayload } from '../keys/authenticator';
import { CACHE_CHANGES_CHANNEL, cacheAliasesChangedBy } from '../lookup/cache-index-memory';
import { MEMBERS_PROJECTION_TABLES, membersProjection } from './members';
import { projectionOf } from './handlers';
import { lockedWorkspaceKey, SELECT_WORKSPACES_FOR_UPDATE, workspaceRowOf, type WorkspaceRow } from '../ledger/locked-workspace';
import { chargeRowsToStore, planLedgerWrites, workspacesTouched } from './ledger-plan';

const iso = (d: Date) => d.toISOString();

/**
 * Workspace balance and limits, the ledger view with balance_after, and the charges not settled
 * in their own transaction (chargeRowsToStore). Set-based:
 * one read of the touched workspaces (locked, in id order) unless the transaction has locked them
 * already, the pure plan, then one statement writing every table, however many events there
 * are: a batch of charges costs the same statements as one charge.
 */
export const ledgerProjection: InlineProjection & { types: string[] } = {
  name: 'ledger',
  types: ['WorkspaceCreated', 'CreditsGranted', 'LimitsChanged', 'LookupCharged', 'LookupRefunded', 'LookupCompleted'],
  async apply(tx, events, locked = new Map()) {
    const current = new Map<string, WorkspaceRow>();
    const unread: string[] = [];
    for (const id of workspacesTouched(events)) {
      const row = locked.get(lockedWorkspaceKey(id)) as WorkspaceRow | undefined;
      if (row) current.set(id, row);
      else unread.push(id);
    }
    if (unread.length > 0) {
      const { rows } = await tx.query<WorkspaceRow>(SELECT_WORKSPACES_FOR_UPDATE, [unread]);
      for (const r of rows) current.set(r.id, workspaceRowOf(r));
    }
    const plan = planLedgerWrites(current, events);
    const { workspaces: ws, ledgerEntries: le } = plan;
    const ch = chargeRowsToStore(plan);
    for (const w of ws) locked.set(lockedWorkspaceKey(w.id), w);
    // Earlier charges refunded and/or settled here, one row each (a statement may not update a row twice).
    const earlier = new Map<string, { credits: number | null; settled: boolean }>();
    for (const r of plan.refunds) earlier.set(r.request_id, { credits: r.credits, settled: false });
    for (const id of plan.settled) earlier.set(id, { credits: earlier.get(id)?.credits ?? null, settled: true });
    if (ws.length + le.length + ch.length + earlier.size === 0) return;
    // Every table in ONE statement (one round trip per batch, however many events): each part
    // writes nothing when its arrays are empty.
    // Nobody reads its result: it goes with the transaction's next statement or its COMMIT.
    tx.deferWrite(
      `WITH upsert_workspaces AS (
         INSERT INTO workspaces (id, name, balance, max_concurrency, created_at, last_ledger_hash)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::timestamptz[], $6::text[])
         ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, max_concurrency = EXCLUDED.max_concurrency,
           last_ledger_hash = EXCLUDED.last_ledger_hash
       ), insert_entries AS (
         INSERT INTO ledger_entries (position, workspace_id, type, request_id, key_id, credits, balance_after, recorded_at)
         SELECT * FROM unnest($7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::timestamptz[])
       ), insert_charges AS (
         INSERT INTO charges (request_id, workspace_id, key_id, operation, credits, charged_at, refunded_credits, settled)
         SELECT * FROM unnest($15::text[], $16::text[], $17::text[], $18::text[], $19::bigint[], $20::timestamptz[], $21::bigint[], $22::boolean[])
       )
       UPDATE charges c SET refunded_credits = coalesce(u.credits, c.refunded_credits), settled = c.settled OR u.settled
         FROM unnest($23::text[], $24::bigint[], $25::boolean[]) AS u(request_id, credits, settled)
        WHERE c.request_id = u.request_id`,
      [
        ws.map((w) => w.id), ws.map((w) => w.name), ws.map((w) => w.balance), ws.map((w) => w.max_concurrency), ws.map((w) => iso(w.created_at)), ws.map((w) => w.last_ledger_hash),
        le.map((x) => x.position), le.map((x) => x.workspace_id), le.map((x) => x.type), le.map((x) => x.request_id),
        le.map((x) => x.key_id), le.map((x) => x.credits), le.map((x) => x.balance_after), le.map((x) => iso(x.recorded_at)),
        ch.map((c) => c.request_id), ch.map((c) => c.workspace_id), ch.map((c) => c.key_id), ch.map((c) => c.operation),
        ch.map((c) => c.credits), ch.map((c) => iso(c.charged_at)), ch.map((c) => c.refunded_credits), ch.map((c) => c.settled),
        [...earlier.keys()], [...earlier.values()].map((u) => u.credits), [...earlier.values()].map((u) => u.settled),
      ],
    );
  },
};

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
