import { afterEach, describe, expect, it } from 'vitest';
import { BatchSlots } from '../../../services/batch/batch-slots';
import { createMemoryConcurrencySlots } from '../../../services/limits/concurrency-memory';

const slots = createMemoryConcurrencySlots({ renew: false });
afterEach(async () => slots.close());

describe('BatchSlots (on the in-process concurrency slots)', () => {
  it('given a free slot, then an item takes it', async () => {
    const batch = new BatchSlots(slots, 'ws:free', 2);
    expect(await batch.acquire()).not.toBeNull();
  });

  it('given every slot held by the batch itself, when another item asks, then it waits for one of the batch to be released', async () => {
    const batch = new BatchSlots(slots, 'ws:own', 1);
    const first = (await batch.acquire())!;
    let second: unknown;
    const waiting = batch.acquire().then((slot) => (second = slot));
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBeUndefined();
    await first.release();
    await waiting;
    expect(second).not.toBeNull();
  });

  it('given every slot held by other calls and none by the batch, then an item is refused (null)', async () => {
    const other = await slots.acquire('ws:others', 1);
    const batch = new BatchSlots(slots, 'ws:others', 1);
    expect(await batch.acquire()).toBeNull();
    await other!.release();
  });

  it('given a waiting item and the batch releasing its last slot to another call first, then the item is refused rather than waiting forever', async () => {
    const batch = new BatchSlots(slots, 'ws:stolen', 1);
    const first = (await batch.acquire())!;
    const waiting = batch.acquire();
    // Another call of the workspace takes the slot the moment it is free.
    const stolen = first.release().then(() => slots.acquire('ws:stolen', 1));
    const [outcome, thief] = await Promise.all([waiting, stolen]);
    // Either the item got the slot or the other call did; never both, and the item never hangs.
    expect([outcome, thief].filter((s) => s !== null)).toHaveLength(1);
  });

  it('releasing a slot twice frees it once', async () => {
    const batch = new BatchSlots(slots, 'ws:twice', 2);
    const a = (await batch.acquire())!;
    const b = (await batch.acquire())!;
    await a.release();
    await a.release();
    expect(await slots.acquire('ws:twice', 2)).not.toBeNull();
    expect(await slots.acquire('ws:twice', 2)).toBeNull();
    await b.release();
  });
});
