import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefundCause } from '../../../contracts/events';
import { newRequestId } from '../../../services/common/ids';
import { statement, workspaceAt } from '../../../services/finance/queries';
import { ledgerBackends, type OpenBackend } from './backends';

/**
 * Statements and balances at an instant on a log with grants, charges, refunds and a person-by-name
 * lookup that ended in a not-found (charged 3, 2 back), with period edges falling between, on and
 * around the entries. Edges are taken from the entries' own recording instants (microseconds, as text).
 */
describe.each(ledgerBackends())('statements and balances at an instant on $name', (backendDef) => {
  let backend: OpenBackend;
  let workspaceId: string;
  let entries: { position: number; type: string; credits: number; balance_after: number; at: string }[];

  beforeAll(async () => {
    backend = await backendDef.open();
    const { ledger, workspaces, keys } = backend;
    const ws = await workspaces.create({ name: 'Finance', credits: 100 });
    workspaceId = ws.id;
    const key = await keys.create(ws.id, {});
    const call = async (operation: 'company' | 'domain' | 'person_name', credits: number, refund?: { owed: number; cause: RefundCause }) => {
      const requestId = newRequestId();
      const call = { workspaceId: ws.id, requestId, keyId: key.id, operation };
      expect(await ledger.charge({ ...call, credits })).toMatchObject({ kind: 'charged' });
      return () =>
        ledger.settle({
          ...call,
          refund,
          completed: {
            outcome: refund ? (refund.cause === 'not_found_price' ? 'not_found' : 'error') : 'success',
            cache_status: 'MISS',
            credits_charged: credits - (refund?.owed ?? 0),
            error_code: refund ? (refund.cause === 'not_found_price' ? 'not_found' : 'upstream_error') : null,
          },
        });
    };
    await (await call('company', 1))();
    await ledger.grantCredits(ws.id, 50, 'top-up');
    await (await call('person_name', 3, { owed: 2, cause: 'not_found_price' }))(); // the not-found price: 3 charged, 2 back
    await (await call('domain', 2, { owed: 2, cause: 'upstream_error' }))();
    const pending = await call('person_name', 3, { owed: 2, cause: 'not_found_price' }); // settled after a grant: its refund lands later
    await ledger.grantCredits(ws.id, 10);
    await pending();
    await (await call('company', 1))();

    const { rows } = await backend.sql.query<{ position: number; type: string; credits: number; balance_after: number; at: string }>(
      `SELECT position, type, credits, balance_after, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
         FROM ledger_entries WHERE workspace_id = $1 ORDER BY position`,
      [ws.id],
    );
    entries = rows.map((r) => ({ ...r, position: Number(r.position), credits: Number(r.credits), balance_after: Number(r.balance_after) }));
  });
  afterAll(async () => backend?.cleanup());

  it('records a stream in time order, so the recording instants of the ledger rise with its positions', () => {
    expect(entries.map((e) => e.type)).toEqual([
      'CreditsGranted', 'LookupCharged', 'CreditsGranted', 'LookupCharged', 'LookupRefunded', 'LookupCharged', 'LookupRefunded',
      'LookupCharged', 'CreditsGranted', 'LookupRefunded', 'LookupCharged',
    ]);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.at >= entries[i - 1]!.at).toBe(true);
  });

  it('chains adjacent periods and balances each exactly, every line accounted for once, whatever the edges', async () => {
    const shift = (at: string, micros: number) => {
      const [head, frac] = at.slice(0, -1).split('.');
      const us = Number(frac) + micros;
      return us < 0 || us > 999_999 ? at : `${head}.${String(us).padStart(6, '0')}Z`;
    };
    // Edges: before everything, exactly on an entry (it opens the next period), a microsecond after
    // another (it closes the previous), and after everything.
    const edges = ['2000-01-01T00:00:00.000000Z', entries[2]!.at, shift(entries[4]!.at, 1), entries[7]!.at, entries[9]!.at, '2999-01-01T00:00:00.000000Z'];
    edges.sort();
    const seen: number[] = [];
    let previousClosing = 0;
    for (let i = 0; i + 1 < edges.length; i++) {
      const { statement: s, lines } = await statement(backend.sql, workspaceId, edges[i]!, edges[i + 1]!);
      expect(s.opening_balance).toBe(previousClosing);
      expect(s.opening_balance + s.credits_granted - s.charged + s.refunded).toBe(s.closing_balance);
      // The lines are the period's entries, and the totals are theirs.
      const inPeriod = entries.filter((e) => e.at >= edges[i]! && e.at < edges[i + 1]!);
      expect(lines.map((l) => l.position)).toEqual(inPeriod.map((e) => e.position));
      expect(s.credits_granted).toBe(sum(lines.filter((l) => l.type === 'CreditsGranted').map((l) => l.credits)));
      expect(s.charged).toBe(-sum(lines.filter((l) => l.type === 'LookupCharged').map((l) => l.credits)));
      expect(s.refunded).toBe(sum(lines.filter((l) => l.type === 'LookupRefunded').map((l) => l.credits)));
      expect(s.calls).toBe(lines.filter((l) => l.type === 'LookupCharged').length);
      expect(sum(s.by_operation.map((o) => o.charged))).toBe(s.charged);
      expect(sum(s.by_operation.map((o) => o.refunded))).toBe(s.refunded);
      // The closing balance is the running balance of the last entry before `to`.
      expect(s.closing_balance).toBe(entries.filter((e) => e.at < edges[i + 1]!).at(-1)?.balance_after ?? 0);
      // Every line is traced to its event: position and chain hash.
      for (const l of lines) expect(l.event_hash).toMatch(/^[0-9a-f]{64}$/);
      seen.push(...lines.map((l) => l.position));
      previousClosing = s.closing_balance;
    }
    expect(seen).toEqual(entries.map((e) => e.position));
    expect(previousClosing).toBe((await backend.workspaces.get(workspaceId))!.balance);
  });

  it('totals a whole period by operation, the not-found settlements as 3 charged and 2 refunded each', async () => {
    const { statement: s } = await statement(backend.sql, workspaceId, '2000-01-01T00:00:00Z', '2999-01-01T00:00:00Z');
    expect(s).toMatchObject({
      opening_balance: 0,
      credits_granted: 160,
      charged: 10,
      refunded: 6,
      closing_balance: 156,
      calls: 5,
      by_operation: [
        { operation: 'company', calls: 2, charged: 2, refunded: 0 },
        { operation: 'domain', calls: 1, charged: 2, refunded: 2 },
        { operation: 'person_name', calls: 2, charged: 6, refunded: 4 },
      ],
      entries: 11,
    });
  });

  it('gives the balance and entries as they stood at any instant, as the running ledger had them', async () => {
    for (const [i, entry] of entries.entries()) {
      const then = await workspaceAt(backend.sql, workspaceId, entry.at);
      const atSameInstant = entries.filter((e) => e.at <= entry.at);
      expect(then.workspace.balance).toBe(atSameInstant.at(-1)!.balance_after);
      expect(then.ledger.map((l) => [l.position, l.credits, l.balance_after])).toEqual(atSameInstant.map((e) => [e.position, e.credits, e.balance_after]));
      expect(then.ledger.length).toBeGreaterThanOrEqual(i + 1);
    }
    const now = await workspaceAt(backend.sql, workspaceId, '2999-01-01T00:00:00Z');
    expect(now.workspace).toEqual(await backend.workspaces.get(workspaceId));
    await expect(workspaceAt(backend.sql, workspaceId, '2000-01-01T00:00:00Z')).rejects.toThrow(/workspace/i);
  });
});

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
