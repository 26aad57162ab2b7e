import { describe } from 'vitest';
import { sequentialKeyAdmission } from '../../../services/limits/admission';
import { createMemoryConcurrencySlots } from '../../../services/limits/concurrency-memory';
import type { ConcurrencySlots } from '../../../services/limits/concurrency';
import { createMemoryRateLimiter } from '../../../services/limits/rate-limiter-memory';
import { admissionContract } from './admission.contract';
import { concurrencyContract } from './concurrency.contract';
import { rateLimiterContract } from './rate-limiter.contract';

describe('in-process rate limiter (fake clock)', () => {
  rateLimiterContract(async () => {
    let now = 1_700_000_000_000;
    const limiter = createMemoryRateLimiter(() => now);
    return {
      limiter,
      advance: async (ms) => {
        now += ms;
      },
      close: () => limiter.close(),
    };
  });
});

describe('in-process concurrency slots', () => {
  concurrencyContract(async () => {
    const opened: ConcurrencySlots[] = [];
    return {
      open: async (options) => {
        const slots = createMemoryConcurrencySlots(options);
        opened.push(slots);
        return slots;
      },
      close: async () => {
        await Promise.all(opened.map((s) => s.close()));
      },
    };
  });
});

describe('in-process admission (the steps one after another)', () => {
  admissionContract(async () => {
    const rateLimiter = createMemoryRateLimiter();
    const slots = createMemoryConcurrencySlots();
    const marks = new Set<string>();
    return {
      admission: sequentialKeyAdmission(rateLimiter, slots, async (markKey) => marks.has(markKey)),
      rateLimiter,
      slots,
      markKey: (name) => `mark:${name}`,
      mark: async (markKey) => {
        marks.add(markKey);
      },
      close: async () => {
        await Promise.all([rateLimiter.close(), slots.close()]);
      },
    };
  });
});
