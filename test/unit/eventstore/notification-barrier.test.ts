import { describe, expect, it } from 'vitest';
import { NotificationBarrier } from '../../../services/eventstore/notification-barrier';

/** A channel in this process: what is notified comes back on the next turn of the event loop, unless held. */
function channel(options: { minIntervalMs?: number; timeoutMs?: number } = {}) {
  const sent: string[] = [];
  const state = { holding: false, failing: false };
  const barrier: NotificationBarrier = new NotificationBarrier(
    async (token) => {
      if (state.failing) throw new Error('database unreachable');
      sent.push(token);
      if (!state.holding) setImmediate(() => barrier.echoed(token));
    },
    { minIntervalMs: options.minIntervalMs ?? 0, timeoutMs: options.timeoutMs ?? 5_000 },
  );
  return { barrier, sent, state };
}

describe('the notification barrier', () => {
  it('given callers arriving before a barrier is sent, then they share it', async () => {
    const { barrier, sent } = channel();
    const passed = await Promise.all(Array.from({ length: 50 }, () => barrier.pass()));
    expect(passed.every(Boolean)).toBe(true);
    expect(sent).toHaveLength(1);
  });

  it('given a caller arriving while a barrier is out, then it waits for the next one, which later callers share', async () => {
    const { barrier, sent } = channel();
    const first = barrier.pass();
    await new Promise((resolve) => setImmediate(resolve)); // the first is sent, not yet back
    expect(sent).toHaveLength(1);
    const later = [barrier.pass(), barrier.pass(), barrier.pass()];
    expect(await first).toBe(true);
    expect(await Promise.all(later)).toEqual([true, true, true]);
    expect(sent).toHaveLength(2);
  });

  it('given a token that does not come back in time, then the callers learn it (false) and the next barrier is sent anew', async () => {
    const { barrier, sent, state } = channel({ timeoutMs: 50 });
    state.holding = true;
    expect(await barrier.pass()).toBe(false);
    state.holding = false;
    expect(await barrier.pass()).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('given a NOTIFY that fails, then its callers get the error and the next barrier works', async () => {
    const { barrier, state } = channel();
    state.failing = true;
    await expect(barrier.pass()).rejects.toThrow('database unreachable');
    state.failing = false;
    expect(await barrier.pass()).toBe(true);
  });

  it("given other payloads and other instances' tokens, then only its own are consumed, and tokens are told apart from other payloads", async () => {
    const { barrier, sent, state } = channel({ timeoutMs: 200 });
    const other = channel();
    state.holding = true;
    const pending = barrier.pass();
    await new Promise((resolve) => setImmediate(resolve));
    await other.barrier.pass();
    expect(barrier.echoed(other.sent[0]!)).toBe(false);
    expect(barrier.echoed('key_01ABC')).toBe(false);
    expect(NotificationBarrier.isToken(other.sent[0]!)).toBe(true);
    expect(NotificationBarrier.isToken('key_01ABC')).toBe(false);
    expect(NotificationBarrier.isToken(`+${'a'.repeat(64)}`)).toBe(false);
    expect(barrier.echoed(sent[0]!)).toBe(true);
    expect(await pending).toBe(true);
  });

  it('given a minimum interval, then callers in a steady stream are served by one barrier per interval at most', async () => {
    const { barrier, sent } = channel({ minIntervalMs: 40 });
    const began = Date.now();
    const calls: Promise<boolean>[] = [];
    while (Date.now() - began < 200) {
      calls.push(barrier.pass());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(calls);
    const elapsed = Date.now() - began;
    // Sends are at least 40 ms apart: one at the start, then one per interval over the whole run.
    expect(sent.length).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 40));
    expect(sent.length).toBeLessThan(calls.length);
  });
});
