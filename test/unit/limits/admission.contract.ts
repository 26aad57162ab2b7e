import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { KeyAdmission } from '../../../services/limits/admission';
import type { ConcurrencySlots } from '../../../services/limits/concurrency';
import type { RateLimiter } from '../../../services/limits/rate-limiter';

/**
 * One behavioural contract for every KeyAdmission: what it takes is read back through the same
 * adapters' own ports (the bucket by `take`, the slots by `acquire`), so one admission is checked
 * to take exactly what the separate steps would.
 */
export interface AdmissionHarness {
  admission: KeyAdmission;
  /** The bucket and the slots the admission takes from. */
  rateLimiter: RateLimiter;
  slots: ConcurrencySlots;
  /** Where the revocation mark of a key named `name` lives, and marking it. */
  markKey(name: string): string;
  mark(markKey: string): Promise<void>;
  close(): Promise<void>;
}

export function admissionContract(open: () => Promise<AdmissionHarness>): void {
  let h: AdmissionHarness;
  const fresh = (name: string) => `${name}-${randomUUID()}`;

  beforeEach(async () => {
    h = await open();
  });
  afterEach(async () => {
    await h.close();
  });

  it('without a slot wanted: the token of the bucket take() draws on, and no slot', async () => {
    const bucket = fresh('plain');
    const admitted = await h.admission.admit(bucket, h.markKey(bucket), 10);
    expect(admitted).toEqual({ decision: { allowed: true, limit: 10, remaining: 9, resetSeconds: 6, retryAfterSeconds: 0 } });
    expect(await h.rateLimiter.take(bucket, 10)).toMatchObject({ remaining: 8 });
  });

  it('with a slot wanted: the token and one slot of the scope, which counts towards max until released', async () => {
    const bucket = fresh('slot');
    const scope = fresh('ws');
    const admitted = await h.admission.admit(bucket, h.markKey(bucket), 10, { scope, max: 2 });
    if (admitted === 'marked') throw new Error('not marked');
    expect(admitted.decision).toMatchObject({ allowed: true, remaining: 9 });
    expect(admitted.slot).toBeTruthy();
    const other = await h.slots.acquire(scope, 2);
    expect(other).not.toBeNull();
    expect(await h.slots.acquire(scope, 2)).toBeNull();
    await admitted.slot!.release();
    expect(await h.slots.acquire(scope, 2)).not.toBeNull();
  });

  it('no slot free: the token is still taken, the slot is null', async () => {
    const bucket = fresh('full');
    const scope = fresh('ws');
    expect(await h.slots.acquire(scope, 1)).not.toBeNull();
    const admitted = await h.admission.admit(bucket, h.markKey(bucket), 10, { scope, max: 1 });
    expect(admitted).toMatchObject({ decision: { allowed: true, remaining: 9 }, slot: null });
  });

  it('max 0: no slot, the token taken', async () => {
    const bucket = fresh('zero');
    expect(await h.admission.admit(bucket, h.markKey(bucket), 10, { scope: fresh('ws'), max: 0 })).toMatchObject({ decision: { allowed: true }, slot: null });
  });

  it('the token refused: no slot taken', async () => {
    const bucket = fresh('empty');
    const scope = fresh('ws');
    await h.rateLimiter.take(bucket, 1);
    const admitted = await h.admission.admit(bucket, h.markKey(bucket), 1, { scope, max: 1 });
    expect(admitted).toMatchObject({ decision: { allowed: false, remaining: 0, retryAfterSeconds: 60 }, slot: null });
    expect(await h.slots.acquire(scope, 1)).not.toBeNull();
  });

  it('a marked key takes nothing: neither its token nor a slot', async () => {
    const bucket = fresh('marked');
    const scope = fresh('ws');
    await h.mark(h.markKey(bucket));
    expect(await h.admission.admit(bucket, h.markKey(bucket), 10, { scope, max: 1 })).toBe('marked');
    expect(await h.admission.admit(bucket, h.markKey(bucket), 10)).toBe('marked');
    expect(await h.rateLimiter.take(bucket, 10)).toMatchObject({ remaining: 9 });
    expect(await h.slots.acquire(scope, 1)).not.toBeNull();
  });

  it('many admissions at once: exactly max slots granted, one token each', async () => {
    const bucket = fresh('parallel');
    const scope = fresh('ws');
    const admitted = await Promise.all(Array.from({ length: 30 }, () => h.admission.admit(bucket, h.markKey(bucket), 40, { scope, max: 8 })));
    const slots = admitted.map((a) => (a === 'marked' ? undefined : a.slot));
    expect(slots.filter(Boolean)).toHaveLength(8);
    expect(await h.rateLimiter.take(bucket, 40)).toMatchObject({ remaining: 9 });
    // Released together (one turn): every one of them is free again.
    await Promise.all(slots.map((s) => s?.release()));
    const again = await Promise.all(Array.from({ length: 8 }, () => h.slots.acquire(scope, 8)));
    expect(again.every(Boolean)).toBe(true);
  });

  it('rejects a max or a rate that is not a whole number', async () => {
    const bucket = fresh('bad');
    await expect(h.admission.admit(bucket, h.markKey(bucket), 10, { scope: fresh('ws'), max: -1 })).rejects.toThrow(RangeError);
    await expect(h.admission.admit(bucket, h.markKey(bucket), 0, { scope: fresh('ws'), max: 1 })).rejects.toThrow(RangeError);
  });
}
