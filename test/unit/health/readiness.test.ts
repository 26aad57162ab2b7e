// runReadiness and lagWithin: every check runs, each failure is named with its reason, a check
// that hangs or throws fails rather than hanging or failing the probe.
import { describe, expect, it } from 'vitest';
import { lagWithin, runReadiness, type ReadinessCheck } from '../../../services/health/readiness';

const passing = (name: string): ReadinessCheck => ({ name, run: async () => ({ ok: true }) });

describe('runReadiness', () => {
  it('given every check passes: ready, each check ok, no failures', async () => {
    expect(await runReadiness([passing('database'), passing('redis')])).toEqual({
      ready: true,
      checks: { database: 'ok', redis: 'ok' },
      lagEvents: {},
      failures: [],
    });
  });

  it('given one check throws and one never answers: not ready, both named with their reason, the others ok', async () => {
    const throwing: ReadinessCheck = { name: 'redis', run: async () => Promise.reject(new Error('Connection is closed.')) };
    const hanging: ReadinessCheck = { name: 'database', run: () => new Promise(() => {}) };
    const readiness = await runReadiness([hanging, throwing, passing('usage_projection')], 50);
    expect(readiness.ready).toBe(false);
    expect(readiness.checks).toEqual({ database: 'fail', redis: 'fail', usage_projection: 'ok' });
    expect(readiness.failures).toEqual([
      { check: 'database', message: 'no answer within 50 ms' },
      { check: 'redis', message: 'Connection is closed.' },
    ]);
  });
});

describe('lagWithin', () => {
  it('given the lag at the bound: ok, with the lag reported', async () => {
    const readiness = await runReadiness([lagWithin('relay', async () => 10, 10)]);
    expect(readiness).toMatchObject({ ready: true, lagEvents: { relay: 10 } });
  });

  it('given one event past the bound: fails, saying by how much and which setting', async () => {
    const readiness = await runReadiness([lagWithin('usage_projection', async () => 1, 0)]);
    expect(readiness).toMatchObject({ ready: false, checks: { usage_projection: 'fail' }, lagEvents: { usage_projection: 1 } });
    expect(readiness.failures[0]!.message).toBe('1 events behind the log, more than READY_MAX_LAG_EVENTS (0)');
  });
});
