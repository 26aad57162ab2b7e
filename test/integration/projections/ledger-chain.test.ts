import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../services/eventstore/migrate';
import { audit } from '../../../services/audit/audit';
import { ledgerBackends, seedWorkload, type OpenBackend } from '../ledger/backends';

describe.each(ledgerBackends())('the tamper-evident ledger on $name', (backendDef) => {
  let backend: OpenBackend;
  let seeded: Awaited<ReturnType<typeof seedWorkload>>;

  beforeAll(async () => {
    backend = await backendDef.open();
    seeded = await seedWorkload(backend);
  });
  afterAll(async () => backend?.cleanup());

  const ledgerEvents = async (workspaceId: string) =>
    (
      await backend.sql.query<{ position: number; version: number; type: string; metadata: { prev_hash?: string | null; hash?: string } }>(
        `SELECT position, version, type, metadata FROM events
          WHERE stream = $1 AND type IN ('WorkspaceCreated', 'CreditsGranted', 'LookupCharged', 'LookupRefunded') ORDER BY position`,
        [`workspace-${workspaceId}`],
      )
    ).rows.map((r) => ({ ...r, position: Number(r.position), version: Number(r.version) }));

  /** A deliberate act: the owner switches the append-only triggers off, does `work`, switches them on. */
  const behindTheService = async (work: () => Promise<unknown>) => {
    await backend.sql.query('ALTER TABLE events DISABLE TRIGGER events_append_only');
    try {
      await work();
    } finally {
      await backend.sql.query('ALTER TABLE events ENABLE TRIGGER events_append_only');
    }
  };

  it('links every ledger event of a workspace to the previous one as it is appended, and the row keeps the last hash', async () => {
    const events = await ledgerEvents(seeded.b.id);
    expect(events.length).toBeGreaterThan(4);
    expect(events[0]!.metadata.prev_hash).toBeNull();
    for (let i = 1; i < events.length; i++) expect(events[i]!.metadata.prev_hash).toBe(events[i - 1]!.metadata.hash);
    const { rows } = await backend.sql.query<{ last_ledger_hash: string }>('SELECT last_ledger_hash FROM workspaces WHERE id = $1', [seeded.b.id]);
    expect(rows[0]!.last_ledger_hash).toBe(events.at(-1)!.metadata.hash);
    expect(await audit(backend.store)).toMatchObject({ ok: true, chains: { checked: 3, broken: [] } });
  });

  it('refuses UPDATE, DELETE and TRUNCATE of events', async () => {
    await expect(backend.sql.query(`UPDATE events SET data = data WHERE position = 1`)).rejects.toThrow(/append-only/);
    await expect(backend.sql.query(`DELETE FROM events WHERE position = 1`)).rejects.toThrow(/append-only/);
    await expect(backend.sql.query(`TRUNCATE events`)).rejects.toThrow(/append-only/);
  });

  it('names the changed event when a row is changed behind the service, and the next event when one is removed', async () => {
    const events = await ledgerEvents(seeded.a.id);
    const charge = events.find((e) => e.type === 'LookupCharged')!;
    const original = (await backend.sql.query<{ data: unknown }>('SELECT data FROM events WHERE position = $1', [charge.position])).rows[0]!.data;
    await behindTheService(() => backend.sql.query(`UPDATE events SET data = jsonb_set(data, '{credits}', '0') WHERE position = $1`, [charge.position]));

    const report = await audit(backend.store);
    expect(report.ok).toBe(false);
    expect(report.chains.broken).toEqual([
      {
        workspace_id: seeded.a.id,
        position: charge.position,
        stream: `workspace-${seeded.a.id}`,
        version: charge.version,
        field: 'hash',
        expected: expect.stringMatching(/^[0-9a-f]{64}$/),
        actual: charge.metadata.hash,
      },
    ]);

    await behindTheService(() => backend.sql.query('UPDATE events SET data = $2::jsonb WHERE position = $1', [charge.position, JSON.stringify(original)]));
    expect((await audit(backend.store)).chains.broken).toEqual([]);

    const grant = (await ledgerEvents(seeded.b.id)).find((e) => e.type === 'CreditsGranted' && e.metadata.prev_hash !== null)!;
    const next = (await ledgerEvents(seeded.b.id)).find((e) => e.position > grant.position)!;
    await behindTheService(() => backend.sql.query('DELETE FROM events WHERE position = $1', [grant.position]));
    expect((await audit(backend.store)).chains.broken).toEqual([
      expect.objectContaining({ workspace_id: seeded.b.id, position: next.position, field: 'prev_hash', expected: grant.metadata.prev_hash, actual: grant.metadata.hash }),
    ]);
  });
});

describe.each(ledgerBackends())('the ledger chain migration on $name', (backendDef) => {
  let backend: OpenBackend;
  afterAll(async () => backend?.cleanup());

  it('links a log written before chains existed from its first events, then makes it append-only', async () => {
    backend = await backendDef.open();
    await seedWorkload(backend);
    // The log as it was before: no links, no triggers, the two steps not yet applied.
    await backend.sql.query('DROP TRIGGER events_append_only ON events');
    await backend.sql.query('DROP TRIGGER events_no_truncate ON events');
    await backend.sql.query(`UPDATE events SET metadata = metadata - 'prev_hash' - 'hash'`);
    await backend.sql.query('UPDATE workspaces SET last_ledger_hash = NULL');
    await backend.sql.query(`DELETE FROM schema_migrations WHERE name IN ('008_ledger_chain_backfill.ts', '009_events_append_only.sql')`);
    expect((await audit(backend.store)).chains.broken).toHaveLength(3);

    expect(await migrate(backend.sql)).toEqual(['008_ledger_chain_backfill.ts', '009_events_append_only.sql']);

    expect(await audit(backend.store)).toMatchObject({ ok: true, mismatches: [], chains: { checked: 3, broken: [] } });
    await expect(backend.sql.query('DELETE FROM events')).rejects.toThrow(/append-only/);
  });
});
