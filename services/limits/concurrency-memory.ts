import { randomUUID } from 'node:crypto';
import {
  assertMax,
  HeldSlots,
  resolveOptions,
  type ConcurrencySlots,
  type ConcurrencySlotsOptions,
  type SlotHandle,
} from './concurrency';

/** In-process slots with the same lease semantics as the Redis adapter (single instance, tests). */
export function createMemoryConcurrencySlots(options: ConcurrencySlotsOptions = {}): ConcurrencySlots {
  const { leaseMs, renewEveryMs, renew, onRenewError } = resolveOptions(options);
  /** scope -> slot id -> lease expiry (ms). Empty scopes are removed, so memory follows use. */
  const scopes = new Map<string, Map<string, number>>();

  const held = new HeldSlots(
    renewEveryMs,
    renew,
    async (scope, slotIds) => {
      const slots = scopes.get(scope);
      const expiresAt = Date.now() + leaseMs;
      // Only slots still present: one that already lapsed stays lapsed, as in Redis.
      for (const id of slotIds) if (slots?.has(id)) slots.set(id, expiresAt);
    },
    onRenewError,
  );

  function remove(scope: string, slotId: string): void {
    const slots = scopes.get(scope);
    if (!slots) return;
    slots.delete(slotId);
    if (slots.size === 0) scopes.delete(scope);
  }

  return {
    async acquire(scope: string, max: number): Promise<SlotHandle | null> {
      assertMax(max);
      const now = Date.now();
      const slots = scopes.get(scope) ?? new Map<string, number>();
      for (const [id, expiresAt] of slots) if (expiresAt <= now) slots.delete(id);
      if (slots.size >= max) {
        if (slots.size === 0) scopes.delete(scope);
        return null;
      }
      const slotId = randomUUID();
      slots.set(slotId, now + leaseMs);
      scopes.set(scope, slots);
      held.add(scope, slotId);
      return {
        async release() {
          if (held.delete(scope, slotId)) remove(scope, slotId);
        },
      };
    },
    async close() {
      held.close();
    },
  };
}
