import type { AuditJobResponse } from '../../contracts/http';
import { newAuditId } from '../common/ids';
import type { AuditProgress, AuditReport } from './audit';
import { auditJobView, doneAuditJob, failedAuditJob, progressedAuditJob, retainedAuditJobs, startedAuditJob, type AuditJob } from './audit-job';

/** Finished audit jobs an instance keeps for GET /admin/v1/audits/{id}; older ones are dropped. */
export const FINISHED_AUDIT_JOBS_KEPT = 20;

/** The audit itself, as the registry runs it (audit-runner.ts's runAudit on the instance's store). */
export type RunAudit = (options: { onProgress: (progress: AuditProgress) => void; signal: AbortSignal }) => Promise<AuditReport>;

/** Where a job's start and end are logged: the request that started it (its request id). */
export interface AuditJobLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * The audit jobs of this instance, in its memory: a job is lost with its instance (start it again).
 * At most one runs at a time; starting one while it runs gives the running one.
 */
export class AuditJobs {
  private jobs: AuditJob[] = [];
  private running: { id: string; controller: AbortController; settled: Promise<void> } | null = null;

  constructor(
    private readonly run: RunAudit,
    private readonly options: { keepFinished?: number; now?: () => number } = {},
  ) {}

  /** Starts an audit, unless one runs: then that one (`started: false`). */
  start(log: AuditJobLog): { job: AuditJobResponse; started: boolean } {
    if (this.running) return { job: this.get(this.running.id)!, started: false };
    const id = newAuditId();
    const controller = new AbortController();
    this.jobs.push(startedAuditJob(id, this.now()));
    log.info({ audit_id: id }, 'audit job started');
    const settled = this.run({ onProgress: (progress) => this.update(id, (job) => progressedAuditJob(job, progress, this.now())), signal: controller.signal }).then(
      (report) => {
        this.update(id, (job) => doneAuditJob(job, report, this.now()));
        const view = this.get(id)!;
        log.info(
          { audit_id: id, ok: report.ok, events: report.events, mismatches: report.mismatches.length, broken_chains: report.chains.broken.length, duration_ms: view.elapsed_ms, events_per_second: view.events_per_second },
          'audit job done',
        );
      },
      (err: unknown) => {
        this.update(id, (job) => failedAuditJob(job, err instanceof Error ? err.message : String(err), this.now()));
        if (controller.signal.aborted) log.info({ audit_id: id }, 'audit job stopped with its instance');
        else log.error({ audit_id: id, err }, 'audit job failed');
      },
    );
    this.running = {
      id,
      controller,
      settled: settled.finally(() => {
        this.running = null;
        this.jobs = retainedAuditJobs(this.jobs, this.options.keepFinished ?? FINISHED_AUDIT_JOBS_KEPT);
      }),
    };
    return { job: this.get(id)!, started: true };
  }

  /** The job as it stands; undefined if this instance has no such job (never had, dropped, or restarted since). */
  get(id: string): AuditJobResponse | undefined {
    const job = this.jobs.find((j) => j.id === id);
    return job && auditJobView(job, this.now());
  }

  /** Stops the running audit, if any (the instance is stopping), once it has let go of its connections. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.controller.abort(new Error('the instance stopped'));
    await running.settled;
  }

  private update(id: string, step: (job: AuditJob) => AuditJob) {
    this.jobs = this.jobs.map((job) => (job.id === id ? step(job) : job));
  }

  private now() {
    return this.options.now?.() ?? Date.now();
  }
}
