import { toStorableText } from '../../contracts/text';
import type { Sql, SqlExecutor } from '../eventstore/sql';
import type { AuditReport } from './audit';
import { abandonedAuditJob, isAbandonedAuditJob, isRunning, type AuditJob } from './audit-job';

/** Any constant: serialises claims of the one running slot (two instances starting an audit at once). */
const AUDIT_JOBS_LOCK = 724_010;

export interface AuditJobStoreOptions {
  /** A running job with no heartbeat for longer is dead (AUDIT_HEARTBEAT_TIMEOUT_MS). */
  heartbeatTimeoutMs: number;
  /** Finished jobs kept; older ones are deleted. */
  keepFinished: number;
  /** This instance's clock (epoch ms), for the end of a dead job it fails. */
  now?: () => number;
}

/** A job as read, with the dead one it may have failed on the way (for the caller's log and metrics). */
export interface ReadAuditJob {
  job: AuditJob;
  /** Set when this read found the job dead and failed it. */
  abandoned: boolean;
}

export type AuditJobClaim = { claimed: true; abandoned: AuditJob | null } | { claimed: false; running: AuditJob };

/**
 * Audit jobs in PostgreSQL (table audit_jobs, migration 010): any instance reads any job, at most
 * one runs at a time across instances (a partial unique index; claims serialised by an advisory
 * lock), and a running job whose heartbeat is older than the timeout is failed by whichever
 * instance reads it (the rule is isAbandonedAuditJob). Every write to a job is conditional on it
 * still running, so a job failed as dead stays failed even if its instance was only slow.
 */
export class AuditJobStore {
  constructor(
    private readonly sql: Sql,
    private readonly options: AuditJobStoreOptions,
  ) {}

  /** Takes the running slot for `job` (just started), unless a live job holds it: then that one. */
  async claim(job: AuditJob, runner: string): Promise<AuditJobClaim> {
    return this.sql.transaction(async (tx) => {
      if (this.sql.backend === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_JOBS_LOCK]);
      const running = await readJobs(tx, "state = 'running'", []);
      let abandoned: AuditJob | null = null;
      if (running[0]) {
        const read = await this.failIfAbandoned(tx, running[0]);
        if (!read.abandoned) return { claimed: false, running: read.job };
        abandoned = read.job;
      }
      await tx.query(
        `INSERT INTO audit_jobs (id, state, phase, started_at, heartbeat_at, runner)
         VALUES ($1, 'running', $2, $3::timestamptz, now(), $4)`,
        [job.id, job.progress.phase, new Date(job.startedAt).toISOString(), toStorableText(runner)],
      );
      return { claimed: true, abandoned };
    });
  }

  /** The job, failed first if it is dead; undefined if there is no such job (never was, or dropped). */
  async get(id: string): Promise<ReadAuditJob | undefined> {
    const [row] = await readJobs(this.sql, 'id = $1', [id]);
    if (!row) return undefined;
    if (!isAbandonedAuditJob(row.job, row.heartbeatAt, row.now, this.options.heartbeatTimeoutMs)) return { job: row.job, abandoned: false };
    return this.sql.transaction((tx) => this.failIfAbandoned(tx, row));
  }

  /**
   * Writes the running job's progress and a heartbeat. False when the job no longer runs in the
   * table: another instance judged it dead and failed it, so its audit should stop.
   */
  async heartbeat(job: AuditJob): Promise<boolean> {
    const { rowCount } = await this.sql.query(
      `UPDATE audit_jobs SET heartbeat_at = now(), phase = $2, events_read = $3, position = $4, head_position = $5, reading_since = $6::timestamptz
        WHERE id = $1 AND state = 'running'`,
      [job.id, job.progress.phase, job.progress.events, job.progress.position, job.progress.head, isoOrNull(job.readingSince)],
    );
    return rowCount > 0;
  }

  /** Writes the job's end. False when it had already been failed as dead by another instance (it stays so). */
  async finish(job: AuditJob): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      const written = await writeEnd(tx, job);
      await this.deleteOldFinished(tx);
      return written;
    });
  }

  private async failIfAbandoned(tx: SqlExecutor, row: JobRow): Promise<ReadAuditJob> {
    if (!isAbandonedAuditJob(row.job, row.heartbeatAt, row.now, this.options.heartbeatTimeoutMs)) return { job: row.job, abandoned: false };
    const failed = abandonedAuditJob(row.job, row.runner, row.heartbeatAt, this.now());
    // Only if no heartbeat came in meanwhile: a live instance's job is never failed.
    const written = await writeEnd(tx, failed, row.heartbeatAt);
    if (!written) {
      const [again] = await readJobs(tx, 'id = $1', [row.job.id]);
      return { job: again?.job ?? row.job, abandoned: false };
    }
    await this.deleteOldFinished(tx);
    return { job: failed, abandoned: true };
  }

  private async deleteOldFinished(tx: SqlExecutor): Promise<void> {
    await tx.query(
      `DELETE FROM audit_jobs WHERE state <> 'running' AND id NOT IN (
         SELECT id FROM audit_jobs WHERE state <> 'running' ORDER BY finished_at DESC, id DESC LIMIT $1)`,
      [this.options.keepFinished],
    );
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}

interface JobRow {
  job: AuditJob;
  runner: string;
  /** Epoch ms on the database's clock, like `now`. */
  heartbeatAt: number;
  now: number;
}

const epochMs = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::float8`;

async function readJobs(sql: SqlExecutor, where: string, params: unknown[]): Promise<JobRow[]> {
  const { rows } = await sql.query<{
    id: string;
    state: 'running' | 'done' | 'failed';
    phase: AuditJob['progress']['phase'];
    started_at: number;
    reading_since: number | null;
    events_read: number;
    position: number;
    head_position: number | null;
    heartbeat_at: number;
    runner: string;
    finished_at: number | null;
    report: AuditReport | null;
    error: string | null;
    now: number;
  }>(
    `SELECT id, state, phase, ${epochMs('started_at')} AS started_at, ${epochMs('reading_since')} AS reading_since,
            events_read, position, head_position, ${epochMs('heartbeat_at')} AS heartbeat_at, runner,
            ${epochMs('finished_at')} AS finished_at, report, error, ${epochMs('now()')} AS now
       FROM audit_jobs WHERE ${where}`,
    params,
  );
  return rows.map((r) => ({
    job: {
      id: r.id,
      startedAt: r.started_at,
      progress: { phase: r.phase, events: Number(r.events_read), position: Number(r.position), head: r.head_position === null ? null : Number(r.head_position) },
      readingSince: r.reading_since,
      end:
        r.state === 'done'
          ? { state: 'done', report: r.report!, at: r.finished_at! }
          : r.state === 'failed'
            ? { state: 'failed', failure: r.error ?? 'failed', at: r.finished_at! }
            : null,
    },
    runner: r.runner,
    heartbeatAt: r.heartbeat_at,
    now: r.now,
  }));
}

/** The job's end and last progress, if it still runs (and, given `heartbeatAt`, has sent no heartbeat since). */
async function writeEnd(tx: SqlExecutor, job: AuditJob, heartbeatAt?: number): Promise<boolean> {
  if (isRunning(job)) throw new Error(`audit job ${job.id} has not ended`);
  const end = job.end!;
  const { rowCount } = await tx.query(
    `UPDATE audit_jobs
        SET state = $2, finished_at = $3::timestamptz, report = $4::jsonb, error = $5,
            phase = $6, events_read = $7, position = $8, head_position = $9, reading_since = $10::timestamptz
      WHERE id = $1 AND state = 'running' AND ($11::float8 IS NULL OR ${epochMs('heartbeat_at')} = $11::float8)`,
    [
      job.id,
      end.state,
      new Date(end.at).toISOString(),
      end.state === 'done' ? JSON.stringify(end.report) : null,
      end.state === 'failed' ? toStorableText(end.failure) : null,
      job.progress.phase,
      job.progress.events,
      job.progress.position,
      job.progress.head,
      isoOrNull(job.readingSince),
      heartbeatAt ?? null,
    ],
  );
  return rowCount > 0;
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
