import { describe, expect, it } from 'vitest';
import { type TableWrites, writesPerHit } from '../../bench/storage-figures';

const table = (name: string, counts: Partial<TableWrites>): TableWrites => ({
  table: name, inserted: 0, updated: 0, hotUpdated: 0, deleted: 0, totalBytes: 0, indexes: [], ...counts,
});

describe('writes per charged hit, from two readings of the tables\' counters', () => {
  it('given 100 hits each inserting 2 events into a table with 5 indexes, when divided, then 2 rows and 10 index entries per hit', () => {
    const indexes = ['pk', 'a', 'b', 'c', 'd'].map((name) => ({ name, share: 1 }));
    const before = [table('events', { inserted: 1000, totalBytes: 1_000_000, indexes })];
    const after = [table('events', { inserted: 1200, totalBytes: 1_163_840, indexes })];
    expect(writesPerHit(before, after, 100)).toEqual([
      { table: 'events', inserted: 2, updated: 0, hotUpdated: 0, deleted: 0, indexEntries: 10, bytes: 1638.4 },
    ]);
  });

  it('given updates of which some are heap-only, when divided, then only the others add an entry to each index', () => {
    const indexes = [{ name: 'pk', share: 1 }, { name: 'by_owner', share: 1 }];
    const [row] = writesPerHit([table('workspaces', { indexes })], [table('workspaces', { updated: 10, hotUpdated: 8, indexes })], 10);
    expect(row).toMatchObject({ updated: 1, hotUpdated: 0.8, indexEntries: 0.4 });
  });

  it('given a partial index covering a quarter of the rows, when divided, then it counts a quarter of an entry per row inserted', () => {
    const indexes = [{ name: 'pk', share: 1 }, { name: 'unsettled', share: 0.25 }];
    const [row] = writesPerHit([], [table('charges', { inserted: 40, indexes })], 40);
    expect(row!.indexEntries).toBe(1.25);
  });

  it('given a table nobody wrote to, when divided, then it is left out', () => {
    expect(writesPerHit([table('api_keys', { inserted: 3 })], [table('api_keys', { inserted: 3 })], 10)).toEqual([]);
  });

  it('given no hit, when divided, then it refuses rather than dividing by zero', () => {
    expect(() => writesPerHit([], [], 0)).toThrow(RangeError);
  });
});
