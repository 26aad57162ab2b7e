import { describe, expect, it } from 'vitest';
import type { AuditReport } from '../../../services/audit/audit';
import {
  abandonedAuditJob,
  auditJobView,
  doneAuditJob,
  failedAuditJob,
  isAbandonedAuditJob,
  progressedAuditJob,
  startedAuditJob,
} from '../../../services/audit/audit-job';

const T0 = Date.parse('2025-06-01T12:00:00.000Z');
const report = (events: number): AuditReport => ({ ok: true, events, workspaces: 2, mismatches: [], chains: { checked: 2, broken: [] } });

describe('an audit job', () => {
  it('given a job just started, when viewed, then it runs, catching up, with nothing read and no head yet', () => {
    expect(auditJobView(startedAuditJob('aud_1', T0), T0)).toEqual({
      id: 'aud_1',
      state: 'running',
      phase: 'catching_up',
      started_at: '2025-06-01T12:00:00.000Z',
      finished_at: null,
      elapsed_ms: 0,
      events_read: 0,
      position: 0,
      head_position: null,
      percent: null,
      events_per_second: 0,
      report: null,
      error: null,
    });
  });

  it('given progress through the log, when viewed, then it shows the share of the head read and the events per second since it began reading', () => {
    const caughtUp = progressedAuditJob(startedAuditJob('aud_1', T0), { phase: 'catching_up', events: 0, position: 0, head: null }, T0 + 500);
    const reading = progressedAuditJob(caughtUp, { phase: 'replaying', events: 0, position: 0, head: 50_000 }, T0 + 1_000);
    const job = progressedAuditJob(reading, { phase: 'replaying', events: 10_000, position: 12_345, head: 50_000 }, T0 + 2_500);
    expect(auditJobView(job, T0 + 3_000)).toMatchObject({ state: 'running', phase: 'replaying', elapsed_ms: 3_000, events_read: 10_000, position: 12_345, head_position: 50_000, percent: 24.6, events_per_second: 5_000 });
  });

  it('given an empty log, when its head is known, then it is all read', () => {
    const job = progressedAuditJob(startedAuditJob('aud_1', T0), { phase: 'replaying', events: 0, position: 0, head: 0 }, T0 + 1);
    expect(auditJobView(job, T0 + 5).percent).toBe(100);
  });

  it('given a finished job, when viewed later, then its elapsed time and rate stop at its end, and it carries its report', () => {
    const reading = progressedAuditJob(startedAuditJob('aud_1', T0), { phase: 'replaying', events: 0, position: 0, head: 9_100 }, T0 + 1_000);
    const replayed = progressedAuditJob(reading, { phase: 'comparing', events: 9_000, position: 9_100, head: 9_100 }, T0 + 2_500);
    const done = doneAuditJob(replayed, report(9_000), T0 + 4_000);
    expect(auditJobView(done, T0 + 60_000)).toMatchObject({
      state: 'done',
      phase: null,
      finished_at: '2025-06-01T12:00:04.000Z',
      elapsed_ms: 4_000,
      events_read: 9_000,
      percent: 100,
      events_per_second: 3_000,
      report: report(9_000),
      error: null,
    });
  });

  it('given a progress report arriving after the end, when applied, then nothing changes', () => {
    const done = doneAuditJob(startedAuditJob('aud_1', T0), report(5), T0 + 10);
    expect(progressedAuditJob(done, { phase: 'replaying', events: 1, position: 1, head: 5 }, T0 + 20)).toBe(done);
  });

  it('given a failure with a stack, when viewed, then it failed with the first line only', () => {
    const failed = failedAuditJob(startedAuditJob('aud_1', T0), 'the audit failed: connection refused\n    at somewhere (file.ts:1:1)', T0 + 100);
    expect(auditJobView(failed, T0 + 500)).toMatchObject({ state: 'failed', phase: null, elapsed_ms: 100, report: null, error: 'the audit failed: connection refused' });
  });
});

describe('the rule that decides a dead job', () => {
  const TIMEOUT = 30_000;
  const running = startedAuditJob('aud_1', T0);

  it('given a running job whose heartbeat is exactly the timeout old, when judged, then it is alive', () => {
    expect(isAbandonedAuditJob(running, T0, T0 + TIMEOUT, TIMEOUT)).toBe(false);
  });

  it('given a running job whose heartbeat is one millisecond past the timeout, when judged, then it is dead', () => {
    expect(isAbandonedAuditJob(running, T0, T0 + TIMEOUT + 1, TIMEOUT)).toBe(true);
  });

  it('given a heartbeat ahead of the clock that judges (written after that clock was read), when judged, then it is alive', () => {
    expect(isAbandonedAuditJob(running, T0 + 5, T0, TIMEOUT)).toBe(false);
  });

  it('given a finished job with an old heartbeat, when judged, then it is not dead: it ended', () => {
    expect(isAbandonedAuditJob(doneAuditJob(running, report(1), T0 + 1), T0, T0 + 10 * TIMEOUT, TIMEOUT)).toBe(false);
    expect(isAbandonedAuditJob(failedAuditJob(running, 'x', T0 + 1), T0, T0 + 10 * TIMEOUT, TIMEOUT)).toBe(false);
  });

  it('given a dead job, when failed by the instance that found it, then it failed, naming its instance and its last heartbeat, ending at the finder\'s now', () => {
    const reading = progressedAuditJob(running, { phase: 'replaying', events: 100, position: 120, head: 1_000 }, T0 + 1_000);
    const failed = abandonedAuditJob(reading, 'host-a/4242', T0 + 2_000, T0 + 40_000);
    expect(auditJobView(failed, T0 + 50_000)).toMatchObject({
      state: 'failed',
      phase: null,
      finished_at: '2025-06-01T12:00:40.000Z',
      events_read: 100,
      position: 120,
      report: null,
      error: 'its instance (host-a/4242) stopped: no heartbeat since 2025-06-01T12:00:02.000Z',
    });
  });
});
