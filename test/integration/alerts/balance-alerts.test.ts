// Low-balance alerts on PostgreSQL, two instances watching one log: a threshold crossed downwards
// appends one BalanceLow and sends one email to each owner (through a real SMTP server), once per
// crossing however many charges follow; a grant back above re-arms it; the ledger is untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEvent } from '../../../contracts/events';
import { balanceAlertsHandler, balanceAlertsStream, BalanceThresholds } from '../../../services/alerts/balance-alerts';
import { newRequestId } from '../../../services/common/ids';
import { EmailSender } from '../../../services/email/email-outbox';
import { createSmtpMailer } from '../../../services/email/smtp-mailer';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { catchUpToNow } from '../../../services/eventstore/subscription';
import { Keys } from '../../../services/keys/keys';
import { Ledger } from '../../../services/ledger/ledger';
import { Workspaces } from '../../../services/workspaces/workspaces';
import { membersStream } from '../../../services/members/membership';
import { sha256Hex } from '../../../services/members/rules';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { startTestSmtpServer, type TestSmtpServer } from '../../support/smtp-server';

const silent = { info() {}, warn() {}, error() {} };

describe.runIf(serverUrl('postgres'))('balance alerts on PostgreSQL, two instances', () => {
  let database: TestDatabase;
  let sqls: Sql[];
  let stores: EventStore[];
  let ledger: Ledger;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    sqls = [createPgSql(database.url), createPgSql(database.url)];
    await migrate(sqls[0]!);
    stores = sqls.map((sql) => new EventStore(sql, INLINE_PROJECTIONS));
    ledger = new Ledger(stores[0]!);
    smtp = await startTestSmtpServer();
  });
  afterAll(async () => {
    await ledger?.close();
    await smtp?.close();
    for (const sql of sqls ?? []) await sql.close();
    await database?.drop();
  });

  /** Both instances work the subscription at once, until everything committed is handled. */
  const watchBoth = () =>
    Promise.all(stores.map((store) => catchUpToNow(store, balanceAlertsHandler(store, { consoleUrl: () => 'http://console.test/console/overview', logger: silent }))));

  async function withOwner(name: string, credits: number, owner: string) {
    const ws = await new Workspaces(stores[0]!).create({ name, credits });
    await stores[0]!.append(membersStream(ws.id), [
      newEvent('MemberInvited', { workspace_id: ws.id, invitation_id: `inv_${ws.id.slice(3)}`, email: owner, role: 'owner', token_hash: sha256Hex(ws.id), expires_at: '2999-01-01T00:00:00.000Z', actor: 'operator' }),
      newEvent('InvitationAccepted', { workspace_id: ws.id, invitation_id: `inv_${ws.id.slice(3)}`, member_id: `mem_${ws.id.slice(3)}`, email: owner, role: 'owner', actor: `mem_${ws.id.slice(3)}` }),
    ]);
    const key = await new Keys(stores[0]!, { revoked: async () => {} }).create(ws.id, {});
    const charge = (credits: number) => ledger.charge({ workspaceId: ws.id, requestId: newRequestId(), keyId: key.id, operation: 'company', credits });
    const testCharge = () => ledger.charge({ workspaceId: ws.id, requestId: newRequestId(), keyId: key.id, operation: 'company', credits: 0, mode: 'test' });
    return { id: ws.id, charge, testCharge };
  }

  const balanceLows = async (workspaceId: string) => (await stores[0]!.readStream(balanceAlertsStream(workspaceId))).filter((e) => e.type === 'BalanceLow');
  const sendMail = () => new EmailSender(sqls[0]!, createSmtpMailer(smtp.url), { from: 'alerts@lookup.test', logger: silent }).sendDue();
  const mailsTo = (to: string) => smtp.received.filter((m) => JSON.stringify(m.to).includes(to));

  it('fires once per downward crossing, re-arms on a grant back above, and emails the owners once each time', async () => {
    const ws = await withOwner('alerts a', 20, 'owner-a@example.com');
    await new BalanceThresholds(stores[0]!).set(ws.id, 10, 'operator');

    await ws.charge(5); // 15
    await ws.charge(5); // 10: at the threshold, not below
    await watchBoth();
    expect(await balanceLows(ws.id)).toHaveLength(0);

    await ws.charge(4); // 6: crosses
    await ws.charge(3); // 3: still below, no second alert
    await watchBoth();
    await ws.charge(3); // 0
    await watchBoth();
    const first = await balanceLows(ws.id);
    expect(first).toHaveLength(1);
    expect(first[0]!.data).toMatchObject({ workspace_id: ws.id, balance: 6, low_balance_threshold: 10 });
    await sendMail();
    expect(mailsTo('owner-a@example.com')).toHaveLength(1);
    expect(mailsTo('owner-a@example.com')[0]!.subject).toContain('6 credits left');

    await ledger.grantCredits(ws.id, 30); // 30: re-armed
    await ws.charge(25); // 5: crosses again
    await watchBoth();
    expect((await balanceLows(ws.id)).map((e) => (e.data as { balance: number }).balance)).toEqual([6, 5]);
    await sendMail();
    expect(mailsTo('owner-a@example.com')).toHaveLength(2);
    // The ledger knows nothing of it: its entries are the charges and grants only.
    const { rows } = await sqls[0]!.query<{ type: string }>('SELECT DISTINCT type FROM ledger_entries WHERE workspace_id = $1', [ws.id]);
    expect(rows.map((r) => r.type).sort()).toEqual(['CreditsGranted', 'LookupCharged']);
  });

  it("a test key's calls (0 credits, mode test) never alert, even while armed below the threshold; the next live charge does", async () => {
    const ws = await withOwner('alerts c', 5, 'owner-c@example.com');
    await new BalanceThresholds(stores[0]!).set(ws.id, 10, 'operator'); // armed, 5 below it
    await ws.testCharge();
    await watchBoth();
    expect(await balanceLows(ws.id)).toHaveLength(0);
    await ws.charge(1); // 4
    await watchBoth();
    expect((await balanceLows(ws.id)).map((e) => (e.data as { balance: number }).balance)).toEqual([4]);
  });

  it('a workspace without a threshold, or whose threshold was removed, is never alerted', async () => {
    const ws = await withOwner('alerts b', 5, 'owner-b@example.com');
    await ws.charge(4);
    await new BalanceThresholds(stores[0]!).set(ws.id, 100, 'operator');
    await new BalanceThresholds(stores[0]!).set(ws.id, null, 'operator');
    await ws.charge(1);
    await watchBoth();
    expect(await balanceLows(ws.id)).toHaveLength(0);
    expect(await new BalanceThresholds(stores[0]!).get(ws.id)).toBeNull();
  });
});
