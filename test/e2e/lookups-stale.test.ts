// End-to-end on PostgreSQL (+ Redis): `on_error: "stale"` over HTTP. The cache holds a copy for a
// sandbox failure trigger's reference (written to the server's database as an earlier fetch would
// have); its refresh fails, the copy answers, and the audit finds the ledger and every projection
// exact. The same flow on the embedded defaults (PGlite) is test/route/lookups-stale.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { contentHash } from '../../contracts/content-hash';
import { newEvent, streams } from '../../contracts/events';
import { backgroundLogger } from '../../services/common/log';
import { EventStore } from '../../services/eventstore/event-store';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { aliases, entities } from '../../services/lookup/aliases';
import { INLINE_PROJECTIONS } from '../../services/projections/inline';
import { expectRateLimitHeaders, ledgerTypes } from './support/contract';
import { backends, newCustomer, startE2eServer, type E2eServer } from './support/harness';

const TWO_DAYS = 2 * 86_400;
const postgres = backends().find((backend) => backend.name === 'PostgreSQL')!;

describe.skipIf(!postgres.available)('on_error "stale" over HTTP on PostgreSQL', () => {
  let server: E2eServer;
  beforeAll(async () => {
    server = await startE2eServer(postgres);
  }, 60_000);
  afterAll(async () => server?.stop());

  test('a failing refresh answers the cached copy (STALE, its Age, the cache-hit price); without the flag the failure, refunded; the audit is exact', async () => {
    const seeder = await newCustomer(server, 10, 'stale seeder');
    const profile = await seeder.post('/v1/company', { url: 'acme-robotics' });
    expect(profile.status).toBe(200);
    const data = profile.body.data as Record<string, unknown>;

    // The copy an earlier fetch of `sandbox-upstream-error` would have left, two days old.
    const sql = createPgSql(server.databaseUrl!, { logger: backgroundLogger('silent') });
    try {
      const fetchedAt = new Date(Date.now() - TWO_DAYS * 1000).toISOString();
      await new EventStore(sql, INLINE_PROJECTIONS).append(streams.company(String(data.id)), [
        newEvent('ProfileFetched', {
          entity: entities.company(String(data.id)),
          kind: 'company',
          data,
          content_hash: contentHash(data),
          fetched_at: fetchedAt,
          aliases: [aliases.companySlug('sandbox-upstream-error')],
        }),
      ]);
    } finally {
      await sql.close();
    }

    const c = await newCustomer(server, 10, 'stale');
    const stale = await c.post('/v1/company', { url: 'sandbox-upstream-error', max_age: 3600, on_error: 'stale' });
    expect(stale.status, JSON.stringify(stale.body)).toBe(200);
    expectRateLimitHeaders(stale);
    expect(stale.headers.get('x-cache')).toBe('STALE');
    expect(Number(stale.headers.get('age'))).toBeGreaterThanOrEqual(TWO_DAYS);
    expect(stale.body.data).toEqual(data);
    expect(stale.body.meta).toMatchObject({ cache: { status: 'STALE' }, credits_charged: 1, credits_remaining: 9 });
    expect(await ledgerTypes(server, c.workspaceId, stale.body.meta.request_id)).toEqual([['LookupCharged', -1]]);

    const failed = await c.post('/v1/company', { url: 'sandbox-upstream-error', max_age: 3600 });
    expect([failed.status, failed.body.error.code, failed.body.meta.credits_charged]).toEqual([502, 'upstream_error', 0]);
    expect(await ledgerTypes(server, c.workspaceId, failed.body.meta.request_id)).toEqual([
      ['LookupCharged', -1],
      ['LookupRefunded', 1],
    ]);
    expect(await c.balance()).toBe(9);

    const audit = await server.admin.audit();
    expect(audit).toMatchObject({ ok: true, mismatches: [] });
  });
});
