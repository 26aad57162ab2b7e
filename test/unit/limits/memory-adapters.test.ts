import { describe } from 'vitest';
import { createMemoryConcurrencySlots } from '../../../services/limits/concurrency-memory';
import type { ConcurrencySlots } from '../../../services/limits/concurrency';
import { createMemoryRateLimiter } from '../../../services/limits/rate-limiter-memory';
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
