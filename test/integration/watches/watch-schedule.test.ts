// The watch schedule on PostgreSQL, two instances (each its own pool, ledger, lookups and source)
// sharing one database, with a slow source: more due watches than one lease could cover are each
// refreshed once and charged once, the ledger showing one charge per refresh. A claim's lease
// covers one refresh (the source's timeout and a margin), so an instance claims the next due watch
// only once the previous refresh is done: one claimed in a batch and left waiting would see its
// lease lapse and be refreshed (and charged) by the other instance too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { Ledger } from '../../../services/ledger/ledger';
import { LookupService } from '../../../services/lookup/lookup-service';
import { createHttpSource } from '../../../services/lookup/source/http-source';
import type { Source } from '../../../services/lookup/source/source';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { ReadModels } from '../../../services/read-models/read-models';
import { startSandbox, type Sandbox } from '../../../services/sandbox/server';
import { WatchService } from '../../../services/watches/watch-service';
import { WebhookStore } from '../../../services/webhooks/webhook-store';
import { accountsOf } from '../../support/accounts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';

const silent = { info() {}, warn() {}, error() {} };
const SOURCE_TIMEOUT_MS = 1_000;
/** What one fetch of the slow source takes, on the instances' shared clock: under a lease (timeout + 60 s), two of them over. */
const SLOW_FETCH_MS = 40_000;
const WATCHES = 6;

/** `source`, each of whose fetches first waits for `beforeFetch` (the slow part). */
function slowed(source: Source, beforeFetch: () => Promise<void>): Source {
  const slow =
    <A extends unknown[], R>(fetch: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      await beforeFetch();
      return fetch(...args);
    };
  return {
    companyBySlug: slow(source.companyBySlug),
    companyById: slow(source.companyById),
    companyByDomain: slow(source.companyByDomain),
    personById: slow(source.personById),
    personByName: slow(source.personByName),
    search: slow(source.search),
  };
}

describe.runIf(serverUrl('postgres'))('watch schedule on PostgreSQL, two instances', () => {
  let database: TestDatabase;
  let sandbox: Sandbox;
  const sqls: Sql[] = [];
  const ledgers: Ledger[] = [];
  /** The clock both instances read: a slow fetch moves it on. */
  let now = new Date('2030-03-01T00:00:00Z');
  const clock = () => now;

  /** One instance: its own pool, event store, ledger, lookups and source. */
  const instance = (source: (inner: Source) => Source) => {
    const sql = createPgSql(database.url);
    sqls.push(sql);
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    const ledger = new Ledger(store);
    ledgers.push(ledger);
    const lookups = new LookupService(sql, ledger, source(createHttpSource({ baseUrl: sandbox.url, timeoutMs: SOURCE_TIMEOUT_MS })), clock);
    return { store, watches: new WatchService(store, lookups, new ReadModels(sql), { logger: silent, sourceTimeoutMs: SOURCE_TIMEOUT_MS, now: clock }) };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const sql = createPgSql(database.url);
    await migrate(sql);
    await sql.close();
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const ledger of ledgers) await ledger.close();
    for (const sql of sqls) await sql.close();
    await sandbox?.close();
    await database?.drop();
  });

  it('more due watches than one lease covers, with a slow source: each is refreshed and charged exactly once across both instances', async () => {
    // Instance B runs a pass of the schedule whenever A's slow fetch has moved the clock on, as
    // another instance polling meanwhile would.
    const b = instance((inner) => inner);
    let refreshedByB = 0;
    const a = instance((inner) =>
      slowed(inner, async () => {
        now = new Date(now.getTime() + SLOW_FETCH_MS);
        refreshedByB += await b.watches.runDue();
      }),
    );
    const accounts = accountsOf(a.store);
    const ws = await accounts.workspaces.create({ name: 'watch schedule', credits: 100 });
    const endpoint = await new WebhookStore(a.store.sql).create(ws.id, { url: 'https://hooks.example.com/in', event_types: ['profile.changed'] });
    const key = await accounts.keys.create(ws.id, { name: 'watches' });
    const ids: string[] = [];
    for (let i = 0; i < WATCHES; i++) {
      const watch = await a.watches.create({ workspaceId: ws.id, keyId: key.id }, { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpoint.id });
      ids.push(watch.id);
    }
    await a.store.sql.query('UPDATE watches SET next_run_at = $1::timestamptz WHERE workspace_id = $2', [now.toISOString(), ws.id]);
    const hitsBefore = sandbox.hits();

    const refreshedByA = await a.watches.runDue();
    refreshedByB += await b.watches.runDue();

    // Every watch was refreshed (none is due again before a day has passed), once each.
    const { rows: watches } = await a.store.sql.query<{ id: string; last_request_id: string | null; next_run_at: Date }>('SELECT id, last_request_id, next_run_at FROM watches WHERE workspace_id = $1', [ws.id]);
    expect(watches).toHaveLength(WATCHES);
    for (const watch of watches) {
      expect(watch.last_request_id).not.toBeNull();
      expect(watch.next_run_at.getTime()).toBeGreaterThan(now.getTime() + 3_600_000);
    }
    expect(sandbox.hits() - hitsBefore).toBe(WATCHES);
    expect(refreshedByA + refreshedByB).toBe(WATCHES);

    // The ledger: one charge per watch, under the request id the watch shows, and the balance to match.
    const { data: entries } = await accounts.reads.ledgerEntries(ws.id, { limit: 100 });
    const charges = entries.filter((entry) => entry.type === 'LookupCharged');
    expect(charges.map((c) => c.request_id).sort()).toEqual(watches.map((w) => w.last_request_id).sort());
    expect(entries.filter((entry) => entry.type === 'LookupRefunded')).toEqual([]);
    expect(await accounts.reads.balance(ws.id)).toBe(100 - WATCHES);
  });

  it('a watch created with a key revoked meanwhile (after its admission) is refused, so no watch outlives its key', async () => {
    const a = instance((inner) => inner);
    const accounts = accountsOf(a.store);
    const ws = await accounts.workspaces.create({ name: 'watch of a revoked key', credits: 100 });
    const endpoint = await new WebhookStore(a.store.sql).create(ws.id, { url: 'https://hooks.example.com/in', event_types: ['profile.changed'] });
    const key = await accounts.keys.create(ws.id, { name: 'leaked' });
    // The call was admitted with the key; the revocation commits before the watch is written.
    expect(await accounts.keys.revoke(key.id)).toMatchObject({ deleted_watches: [] });

    const created = a.watches.create({ workspaceId: ws.id, keyId: key.id }, { operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpoint.id });
    await expect(created).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await a.store.sql.query('SELECT id FROM watches WHERE workspace_id = $1', [ws.id])).rows).toEqual([]);
  });
});
