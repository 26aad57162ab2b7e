import { describe, expect, it } from 'vitest';
import { serverCpuBudget, throughputBudget, verdict } from '../../bench/cpu-budget';

const hit = { service: 189, database: 84, redis: 27, loadGenerator: 24 };

describe('the CPU a target leaves for the service', () => {
  it('given 0.35 × 32,000 req/s on 2 cores, when budgeted, then a hit may cost 2e6 / 11,200 µs in all, less what the others take', () => {
    const budget = throughputBudget(0.35, 32_000, 2, hit);
    expect(budget.perHit).toBeCloseTo(2e6 / 11_200, 6);
    expect(budget.others).toBe(24 + 84 + 27);
    expect(budget.leftForService).toBeCloseTo(2e6 / 11_200 - 135, 6);
    expect(budget.oneThread).toBeUndefined();
  });

  it('given a service doing its database work in its one thread, when budgeted, then that thread may spend 1e6 / hits per second', () => {
    const budget = throughputBudget(0.15, 32_000, 2, { service: 259, database: 0, redis: 0, loadGenerator: 25 }, true);
    expect(budget.oneThread).toBeCloseTo(1e6 / 4_800, 6);
    expect(budget.leftForService).toBeCloseTo(2e6 / 4_800 - 25, 6);
  });

  it('given a server CPU target of 3 × 28 µs, when budgeted, then PostgreSQL and Redis count and the load generator does not', () => {
    const budget = serverCpuBudget(3, 28, hit);
    expect(budget).toEqual({ perHit: 84, others: 111, leftForService: -27 });
  });

  it('given budgets below, between and above, when judged, then each says whether and how far the service must shrink', () => {
    expect(verdict({ perHit: 84, others: 111, leftForService: -27 }, 189, 28)).toBe("out of reach: less than the bare route's own 28 µs");
    expect(verdict({ perHit: 400, others: 25, leftForService: 375, oneThread: 200 }, 300, 28)).toBe('only if the service fell from 300 to 200 µs per hit (÷1.5)');
    expect(verdict({ perHit: 400, others: 25, leftForService: 375 }, 300, 28)).toBe('within the budget');
  });
});
