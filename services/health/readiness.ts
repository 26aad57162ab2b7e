/**
 * Readiness (GET /v1/health/ready): can THIS instance take calls now? Only what is the instance's
 * own: started (every adapter up), migrated (the schema this build needs), not draining (after
 * SIGTERM it finishes what it accepted and takes nothing new). A shared dependency that is down or
 * behind (the database, Redis, the relay's or the usage projection's lag) is a metric and an alert,
 * never a readiness failure: it would fail on every instance at once and empty the balancer for an
 * outage the API answers itself (503 with Retry-After). See docs/adr/0011-readiness-is-instance-local.md.
 * Liveness (GET /v1/health) stays "the process answers and the database answers a read".
 */

/** Where an instance is in its life; each step only ever goes forward. */
export interface InstancePhase {
  migrated: boolean;
  started: boolean;
  draining: boolean;
}

export type ReadinessCheckName = 'started' | 'migrated' | 'not_draining';

export interface Readiness {
  status: 'ok' | 'starting' | 'draining';
  checks: Record<ReadinessCheckName, 'ok' | 'fail'>;
  failures: { check: ReadinessCheckName; message: string }[];
}

const FAILURE_MESSAGES: Record<ReadinessCheckName, string> = {
  started: 'the instance is still starting: its connections and background work are not all up',
  migrated: 'the database migrations of this build have not been applied yet',
  not_draining: 'the instance is draining after SIGTERM: it finishes the requests it accepted and takes no new ones',
};

/** The readiness answer of an instance in `phase`: ready only when started, migrated and not draining. */
export function readinessOf(phase: InstancePhase): Readiness {
  const passed: Record<ReadinessCheckName, boolean> = { started: phase.started, migrated: phase.migrated, not_draining: !phase.draining };
  const names = Object.keys(passed) as ReadinessCheckName[];
  const failing = names.filter((name) => !passed[name]);
  return {
    status: phase.draining ? 'draining' : failing.length > 0 ? 'starting' : 'ok',
    checks: Object.fromEntries(names.map((name) => [name, passed[name] ? 'ok' : 'fail'])) as Readiness['checks'],
    failures: failing.map((check) => ({ check, message: FAILURE_MESSAGES[check] })),
  };
}

/** The instance's phase as the composition root moves it along; readiness reads it. */
export class InstanceLifecycle {
  private phase: InstancePhase = { migrated: false, started: false, draining: false };

  markMigrated(): void {
    this.phase = { ...this.phase, migrated: true };
  }

  markStarted(): void {
    this.phase = { ...this.phase, started: true };
  }

  startDraining(): void {
    this.phase = { ...this.phase, draining: true };
  }

  get current(): InstancePhase {
    return this.phase;
  }

  /** An instance already up (route tests build the app alone, with no composition root). */
  static started(): InstanceLifecycle {
    const lifecycle = new InstanceLifecycle();
    lifecycle.markMigrated();
    lifecycle.markStarted();
    return lifecycle;
  }
}
