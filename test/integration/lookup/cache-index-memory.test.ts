import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import { CACHE_CHANGES_CHANNEL, CacheIndexMemory, cacheAliasesChangedBy } from '../../../services/lookup/cache-index-memory';
import type { CachedEntry } from '../../../services/lookup/decider';

const profile = (fetchedAt: string, name = 'Acme'): CachedEntry => ({ kind: 'profile', entity: 'company:1', data: { name }, contentHash: `h-${name}`, fetchedAt: new Date(fetchedAt) });

/** A database stand-in holding rows by alias, counting its reads (the thing under test is the memory). */
function rows(initial: Record<string, CachedEntry> = {}) {
  const table = new Map(Object.entries(initial));
  const reads: string[] = [];
  return {
    table,
    reads,
    read: async (alias: string) => {
      reads.push(alias);
      return table.get(alias);
    },
  };
}

const always = () => true;

async function eventually(check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('CacheIndexMemory', () => {
  let sql: Sql;
  let memory: CacheIndexMemory;
  beforeAll(async () => {
    sql = await createPgliteSql();
  });
  afterEach(async () => {
    await memory?.stop();
  });
  afterAll(async () => {
    await sql.close();
  });

  it('given an entry read once, when read again and usable, then it comes from memory', async () => {
    memory = new CacheIndexMemory(sql, 10);
    await memory.start();
    const db = rows({ 'company:acme': profile('2024-01-01T00:00:00Z') });
    expect(await memory.read('company:acme', always, db.read)).toEqual(profile('2024-01-01T00:00:00Z'));
    expect(await memory.read('company:acme', always, db.read)).toEqual(profile('2024-01-01T00:00:00Z'));
    expect(db.reads).toEqual(['company:acme']);
  });

  it('given a kept copy the caller cannot use (older than its max_age), then the database is read and its newer copy kept', async () => {
    memory = new CacheIndexMemory(sql, 10);
    await memory.start();
    const db = rows({ 'company:acme': profile('2024-01-01T00:00:00Z', 'old') });
    await memory.read('company:acme', always, db.read);
    // Another instance refreshed it; its notification has not arrived.
    db.table.set('company:acme', profile('2024-01-02T00:00:00Z', 'new'));
    const freshOnly = (e: CachedEntry) => e.fetchedAt >= new Date('2024-01-02T00:00:00Z');
    expect(await memory.read('company:acme', freshOnly, db.read)).toMatchObject({ data: { name: 'new' } });
    expect(await memory.read('company:acme', freshOnly, db.read)).toMatchObject({ data: { name: 'new' } });
    expect(db.reads).toEqual(['company:acme', 'company:acme']);
  });

  it('given copies kept, when this instance commits a new fetch of some of them, then those are dropped at once, before any NOTIFY comes back', async () => {
    memory = new CacheIndexMemory(sql, 10);
    await memory.start();
    const db = rows({ 'company:acme': profile('2024-01-01T00:00:00Z', 'old'), 'domain:acme.com': profile('2024-01-01T00:00:00Z', 'old'), 'company:other': profile('2024-01-01T00:00:00Z') });
    for (const alias of db.table.keys()) await memory.read(alias, always, db.read);
    db.table.set('company:acme', profile('2024-01-02T00:00:00Z', 'new'));

    memory.forgetChangedBy([
      { type: 'LookupCharged', data: {} },
      { type: 'ProfileFetched', data: { aliases: ['company:acme', 'domain:acme.com'] } },
    ]);

    // Synchronously: the answer that follows the commit reads the database.
    expect(memory.size).toBe(1);
    expect(await memory.read('company:acme', always, db.read)).toMatchObject({ data: { name: 'new' } });
  });

  it('names the aliases each cache event rewrites, and none for other events', () => {
    expect(cacheAliasesChangedBy({ type: 'ProfileFetched', data: { aliases: ['company:a', 'company:1'] } })).toEqual(['company:a', 'company:1']);
    expect(cacheAliasesChangedBy({ type: 'ProfileNotFound', data: { alias: 'domain:none.example' } })).toEqual(['domain:none.example']);
    expect(cacheAliasesChangedBy({ type: 'LookupCompleted', data: { alias: 'x' } })).toEqual([]);
  });

  it('when a commit notifies an alias, then its copy is dropped and the next read goes to the database', async () => {
    memory = new CacheIndexMemory(sql, 10);
    await memory.start();
    const db = rows({ 'company:acme': profile('2024-01-01T00:00:00Z', 'old'), 'company:other': profile('2024-01-01T00:00:00Z') });
    await memory.read('company:acme', always, db.read);
    await memory.read('company:other', always, db.read);
    db.table.set('company:acme', profile('2024-01-02T00:00:00Z', 'new'));
    await sql.query('SELECT pg_notify($1, $2)', [CACHE_CHANGES_CHANNEL, 'company:acme']);
    await eventually(() => memory.size === 1);
    expect(await memory.read('company:acme', always, db.read)).toMatchObject({ data: { name: 'new' } });
    await memory.read('company:other', always, db.read);
    expect(db.reads).toEqual(['company:acme', 'company:other', 'company:acme']);
  });

  it('holds at most maxEntries, dropping the least recently used', async () => {
    memory = new CacheIndexMemory(sql, 2);
    await memory.start();
    const db = rows({ a: profile('2024-01-01T00:00:00Z'), b: profile('2024-01-01T00:00:00Z'), c: profile('2024-01-01T00:00:00Z') });
    await memory.read('a', always, db.read);
    await memory.read('b', always, db.read);
    await memory.read('a', always, db.read); // a is now the most recent
    await memory.read('c', always, db.read); // b goes
    expect(memory.size).toBe(2);
    await memory.read('a', always, db.read);
    await memory.read('c', always, db.read);
    await memory.read('b', always, db.read);
    expect(db.reads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('does not keep a database read that an invalidation overtook, nor an alias without a row', async () => {
    memory = new CacheIndexMemory(sql, 10);
    await memory.start();
    const db = rows({ a: profile('2024-01-01T00:00:00Z', 'old') });
    await memory.read(
      'a',
      always,
      async (alias) => {
        const before = await db.read(alias);
        memory.forget(alias); // the notification of a newer commit arrived while this read ran
        return before;
      },
    );
    expect(memory.size).toBe(0);
    expect(await memory.read('missing', always, db.read)).toBeUndefined();
    expect(memory.size).toBe(0);
  });

  it('keeps nothing before start (not listening) and with maxEntries 0', async () => {
    memory = new CacheIndexMemory(sql, 10);
    const db = rows({ a: profile('2024-01-01T00:00:00Z') });
    await memory.read('a', always, db.read);
    await memory.read('a', always, db.read);
    expect(db.reads).toEqual(['a', 'a']);
    const none = new CacheIndexMemory(sql, 0);
    await none.start();
    await none.read('a', always, db.read);
    await none.read('a', always, db.read);
    expect(db.reads).toHaveLength(4);
    await none.stop();
  });
});
