// The two backends every ledger and projection suite runs on: embedded PGlite, and a private
// database on the real PostgreSQL server of DATABASE_URL (skipped loudly without one, an error under CI).
import { createHash } from 'node:crypto';
import { newEvent, streams, type RefundCause } from '../../../contracts/events';
import { newRequestId } from '../../../services/common/ids';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { NewEvent } from '../../../services/eventstore/types';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { accountsOf } from '../../support/accounts';
import { createTestDatabase, serverUrl } from '../../support/servers';

export interface OpenBackend {
  sql: Sql;
  store: EventStore;
  ledger: Ledger;
  workspaces: ReturnType<typeof accountsOf>['workspaces'];
  keys: ReturnType<typeof accountsOf>['keys'];
  reads: ReturnType<typeof accountsOf>['reads'];
  /**
   * Another service instance on the same database: on PostgreSQL its own pool (its own
   * connections, so its transactions really race); on PGlite, which has one connection, a
   * second Ledger over the same database.
   */
  anotherLedger(): Ledger;
  /** Another instance's workspaces, keys and reads (as anotherLedger). */
  another(): ReturnType<typeof accountsOf>;
  cleanup(): Promise<void>;
}

export interface Backend {
  name: string;
  open(): Promise<OpenBackend>;
}

async function wire(sql: Sql) {
  await migrate(sql);
  const store = new EventStore(sql, INLINE_PROJECTIONS);
  return { store, ledger: new Ledger(store), ...accountsOf(store) };
}

export function ledgerBackends(): Backend[] {
  const backends: Backend[] = [
    {
      name: 'PGlite',
      async open() {
        const sql = await createPgliteSql();
        const wired = await wire(sql);
        const anotherStore = () => new EventStore(sql, INLINE_PROJECTIONS);
        return { sql, ...wired, anotherLedger: () => new Ledger(anotherStore()), another: () => accountsOf(anotherStore()), cleanup: () => sql.close() };
      },
    },
  ];
  if (serverUrl('postgres')) {
    backends.push({
      name: 'PostgreSQL',
      async open() {
        const db = await createTestDatabase();
        const sql = createPgSql(db.url);
        const wired = await wire(sql);
        const others: Sql[] = [];
        const anotherStore = () => {
          const other = createPgSql(db.url, { max: 5 });
          others.push(other);
          return new EventStore(other, INLINE_PROJECTIONS);
        };
        return {
          sql,
          ...wired,
          anotherLedger: () => new Ledger(anotherStore()),
          another: () => accountsOf(anotherStore()),
          async cleanup() {
            for (const other of others) await other.close();
            await sql.close();
            await db.drop();
          },
        };
      },
    });
  }
  return backends;
}

export const hashOf = (value: unknown) => `sha256:${createHash('sha256').update(JSON.stringify(value)).digest('hex')}`;

/**
 * A little of everything the log holds: workspaces, grants, limit changes, keys (one revoked),
 * charges, refunds (whole and partial), uncharged calls, fetched profiles with aliases, an
 * alias moving from one entity to a not-found and back.
 */
export async function seedWorkload({ ledger, workspaces, keys }: Pick<OpenBackend, 'ledger' | 'workspaces' | 'keys'>) {
  const a = await workspaces.create({ name: 'Acme', credits: 50 });
  const b = await workspaces.create({ name: 'Globex', credits: 5, maxConcurrency: 2 });
  const empty = await workspaces.create({ name: 'Empty' });
  await ledger.grantCredits(b.id, 20, 'top-up');
  await workspaces.changeLimits(a.id, 4);
  const keyA = await keys.create(a.id, { name: 'server', rateLimitPerMinute: 120 });
  const keyA2 = await keys.create(a.id, {});
  const keyB = await keys.create(b.id, { name: 'batch' });
  await keys.revoke(keyA2.id);

  const fetchedAt = new Date('2025-01-02T03:04:05.000Z').toISOString();
  const profile = (entity: string, name: string, aliases: string[]) => {
    const data = { id: entity, name };
    return {
      stream: streams.company(entity),
      event: newEvent('ProfileFetched', { entity, kind: 'company', data, content_hash: hashOf(data), fetched_at: fetchedAt, aliases }),
    };
  };
  const notFound = (alias: string) => ({
    stream: streams.notFound(alias),
    event: newEvent('ProfileNotFound', { kind: 'company', alias, code: 'not_found', reason: 'no_company', fetched_at: fetchedAt }),
  });

  const requests: string[] = [];
  const call = async (
    workspaceId: string,
    keyId: string,
    operation: 'company' | 'domain' | 'person_name',
    credits: number,
    outcome: 'success' | 'not_found' | 'error',
    extra: { refund?: { owed: number; cause: RefundCause }; entityEvents?: Array<{ stream: string; event: NewEvent }> } = {},
  ) => {
    const requestId = newRequestId();
    requests.push(requestId);
    const charged = await ledger.charge({ workspaceId, requestId, keyId, operation, credits });
    if (charged.kind !== 'charged') throw new Error(`seed charge refused in ${workspaceId}`);
    await ledger.settle({
      workspaceId,
      requestId,
      keyId,
      operation,
      ...extra,
      completed: {
        outcome,
        cache_status: 'MISS',
        credits_charged: credits - (extra.refund?.owed ?? 0),
        error_code: outcome === 'error' ? 'upstream_error' : outcome === 'not_found' ? 'not_found' : null,
      },
    });
    return requestId;
  };

  await call(a.id, keyA.id, 'company', 1, 'success', { entityEvents: [profile('1337', 'Acme Robotics', ['acme-robotics', 'acme-robotics-inc', '1337'])] });
  await call(a.id, keyA.id, 'domain', 4, 'error', { refund: { owed: 4, cause: 'upstream_error' } });
  await call(a.id, keyA.id, 'person_name', 3, 'not_found', { refund: { owed: 2, cause: 'not_found_price' } });
  await call(b.id, keyB.id, 'company', 1, 'not_found', { entityEvents: [notFound('ghost-co')] });
  await call(b.id, keyB.id, 'company', 1, 'success', { entityEvents: [profile('4242', 'Globex', ['globex', '4242', 'ghost-co'])] });
  await call(b.id, keyB.id, 'company', 1, 'success', { entityEvents: [profile('4242', 'Globex Corp', ['globex', '4242'])] });
  await call(a.id, keyA.id, 'company', 1, 'not_found', { entityEvents: [notFound('acme-robotics-inc')] });
  // A cache hit: charged and completed in one transaction.
  await ledger.charge({
    workspaceId: a.id,
    requestId: newRequestId(),
    keyId: keyA.id,
    operation: 'company',
    credits: 1,
    completed: { outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null },
  });
  // A free not-found from the cache.
  await ledger.recordUncharged({
    workspaceId: a.id,
    requestId: newRequestId(),
    keyId: keyA.id,
    operation: 'company',
    completed: { outcome: 'not_found', cache_status: 'HIT', credits_charged: 0, error_code: 'not_found' },
  });
  return { a, b, empty, keyA, keyA2, keyB, requests };
}
