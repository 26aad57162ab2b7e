// readinessOf: an instance is ready only when started, migrated and not draining; the answer names
// every failing check with its reason, and `draining` wins over `starting` (it only goes forward).
import { describe, expect, it } from 'vitest';
import { InstanceLifecycle, readinessOf } from '../../../services/health/readiness';

describe('readinessOf', () => {
  it('given an instance migrated, started and not draining: ok, every check ok, no failures', () => {
    expect(readinessOf({ migrated: true, started: true, draining: false })).toEqual({
      status: 'ok',
      checks: { started: 'ok', migrated: 'ok', not_draining: 'ok' },
      failures: [],
    });
  });

  it('given an instance not yet migrated nor started: starting, both named with their reason', () => {
    const readiness = readinessOf({ migrated: false, started: false, draining: false });
    expect(readiness.status).toBe('starting');
    expect(readiness.checks).toEqual({ started: 'fail', migrated: 'fail', not_draining: 'ok' });
    expect(readiness.failures.map((f) => f.check)).toEqual(['started', 'migrated']);
    expect(readiness.failures[1]!.message).toMatch(/migrations/);
  });

  it('given an instance that received SIGTERM: draining, the one failing check not_draining', () => {
    const readiness = readinessOf({ migrated: true, started: true, draining: true });
    expect(readiness).toMatchObject({ status: 'draining', checks: { started: 'ok', migrated: 'ok', not_draining: 'fail' } });
    expect(readiness.failures).toEqual([{ check: 'not_draining', message: expect.stringMatching(/SIGTERM/) }]);
  });
});

describe('InstanceLifecycle', () => {
  it('given a new lifecycle, when it is migrated, started, then drained: starting, starting, ok, draining', () => {
    const lifecycle = new InstanceLifecycle();
    const seen = [readinessOf(lifecycle.current).status];
    lifecycle.markMigrated();
    seen.push(readinessOf(lifecycle.current).status);
    lifecycle.markStarted();
    seen.push(readinessOf(lifecycle.current).status);
    lifecycle.startDraining();
    seen.push(readinessOf(lifecycle.current).status);
    expect(seen).toEqual(['starting', 'starting', 'ok', 'draining']);
  });
});
