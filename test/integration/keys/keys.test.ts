import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../../services/eventstore/types';
import { UnknownKeyError } from '../../../services/keys/revoke-key';
import { ledgerBackends, type OpenBackend } from '../ledger/backends';
import { accountsOf } from '../../support/accounts';

async function allEvents(backend: OpenBackend): Promise<RecordedEvent[]> {
  const { rows } = await backend.sql.query<{ position: number; stream: string; type: string; data: any; metadata: any }>(
    'SELECT position, stream, type, data, metadata FROM events ORDER BY position',
  );
  return rows as unknown as RecordedEvent[];
}

describe.each(ledgerBackends())('API keys on $name', (backendDef) => {
  let backend: OpenBackend;
  let workspaces: OpenBackend['workspaces'];
  let keys: OpenBackend['keys'];

  beforeAll(async () => {
    backend = await backendDef.open();
    ({ workspaces, keys } = backend);
  });
  afterAll(async () => backend?.cleanup());

  it('revokes a key once: again, or from several instances at once, answers with the first revocation', async () => {
    const ws = await workspaces.create({ name: 'Revoker' });
    const key = await keys.create(ws.id, {});
    const first = await keys.revoke(key.id);
    expect(first.id).toBe(key.id);
    expect(await keys.revoke(key.id)).toEqual(first);
    expect((await keys.list(ws.id))[0]!.revoked_at).toBe(first.revoked_at);

    const other = await keys.create(ws.id, {});
    const instances = [keys, backend.another().keys, backend.another().keys];
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => instances[i % 3]!.revoke(other.id)));
    expect(new Set(answers.map((a) => a.revoked_at)).size).toBe(1);

    const revocations = (await allEvents(backend)).filter((e) => e.type === 'ApiKeyRevoked');
    expect(revocations.filter((e) => (e.data as any).key_id === key.id)).toHaveLength(1);
    expect(revocations.filter((e) => (e.data as any).key_id === other.id)).toHaveLength(1);
  });

  it('creates a console key and its creator in one commit', async () => {
    const ws = await workspaces.create({ name: 'Console' });
    const commits: string[][] = [];
    const stop = backend.store.onAppended((committed) => commits.push(committed.map((e) => e.type)));
    const key = await keys.create(ws.id, { name: 'ci', createdBy: 'mem_ada' });
    stop();
    expect(commits).toEqual([['ApiKeyCreated', 'ApiKeyCreatedBy']]);
    const { rows } = await backend.sql.query<{ member_id: string }>('SELECT member_id FROM api_key_creators WHERE key_id = $1', [key.id]);
    expect(rows).toEqual([{ member_id: 'mem_ada' }]);
  });

  it('revokes within a workspace only: a key of another is unknown there, and stays valid', async () => {
    const mine = await workspaces.create({ name: 'Mine' });
    const theirs = await workspaces.create({ name: 'Theirs' });
    const key = await keys.create(theirs.id, {});
    await expect(keys.revoke(key.id, mine.id)).rejects.toBeInstanceOf(UnknownKeyError);
    expect((await keys.list(theirs.id))[0]!.revoked_at).toBeNull();
    expect((await keys.revoke(key.id, theirs.id)).revoked_at).not.toBeNull();
  });

  it('tells the key cache of every revocation, a repeated one included', async () => {
    const told: string[] = [];
    const { workspaces: w, keys: k } = accountsOf(backend.store, { revoked: async (keyId) => void told.push(keyId) });
    const ws = await w.create({ name: 'Told' });
    const key = await k.create(ws.id, {});
    await k.revoke(key.id);
    await k.revoke(key.id);
    expect(told).toEqual([key.id, key.id]);
  });
});
