import { describe, expect, it } from 'vitest';
import { GroupBatcher } from '../../../services/common/group-batcher';

/** A batch function that records each batch and waits for the test to let it finish. */
function gatedDoubler() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const batcher = new GroupBatcher<number, number>(async (items) => {
    batches.push(items);
    await new Promise<void>((open) => gates.push(open));
    return items.map((n) => n * 2);
  }, 3);
  const openNext = async () => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  return { batcher, batches, openNext };
}

describe('GroupBatcher', () => {
  it('given calls made in one turn, when they run, then they share one batch and each gets its own answer', async () => {
    const batcher = new GroupBatcher<number, string>(async (items) => items.map((n) => `#${n}`));
    expect(await Promise.all([1, 2, 3].map((n) => batcher.submit(n)))).toEqual(['#1', '#2', '#3']);
  });

  it('given a batch running, when more calls come, then they wait and go together in the next batch, at most maxBatch at a time', async () => {
    const { batcher, batches, openNext } = gatedDoubler();
    const first = batcher.submit(1);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const later = [2, 3, 4, 5].map((n) => batcher.submit(n));
    await openNext();
    await openNext();
    await openNext();
    expect(await Promise.all([first, ...later])).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('given a batch that throws, then each of its calls fails with that error and the next batch still runs', async () => {
    let calls = 0;
    const batcher = new GroupBatcher<number, number>(async (items) => {
      calls += 1;
      if (calls === 1) throw new Error('database unavailable');
      return items;
    });
    const failed = [1, 2].map((n) => batcher.submit(n));
    await expect(Promise.all(failed)).rejects.toThrow('database unavailable');
    await expect(failed[1]).rejects.toThrow('database unavailable');
    expect(await batcher.submit(3)).toBe(3);
  });

  it('given a batch function that answers fewer items than it was given, then its calls fail instead of getting undefined', async () => {
    const batcher = new GroupBatcher<number, number>(async (items) => items.slice(1));
    await expect(Promise.all([1, 2].map((n) => batcher.submit(n)))).rejects.toThrow('a batch of 2 answered 1');
  });
});
