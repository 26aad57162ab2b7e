import type { AuditJobResponse } from '../../contracts/http';
import type { AuditProgress, AuditReport } from './audit';

/**
 * An audit job (POST /admin/v1/audits): one audit of the whole log that an operator follows while
 * it runs. Pure: each step gives a new job; the store (audit-job-store.ts) keeps them in
 * PostgreSQL, the registry (audit-jobs.ts) runs this instance's.
 */

/** How often the instance running a job writes its progress and heartbeat. */
export const AUDIT_HEARTBEAT_EVERY_MS = 1_000;

export interface AuditJob {
  id: string;
  /** Epoch milliseconds. */
  startedAt: number;
  progress: AuditProgress;
  /** When it began reading the log (its snapshot taken): its speed is counted from there, not from the catch-up before. */
  readingSince: number | null;
  end: { state: 'done'; report: AuditReport; at: number } | { state: 'failed'; failure: string; at: number } | null;
}

export const startedAuditJob = (id: string, now: number): AuditJob => ({
  id,
  startedAt: now,
  progress: { phase: 'catching_up', events: 0, position: 0, head: null },
  readingSince: null,
  end: null,
});

/** Progress reported after the job ended (a message already on its way) changes nothing. */
export function progressedAuditJob(job: AuditJob, progress: AuditProgress, now: number): AuditJob {
  if (job.end) return job;
  const readingSince = job.readingSince ?? (progress.phase === 'catching_up' ? null : now);
  return { ...job, progress, readingSince };
}

export const doneAuditJob = (job: AuditJob, report: AuditReport, now: number): AuditJob => ({
  ...job,
  progress: { ...job.progress, events: report.events },
  end: { state: 'done', report, at: now },
});

/** `failure`: what went wrong, on one line (the stack goes to the log, not to the API). */
export const failedAuditJob = (job: AuditJob, failure: string, now: number): AuditJob => ({
  ...job,
  end: { state: 'failed', failure: failure.split('\n')[0]!, at: now },
});

export const isRunning = (job: AuditJob): boolean => job.end === null;

/**
 * The rule that decides a dead job: still running, yet its instance has written no heartbeat for
 * more than `timeoutMs` (both instants on the database's clock, so no two instances' clocks meet).
 */
export function isAbandonedAuditJob(job: AuditJob, heartbeatAt: number, now: number, timeoutMs: number): boolean {
  return isRunning(job) && now - heartbeatAt > timeoutMs;
}

/** A dead job as failed by the instance that found it; `now` on that instance's clock, like every end. */
export function abandonedAuditJob(job: AuditJob, runner: string, heartbeatAt: number, now: number): AuditJob {
  return failedAuditJob(job, `its instance (${runner}) stopped: no heartbeat since ${new Date(heartbeatAt).toISOString()}`, now);
}

/** The job as GET /admin/v1/audits/{id} answers it, at `now`. */
export function auditJobView(job: AuditJob, now: number): AuditJobResponse {
  const { events, position, head, phase } = job.progress;
  const until = job.end?.at ?? now;
  const elapsedMs = Math.max(0, until - job.startedAt);
  const readingMs = job.readingSince === null ? 0 : Math.max(0, until - job.readingSince);
  return {
    id: job.id,
    state: job.end?.state ?? 'running',
    phase: job.end ? null : phase,
    started_at: new Date(job.startedAt).toISOString(),
    finished_at: job.end ? new Date(job.end.at).toISOString() : null,
    elapsed_ms: elapsedMs,
    events_read: events,
    position,
    head_position: head,
    percent: percentOfHead(position, head, job.end?.state === 'done'),
    events_per_second: readingMs > 0 ? Math.round((events * 1000) / readingMs) : 0,
    report: job.end?.state === 'done' ? job.end.report : null,
    error: job.end?.state === 'failed' ? job.end.failure : null,
  };
}

/** How far through the log, by position (positions have gaps; events do not count them), to one decimal. */
function percentOfHead(position: number, head: number | null, done: boolean): number | null {
  if (done || head === 0) return 100;
  if (head === null) return null;
  return Math.min(100, Math.floor((position * 1000) / head) / 10);
}
