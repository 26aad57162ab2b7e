import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ConcurrencySlots, ConcurrencySlotsOptions } from '../../../services/limits/concurrency';

/** One behavioural contract for every ConcurrencySlots adapter. Leases run on the real clock. */
export interface ConcurrencyHarness {
  /** A new adapter instance over the harness's shared state (Redis) or its own (memory). */
  open(options?: ConcurrencySlotsOptions): Promise<ConcurrencySlots>;
  /** Closes every instance opened. */
  close(): Promise<void>;
}

export function concurrencyContract(create: () => Promise<ConcurrencyHarness>): void {
  let h: ConcurrencyHarness;
  const scope = (name: string) => `${name}-${randomUUID()}`;

  beforeEach(async () => {
    h = await create();
  });
  afterEach(async () => {
    await h.close();
  });

  it('grants exactly max slots to many parallel acquires', async () => {
    const slots = await h.open();
    const ws = scope('parallel');
    const handles = await Promise.all(Array.from({ length: 50 }, () => slots.acquire(ws, 8)));
    expect(handles.filter(Boolean)).toHaveLength(8);
  });

  it('a release frees a slot for the next acquire', async () => {
    const slots = await h.open();
    const ws = scope('release');
    const held = await Promise.all(Array.from({ length: 3 }, () => slots.acquire(ws, 3)));
    expect(held.every(Boolean)).toBe(true);
    expect(await slots.acquire(ws, 3)).toBeNull();
    await held[0]!.release();
    const next = await slots.acquire(ws, 3);
    expect(next).not.toBeNull();
    expect(await slots.acquire(ws, 3)).toBeNull();
  });

  it('releasing twice frees only one slot', async () => {
    const slots = await h.open();
    const ws = scope('twice');
    const a = await slots.acquire(ws, 2);
    const b = await slots.acquire(ws, 2);
    expect(a && b).toBeTruthy();
    await a!.release();
    await a!.release();
    expect(await slots.acquire(ws, 2)).not.toBeNull(); // takes a's slot
    expect(await slots.acquire(ws, 2)).toBeNull(); // b still holds the other
  });

  it('scopes are independent', async () => {
    const slots = await h.open();
    const full = scope('full');
    const other = scope('other');
    expect(await slots.acquire(full, 1)).not.toBeNull();
    expect(await slots.acquire(full, 1)).toBeNull();
    expect(await slots.acquire(other, 1)).not.toBeNull();
  });

  it('max 0 grants nothing', async () => {
    const slots = await h.open();
    expect(await slots.acquire(scope('zero'), 0)).toBeNull();
  });

  it("a holder that never renews loses its slot after the lease", async () => {
    const slots = await h.open({ leaseMs: 300, renew: false });
    const ws = scope('dead');
    expect(await slots.acquire(ws, 1)).not.toBeNull();
    expect(await slots.acquire(ws, 1)).toBeNull();
    await sleep(450);
    expect(await slots.acquire(ws, 1)).not.toBeNull();
  });

  it('a live holder keeps its slot past the lease by renewing it', async () => {
    const slots = await h.open({ leaseMs: 600 });
    const ws = scope('renewed');
    const handle = await slots.acquire(ws, 1);
    expect(handle).not.toBeNull();
    await sleep(1500); // well past the lease: only renewals keep the slot
    expect(await slots.acquire(ws, 1)).toBeNull();
    await handle!.release();
    expect(await slots.acquire(ws, 1)).not.toBeNull();
  });

  it('a released slot stays free after renewals would have run', async () => {
    const slots = await h.open({ leaseMs: 300, renewEveryMs: 50 });
    const ws = scope('no-revive');
    const handle = await slots.acquire(ws, 1);
    await sleep(120);
    await handle!.release();
    await sleep(120);
    expect(await slots.acquire(ws, 1)).not.toBeNull();
  });

  it('rejects a max that is not a whole number', async () => {
    const slots = await h.open();
    await expect(slots.acquire(scope('bad'), -1)).rejects.toThrow(RangeError);
    await expect(slots.acquire(scope('bad'), 2.5)).rejects.toThrow(RangeError);
  });
}
