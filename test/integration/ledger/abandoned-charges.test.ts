import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { newRequestId } from '../../../services/common/ids';
import { Ledger } from '../../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { accountsOf } from '../../support/accounts';

describe('charges whose lookup never completed', () => {
  let sql: Sql;
  let ledger: Ledger;
  let accounts: ReturnType<typeof accountsOf>;
  beforeAll(async () => {
    sql = await createPgliteSql();
    await migrate(sql);
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    ledger = new Ledger(store);
    accounts = accountsOf(store);
  });
  afterAll(async () => sql?.close());

  it('given a charge left unsettled by a dead instance, when the sweep runs past the grace period, then it is refunded exactly once', async () => {
    const ws = await accounts.workspaces.create({ name: 'w', credits: 10 });
    const key = await accounts.keys.create(ws.id, {});
    const abandoned = newRequestId();
    const completed = newRequestId();
    await ledger.charge({ workspaceId: ws.id, requestId: abandoned, keyId: key.id, operation: 'domain', credits: 4 });
    await ledger.charge({ workspaceId: ws.id, requestId: completed, keyId: key.id, operation: 'company', credits: 1 });
    await ledger.settle({ workspaceId: ws.id, requestId: completed, keyId: key.id, operation: 'company', completed: { outcome: 'success', cache_status: 'MISS', credits_charged: 1, error_code: null } });
    expect(await accounts.reads.balance(ws.id)).toBe(5);

    expect(await ledger.refundAbandonedCharges(60_000)).toBe(0); // still within the grace period
    await sql.query("UPDATE charges SET charged_at = charged_at - interval '2 minutes'");
    const [first, second] = await Promise.all([ledger.refundAbandonedCharges(60_000), ledger.refundAbandonedCharges(60_000)]);
    expect(first + second).toBe(1);
    expect(await accounts.reads.balance(ws.id)).toBe(9);
    expect(await ledger.refundAbandonedCharges(60_000)).toBe(0);

    const entries = await accounts.reads.ledgerEntries(ws.id, { requestId: abandoned, limit: 10 });
    expect(entries.data.map((e) => [e.type, e.credits])).toEqual([['LookupCharged', -4], ['LookupRefunded', 4]]);
  });
});
