import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBackends, type OpenBackend } from '../ledger/backends';

// Every index on the tables a charged call writes is maintained on every hit: each is here with
// the query that needs it (issue 27, docs/adr/0030-storage-per-charged-call.md). A new one belongs
// in this list with its query, or not in the schema.
const JUSTIFIED: Record<string, string> = {
  events_pkey: 'the ledger lines joined to their events; rebuild and audit pages by position',
  events_stream_version_key: 'one version per stream (appends); a stream read in order (readStream, balance at an instant)',
  events_global_order: 'subscriptions, the relay and their lag, in (transaction_id, position) order; a rebuild page ending with its transactions',
  events_request_id: "a request's story, its ledger lines, its operation, and the refund or void of a hit",
  ledger_entries_pkey: 'balance alerts by position; the export paged by position',
  ledger_entries_workspace: "a workspace's ledger paged by position",
  ledger_entries_workspace_time: 'statements, their opening balance and the CSV download, by time',
  charges_pkey: 'one row per charge; the refund and void decisions lock it',
  charges_unsettled: 'the sweep of charges left unsettled',
};

describe.each(ledgerBackends())('indexes of the tables a charged call writes on $name', (backendDef) => {
  let backend: OpenBackend;
  beforeAll(async () => {
    backend = await backendDef.open();
  });
  afterAll(async () => backend?.cleanup());

  it('given the migrated schema, then each index is one a query needs', async () => {
    const { rows } = await backend.sql.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('events', 'ledger_entries', 'charges') ORDER BY indexname`,
    );
    expect(rows.map((r) => r.indexname)).toEqual(Object.keys(JUSTIFIED).sort());
  });
});
