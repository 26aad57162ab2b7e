// The lookup service on embedded PGlite and the in-process sandbox network: what each outcome
// returns as billing, and what it leaves in the ledger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../contracts/errors';
import { newRequestId } from '../../../services/common/ids';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { Ledger } from '../../../services/ledger/ledger';
import { LookupService, type Caller } from '../../../services/lookup/lookup-service';
import { failuresAfterCharge } from '../../../services/metrics/metrics';
import { createHttpSource } from '../../../services/lookup/source/http-source';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { CHANGING_COMPANY_SLUG } from '../../../services/sandbox/fixed';
import { startSandbox, type Sandbox } from '../../../services/sandbox/server';
import { accountsOf } from '../../support/accounts';

const DAY = 86_400;
let sql: Sql;
let ledger: Ledger;
let accounts: ReturnType<typeof accountsOf>;
let sandbox: Sandbox;
let lookups: LookupService;
/** The service's clock, moved forward by tests that need an old cached copy. */
let now = new Date('2025-06-01T12:00:00.000Z');

beforeAll(async () => {
  sql = await createPgliteSql();
  await migrate(sql);
  const store = new EventStore(sql, INLINE_PROJECTIONS);
  ledger = new Ledger(store);
  accounts = accountsOf(store);
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  lookups = new LookupService(sql, ledger, createHttpSource({ baseUrl: sandbox.url, timeoutMs: 1_000 }), () => now);
}, 60_000);

afterAll(async () => {
  await ledger?.close();
  await sandbox?.close();
  await sql?.close();
});

async function workspace(credits: number) {
  const ws = await accounts.workspaces.create({ name: 'lookup-service test', credits });
  return { ws, caller: (): Caller => ({ requestId: newRequestId(), workspaceId: ws.id, keyId: 'key_lookupservicetest', mode: 'live' }) };
}

/** The ledger's lines of one request: signed credits by event type. */
async function ledgerLines(workspaceId: string, requestId: string) {
  const { data } = await accounts.reads.ledgerEntries(workspaceId, { requestId, limit: 100 });
  return data.map((entry) => [entry.type, entry.credits]);
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('LookupService', () => {
  it('a live fetch (MISS) returns the answer and its billing; a HIT is charged like it; an old copy is a REFRESH', async () => {
    const { ws, caller } = await workspace(10);
    const first = caller();
    const miss = await lookups.company(first, { kind: 'slug', slug: 'acme-robotics' }, 30 * DAY);
    expect(miss.answer.cache).toMatchObject({ status: 'MISS', age_seconds: 0 });
    expect(miss.answer.data).toMatchObject({ id: '1337', slug: 'acme-robotics' });
    expect(miss.billing).toEqual({ charged: 1, balance: 9 });
    expect(await ledgerLines(ws.id, first.requestId)).toEqual([['LookupCharged', -1]]);

    const hit = await lookups.company(caller(), { kind: 'id', id: '1337' }, 30 * DAY);
    expect(hit.answer.cache.status).toBe('HIT');
    expect(hit.answer.contentHash).toBe(miss.answer.contentHash);
    expect(hit.billing).toEqual({ charged: 1, balance: 8 });

    now = new Date(now.getTime() + 2 * DAY * 1000);
    const refresh = await lookups.company(caller(), { kind: 'slug', slug: 'acme-robotics-inc' }, DAY);
    expect(refresh.answer.cache).toMatchObject({ status: 'REFRESH', age_seconds: 0 });
    expect(refresh.billing).toEqual({ charged: 1, balance: 7 });
    expect((await accounts.workspaces.get(ws.id))!.balance).toBe(7);
  });

  it('a domain lookup says which domain it resolved and whether the website confirms it, at 4 credits', async () => {
    const { caller } = await workspace(10);
    const globex = await lookups.domain(caller(), 'globex.com', 30 * DAY);
    expect(globex.answer.resolved).toEqual({ domain: 'globex.com', confirmed: false });
    expect(globex.billing).toEqual({ charged: 4, balance: 6 });
  });

  it('a live not-found costs the not-found price (the difference refunded); from the cache it is free', async () => {
    const { ws, caller } = await workspace(10);
    const live = caller();
    const notFound = await refusal(lookups.person(live, { kind: 'name', name: 'Zebulon Servicetest', normalizedName: 'zebulon servicetest' }, 30 * DAY));
    expect(notFound).toMatchObject({ code: 'not_found', reason: 'no_profile_for_name', billing: { charged: 1, balance: 9 } });
    expect(await ledgerLines(ws.id, live.requestId)).toEqual([
      ['LookupCharged', -3],
      ['LookupRefunded', 2],
    ]);

    const cached = caller();
    const again = await refusal(lookups.person(cached, { kind: 'name', name: 'Zebulon Servicetest', normalizedName: 'zebulon servicetest' }, 30 * DAY));
    expect(again).toMatchObject({ code: 'not_found', reason: 'no_profile_for_name', billing: { charged: 0, balance: 9 } });
    expect(await ledgerLines(ws.id, cached.requestId)).toEqual([]);

    const unresolvable = await refusal(lookups.company(caller(), { kind: 'id', id: '999999999' }, 30 * DAY));
    expect(unresolvable).toMatchObject({ code: 'unresolvable_id', reason: 'no_public_page', billing: { charged: 1, balance: 8 } });
  });

  it('a failure of the source is refunded in full: billing shows 0 and the ledger holds the charge and its refund', async () => {
    const { ws, caller } = await workspace(10);
    for (const [slug, code] of [
      ['sandbox-upstream-error', 'upstream_error'],
      ['sandbox-blocked', 'blocked'],
      ['sandbox-parse-error', 'parse_error'],
    ] as const) {
      const call = caller();
      const failed = await refusal(lookups.company(call, { kind: 'slug', slug }, 30 * DAY));
      expect(failed).toMatchObject({ code, billing: { charged: 0, balance: 10 } });
      expect(await ledgerLines(ws.id, call.requestId)).toEqual([
        ['LookupCharged', -1],
        ['LookupRefunded', 1],
      ]);
    }
  });

  it('a write refused after the charge (no outage) is refunded in the same answer: internal_error with nothing charged, settled once', async () => {
    // A real refusal by the database: a trigger on the log that refuses this company's ProfileFetched.
    await sql.query(`
      CREATE FUNCTION refuse_profile_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'profile write refused by the test' USING ERRCODE = 'check_violation';
      END $$`);
    await sql.query(`CREATE TRIGGER refuse_profile_write BEFORE INSERT ON events
      FOR EACH ROW WHEN (NEW.type = 'ProfileFetched' AND NEW.data->'data'->>'id' = '7001') EXECUTE FUNCTION refuse_profile_write()`);
    try {
      const { ws, caller } = await workspace(10);
      const call = caller();
      const failed = await refusal(lookups.company(call, { kind: 'slug', slug: CHANGING_COMPANY_SLUG }, 30 * DAY));
      expect(failed).toMatchObject({ code: 'internal_error', billing: { charged: 0, balance: 10 } });
      expect(await ledgerLines(ws.id, call.requestId)).toEqual([
        ['LookupCharged', -1],
        ['LookupRefunded', 1],
      ]);
      expect((await accounts.workspaces.get(ws.id))!.balance).toBe(10);
      const { rows } = await sql.query<{ settled: boolean; refunded_credits: number }>('SELECT settled, refunded_credits FROM charges WHERE request_id = $1', [call.requestId]);
      expect(rows).toEqual([{ settled: true, refunded_credits: 1 }]);
      // Nothing left for the abandoned-charge sweeper.
      expect(await ledger.refundAbandonedCharges(0)).toBe(0);
      expect(await failuresAfterCharge.get()).toMatchObject({ values: expect.arrayContaining([expect.objectContaining({ labels: { operation: 'company', refund: 'in_answer' }, value: 1 })]) });
    } finally {
      await sql.query('DROP TRIGGER refuse_profile_write ON events');
      await sql.query('DROP FUNCTION refuse_profile_write()');
    }
  });

  it('a refund that cannot be written either: internal_error says the charge stands, and the sweeper refunds it later', async () => {
    const { ws, caller } = await workspace(10);
    await sql.query(`
      CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'write refused by the test' USING ERRCODE = 'check_violation';
      END $$`);
    await sql.query(`CREATE TRIGGER refuse_writes BEFORE INSERT ON events FOR EACH ROW
      WHEN ((NEW.type = 'ProfileFetched' AND NEW.data->'data'->>'id' = '7001') OR (NEW.type = 'LookupRefunded' AND NEW.data->>'workspace_id' = '${ws.id}'))
      EXECUTE FUNCTION refuse_writes()`);
    const call = caller();
    try {
      const failed = await refusal(lookups.company(call, { kind: 'slug', slug: CHANGING_COMPANY_SLUG }, 0));
      expect(failed).toMatchObject({ code: 'internal_error', billing: { charged: 1, balance: 9 } });
      expect(failed.cause).toBeInstanceOf(AggregateError);
      expect(await ledgerLines(ws.id, call.requestId)).toEqual([['LookupCharged', -1]]);
      expect(await failuresAfterCharge.get()).toMatchObject({ values: expect.arrayContaining([expect.objectContaining({ labels: { operation: 'company', refund: 'failed' }, value: 1 })]) });
    } finally {
      await sql.query('DROP TRIGGER refuse_writes ON events');
      await sql.query('DROP FUNCTION refuse_writes()');
    }
    expect(await ledger.refundAbandonedCharges(0)).toBe(1);
    expect(await ledgerLines(ws.id, call.requestId)).toEqual([
      ['LookupCharged', -1],
      ['LookupRefunded', 1],
    ]);
  });

  it('a balance below the success price is refused with the balance and nothing charged', async () => {
    const { ws, caller } = await workspace(3);
    const call = caller();
    const refused = await refusal(lookups.domain(call, 'acmerobotics.com', 30 * DAY));
    expect(refused).toMatchObject({ code: 'insufficient_credits', billing: { charged: 0, balance: 3 } });
    expect(await ledgerLines(ws.id, call.requestId)).toEqual([]);
  });

  it('search pages are cached per query and limit', async () => {
    const { caller } = await workspace(10);
    const first = await lookups.search(caller(), 'Acme  Robotics', 3, 30 * DAY);
    expect(first.answer.cache.status).toBe('MISS');
    expect((first.answer.data.results as unknown[]).length).toBeLessThanOrEqual(3);
    const second = await lookups.search(caller(), 'acme robotics', 3, 30 * DAY);
    expect(second.answer.cache.status).toBe('HIT');
    expect(second.billing).toEqual({ charged: 1, balance: 8 });
    expect((await lookups.search(caller(), 'acme robotics', 4, 30 * DAY)).answer.cache.status).toBe('MISS');
  });
});
