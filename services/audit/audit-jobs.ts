import { hostname } from 'node:os';
import type { AuditJobResponse } from '../../contracts/http';
import { newAuditId } from '../common/ids';
import { auditJobHeartbeatFailures, auditJobsAbandoned } from '../metrics/metrics';
import type { AuditProgress, AuditReport } from './audit';
import { AUDIT_HEARTBEAT_EVERY_MS, auditJobView, doneAuditJob, failedAuditJob, isRunning, progressedAuditJob, startedAuditJob, type AuditJob } from './audit-job';
import type { AuditJobStore } from './audit-job-store';

/** Finished audit jobs kept for GET /admin/v1/audits/{id}; older ones are deleted. */
export const FINISHED_AUDIT_JOBS_KEPT = 20;

/** The audit itself, as the registry runs it (audit-runner.ts's runAudit on the instance's store). */
export type RunAudit = (options: { onProgress: (progress: AuditProgress) => void; signal: AbortSignal }) => Promise<AuditReport>;

/** Where a job's start, end and troubles are logged: the request that started or read it (its request id). */
export interface AuditJobLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

interface LocalJob {
  job: AuditJob;
  controller: AbortController;
  settled: Promise<void>;
}

/**
 * Audit jobs as this instance runs and reads them. The jobs themselves live in PostgreSQL
 * (audit-job-store.ts): any instance answers for any job, one runs at a time across instances.
 * The job this instance runs is answered from its memory (its freshest progress, and on the
 * embedded database the audit holds the one connection); its progress and heartbeat are written
 * every AUDIT_HEARTBEAT_EVERY_MS.
 */
export class AuditJobs {
  private local: LocalJob | null = null;
  private stopping = false;
  private readonly runner: string;

  constructor(
    private readonly run: RunAudit,
    private readonly store: AuditJobStore,
    private readonly options: { now?: () => number; runner?: string; heartbeatEveryMs?: number; heartbeatTimeoutMs?: number } = {},
  ) {
    this.runner = options.runner ?? `${hostname()}/${process.pid}`;
  }

  /** Starts an audit, unless one runs on any instance: then that one (`started: false`). */
  async start(log: AuditJobLog): Promise<{ job: AuditJobResponse; started: boolean }> {
    if (this.local && isRunning(this.local.job)) return { job: this.view(this.local.job), started: false };
    // This instance's last job has ended and its end is being written: the table says so first.
    await this.local?.settled;
    const job = startedAuditJob(newAuditId(), this.now());
    const claim = await this.store.claim(job, this.runner);
    if (!claim.claimed) return { job: this.view(claim.running), started: false };
    if (claim.abandoned) this.noteAbandoned(claim.abandoned, log);
    this.launch(job, log);
    log.info({ audit_id: job.id, runner: this.runner }, 'audit job started');
    return { job: this.view(job), started: true };
  }

  /** The job as it stands; undefined if there is no such job (never was, or dropped). */
  async get(id: string, log: AuditJobLog): Promise<AuditJobResponse | undefined> {
    if (this.local?.job.id === id) return this.view(this.local.job);
    const read = await this.store.get(id);
    if (!read) return undefined;
    if (read.abandoned) this.noteAbandoned(read.job, log);
    return this.view(read.job);
  }

  /** Stops this instance's running audit, if any (the instance is stopping), its end written once. */
  async stop(): Promise<void> {
    this.stopping = true;
    const local = this.local;
    if (!local) return;
    local.controller.abort(new Error('the instance stopped'));
    await local.settled;
  }

  private launch(started: AuditJob, log: AuditJobLog) {
    const controller = new AbortController();
    const local: LocalJob = { job: started, controller, settled: Promise.resolve() };
    const id = started.id;
    const beat = this.startHeartbeat(local, log);
    const audited = this.run({ onProgress: (progress) => (local.job = progressedAuditJob(local.job, progress, this.now())), signal: controller.signal }).then(
      (report) => {
        local.job = doneAuditJob(local.job, report, this.now());
        const view = this.view(local.job);
        log.info(
          { audit_id: id, ok: report.ok, events: report.events, mismatches: report.mismatches.length, broken_chains: report.chains.broken.length, duration_ms: view.elapsed_ms, events_per_second: view.events_per_second },
          'audit job done',
        );
      },
      (err: unknown) => {
        local.job = failedAuditJob(local.job, err instanceof Error ? err.message : String(err), this.now());
        if (controller.signal.aborted) log.info({ audit_id: id, reason: local.job.end?.state === 'failed' ? local.job.end.failure : undefined }, 'audit job stopped');
        else log.error({ audit_id: id, err }, 'audit job failed');
      },
    );
    local.settled = audited
      .then(async () => {
        await beat.stop();
        await this.writeEnd(local.job, log);
      })
      .finally(() => {
        if (this.local === local) this.local = null;
      });
    this.local = local;
  }

  /** Progress and heartbeat every AUDIT_HEARTBEAT_EVERY_MS, one write at a time; a job failed meanwhile by another instance is stopped. */
  private startHeartbeat(local: LocalJob, log: AuditJobLog): { stop(): Promise<void> } {
    let inFlight: Promise<void> | null = null;
    const tick = () => {
      if (inFlight) return;
      inFlight = this.store
        .heartbeat(local.job)
        .then(
          (stillRunning) => {
            if (stillRunning) return;
            log.error({ audit_id: local.job.id }, 'audit job was failed by another instance (its heartbeat came too late); stopping its audit');
            local.controller.abort(new Error('failed by another instance: its heartbeat came too late'));
          },
          (err: unknown) => {
            auditJobHeartbeatFailures.inc();
            log.warn({ audit_id: local.job.id, err }, 'audit job heartbeat not written; retried on the next beat');
          },
        )
        .finally(() => (inFlight = null));
    };
    const timer = setInterval(tick, this.options.heartbeatEveryMs ?? AUDIT_HEARTBEAT_EVERY_MS);
    timer.unref();
    return {
      async stop() {
        clearInterval(timer);
        await inFlight;
      },
    };
  }

  /**
   * The job's end, written once the database takes it: retried each beat until the job would be
   * judged dead anyway (then any instance fails it), and tried once when the instance stops.
   */
  private async writeEnd(job: AuditJob, log: AuditJobLog): Promise<void> {
    const giveUpAt = this.now() + (this.options.heartbeatTimeoutMs ?? 30_000);
    for (;;) {
      try {
        if (!(await this.store.finish(job))) log.warn({ audit_id: job.id }, 'audit job had already been failed by another instance; its end is not written');
        return;
      } catch (err) {
        if (this.stopping || this.now() >= giveUpAt) {
          log.error({ audit_id: job.id, err }, 'audit job end not written; another instance will fail it once its heartbeat is late');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, this.options.heartbeatEveryMs ?? AUDIT_HEARTBEAT_EVERY_MS));
      }
    }
  }

  private noteAbandoned(job: AuditJob, log: AuditJobLog) {
    auditJobsAbandoned.inc();
    log.warn({ audit_id: job.id, error: job.end?.state === 'failed' ? job.end.failure : undefined }, 'audit job of a dead instance failed');
  }

  private view(job: AuditJob): AuditJobResponse {
    return auditJobView(job, this.now());
  }

  private now() {
    return this.options.now?.() ?? Date.now();
  }
}
