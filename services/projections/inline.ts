import type { EventData } from '../../contracts/events';
import type { InlineProjection } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import type { RecordedEvent } from '../eventstore/types';
import { planLedgerWrites, workspacesTouched, type WorkspaceRow } from './ledger-plan';

export { InsufficientCreditsError } from './ledger-plan';

type Handler = (tx: SqlExecutor, e: RecordedEvent<any>) => Promise<void>;

function projection(name: string, handlers: Record<string, Handler>): InlineProjection & { types: string[] } {
  return {
    name,
    types: Object.keys(handlers),
    async apply(tx, events) {
      for (const e of events) await handlers[e.type]?.(tx, e);
    },
  };
}

const iso = (d: Date) => d.toISOString();

/**
 * Workspace balance and limits, the ledger view with balance_after, and the charges. Set-based:
 * one read of the touched workspaces (locked, in id order), the pure plan, then one statement per
 * table written, however many events there are: a batch of charges costs the same few statements
 * as one charge.
 */
export const ledgerProjection: InlineProjection & { types: string[] } = {
  name: 'ledger',
  types: ['WorkspaceCreated', 'CreditsGranted', 'LimitsChanged', 'LookupCharged', 'LookupRefunded', 'LookupCompleted'],
  async apply(tx, events) {
    const ids = workspacesTouched(events);
    const current = new Map<string, WorkspaceRow>();
    if (ids.length > 0) {
      const { rows } = await tx.query<WorkspaceRow>(
        'SELECT id, name, balance, max_concurrency, created_at FROM workspaces WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
        [ids],
      );
      for (const r of rows) {
        current.set(r.id, { ...r, balance: Number(r.balance), max_concurrency: Number(r.max_concurrency), created_at: new Date(r.created_at) });
      }
    }
    const plan = planLedgerWrites(current, events);
    const ws = plan.workspaces;
    if (ws.length > 0) {
      await tx.query(
        `INSERT INTO workspaces (id, name, balance, max_concurrency, created_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::timestamptz[])
         ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, max_concurrency = EXCLUDED.max_concurrency`,
        [ws.map((w) => w.id), ws.map((w) => w.name), ws.map((w) => w.balance), ws.map((w) => w.max_concurrency), ws.map((w) => iso(w.created_at))],
      );
    }
    const le = plan.ledgerEntries;
    if (le.length > 0) {
      await tx.query(
        `INSERT INTO ledger_entries (position, workspace_id, type, request_id, key_id, credits, balance_after, recorded_at)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::timestamptz[])`,
        [
          le.map((x) => x.position), le.map((x) => x.workspace_id), le.map((x) => x.type), le.map((x) => x.request_id),
          le.map((x) => x.key_id), le.map((x) => x.credits), le.map((x) => x.balance_after), le.map((x) => iso(x.recorded_at)),
        ],
      );
    }
    const ch = plan.newCharges;
    if (ch.length > 0) {
      await tx.query(
        `INSERT INTO charges (request_id, workspace_id, key_id, operation, credits, charged_at, refunded_credits, settled)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::bigint[], $8::boolean[])`,
        [
          ch.map((c) => c.request_id), ch.map((c) => c.workspace_id), ch.map((c) => c.key_id), ch.map((c) => c.operation),
          ch.map((c) => c.credits), ch.map((c) => iso(c.charged_at)), ch.map((c) => c.refunded_credits), ch.map((c) => c.settled),
        ],
      );
    }
    if (plan.refunds.length > 0) {
      await tx.query(
        `UPDATE charges c SET refunded_credits = r.credits
           FROM unnest($1::text[], $2::bigint[]) AS r(request_id, credits) WHERE c.request_id = r.request_id`,
        [plan.refunds.map((r) => r.request_id), plan.refunds.map((r) => r.credits)],
      );
    }
    if (plan.settled.length > 0) {
      await tx.query('UPDATE charges SET settled = true WHERE request_id = ANY($1::text[])', [plan.settled]);
    }
  },
};

/** API keys, read by authentication; revocation is visible the moment it commits. */
export const keysProjection = projection('api_keys', {
  async ApiKeyCreated(tx, e: RecordedEvent<EventData<'ApiKeyCreated'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO api_keys (id, workspace_id, key_hash, prefix, name, rate_limit_per_minute, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [d.key_id, d.workspace_id, d.key_hash, d.prefix, d.name, d.rate_limit_per_minute, e.recordedAt],
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
export const cacheProjection = projection('cache_index', {
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
  },
});

export const INLINE_PROJECTIONS = [ledgerProjection, keysProjection, cacheProjection];

/** Tables each inline projection owns, for rebuilds. */
export const INLINE_TABLES: Record<string, string[]> = {
  ledger: ['workspaces', 'ledger_entries', 'charges'],
  api_keys: ['api_keys'],
  cache_index: ['cache_entities', 'cache_aliases'],
};
