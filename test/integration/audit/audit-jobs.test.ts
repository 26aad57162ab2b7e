// Audit jobs on real PostgreSQL: a log of several pages audited in its worker thread while the job
// shows how far it got; one job at a time; stopped with its instance (its connections let go), its
// end written to audit_jobs and read by another registry; a failure kept as such; a bounded number kept. Then the whole path an operator takes: the
// admin CLI against a running server, progress on stderr, the report on stdout, the metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditJobResponse } from '../../../contracts/http';
import { startServer } from '../../../services/api/server';
import { loadConfig } from '../../../services/config/config';
import { run } from '../../../services/console/cli';
import { EventStore } from '../../../services/eventstore/event-store';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { audit } from '../../../services/audit/audit';
import { AuditJobStore } from '../../../services/audit/audit-job-store';
import { AuditJobs, type AuditJobLog } from '../../../services/audit/audit-jobs';
import { runAudit } from '../../../services/audit/audit-runner';
import { INLINE_PROJECTIONS } from '../../../services/projections/inline';
import { writeChargedLog } from '../../support/charged-log';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';

/** More than two of the audit's pages (5,000 events each). */
const EVENTS = 12_000;
const ADMIN_TOKEN = 'audit-jobs-admin-token-'.padEnd(40, 'x');

describe.runIf(serverUrl('postgres'))('audit jobs on PostgreSQL', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let sql: Sql;
  let store: EventStore;
  let head: number;
  /** Events in the log: EVENTS, give or take the events of one call. */
  let events: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = createPgSql(db.url);
    await migrate(sql);
    store = new EventStore(sql, INLINE_PROJECTIONS);
    events = await writeChargedLog(store, { events: EVENTS, workspaces: 3 });
    head = Number((await sql.query<{ head: string }>('SELECT max(position)::text AS head FROM events')).rows[0]!.head);
  }, 120_000);
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  function recordingLog() {
    const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
    const log: AuditJobLog = {
      info: (fields, message) => lines.push({ level: 'info', message, fields: fields as Record<string, unknown> }),
      warn: (fields, message) => lines.push({ level: 'warn', message, fields: fields as Record<string, unknown> }),
      error: (fields, message) => lines.push({ level: 'error', message, fields: fields as Record<string, unknown> }),
    };
    return { log, lines };
  }

  const quiet: AuditJobLog = { info: () => {}, warn: () => {}, error: () => {} };
  const storeOf = (keepFinished = 20) => new AuditJobStore(sql, { heartbeatTimeoutMs: 30_000, keepFinished });

  async function finished(jobs: AuditJobs, id: string): Promise<AuditJobResponse> {
    for (;;) {
      const job = (await jobs.get(id, quiet))!;
      if (job.state !== 'running') return job;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  const workerConnections = async () =>
    Number((await sql.query<{ n: string }>("SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")).rows[0]!.n);

  it('shows a job reading the log page by page up to its head, one job at a time, then its report', async () => {
    // The job as GET /admin/v1/audits/{id} would show it right after each report of the worker.
    const seen: AuditJobResponse[] = [];
    let jobId = '';
    const jobs: AuditJobs = new AuditJobs((options) =>
      runAudit(store, {
        databaseUrl: db.url,
        signal: options.signal,
        onProgress: (progress) => {
          options.onProgress(progress);
          // This instance's own job: answered from its memory at once, in order.
          void jobs.get(jobId, quiet).then((view) => seen.push(view!));
        },
      }),
      storeOf(),
    );
    const { log, lines } = recordingLog();
    const started = await jobs.start(log);
    jobId = started.job.id;
    expect(started).toMatchObject({ started: true, job: { state: 'running', phase: 'catching_up', events_read: 0, head_position: null } });
    const again = await jobs.start(log);
    expect(again).toMatchObject({ started: false, job: { id: jobId, state: 'running' } });

    const done = await finished(jobs, jobId);
    const report = await audit(store);
    expect(done).toMatchObject({ state: 'done', phase: null, events_read: report.events, position: head, head_position: head, percent: 100, error: null });
    expect(done.report).toEqual(report);
    expect(report).toMatchObject({ ok: true, events });

    const replaying = seen.filter((view) => view.phase === 'replaying' && view.events_read > 0);
    expect(replaying.map((view) => view.events_read)).toEqual([5000, 10000, events]);
    expect(replaying.every((view) => view.state === 'running' && view.head_position === head)).toBe(true);
    expect(replaying[0]!.percent).toBeGreaterThan(0);
    expect(replaying[0]!.percent).toBeLessThan(replaying[1]!.percent!);
    expect(seen.at(-1)).toMatchObject({ phase: 'comparing', events_read: events, percent: 100 });

    expect(lines.map((l) => `${l.level} ${l.message}`)).toEqual(['info audit job started', 'info audit job done']);
    expect(lines[1]!.fields).toMatchObject({ audit_id: jobId, ok: true, events, mismatches: 0, broken_chains: 0 });
    // Finished, it gives way to the next.
    expect((await jobs.start(log)).started).toBe(true);
    await jobs.stop();
  });

  it('stops the running job with its instance, the worker letting go of its connections; a failure stays a failure; only the last finished are kept', async () => {
    const baseline = await workerConnections();
    let reading!: () => void;
    const readingTheLog = new Promise<void>((resolve) => (reading = resolve));
    const jobs = new AuditJobs(
      (options) =>
        runAudit(store, {
          databaseUrl: db.url,
          signal: options.signal,
          onProgress: (progress) => {
            options.onProgress(progress);
            if (progress.events > 0) reading();
          },
        }),
      storeOf(1),
    );
    const { log, lines } = recordingLog();
    const stopped = (await jobs.start(log)).job.id;
    // Halfway through the log: its first page read, the rest not.
    await readingTheLog;
    await jobs.stop();
    // Written to the table: another instance (another registry on the same database) reads it.
    const elsewhere = new AuditJobs(() => Promise.reject(new Error('not run here')), storeOf(1));
    expect(await elsewhere.get(stopped, quiet)).toMatchObject({ state: 'failed', error: 'the instance stopped', report: null });
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'audit job stopped' });
    await expect.poll(workerConnections, { timeout: 10_000 }).toBe(baseline);

    const broken = new URL(db.url);
    broken.pathname = '/no_such_database_for_audits';
    const failing = new AuditJobs((options) => runAudit(store, { databaseUrl: broken.toString(), ...options }), storeOf(1));
    const failedId = (await failing.start(log)).job.id;
    const failed = await finished(failing, failedId);
    expect(failed).toMatchObject({ state: 'failed', report: null });
    expect(failed.error).toMatch(/no_such_database_for_audits/);
    expect(lines.at(-1)).toMatchObject({ level: 'error', message: 'audit job failed', fields: { audit_id: failedId } });

    // Its end is in the table once its instance has let it go: until then another start answers with it.
    await failing.stop();
    // Kept: the one that finished last; the stopped one is dropped once another finishes.
    const restarted = await jobs.start(log);
    expect(restarted.started).toBe(true);
    const next = restarted.job.id;
    await finished(jobs, next);
    expect(await jobs.get(stopped, quiet)).toBeUndefined();
    // The error, if any, is part of what is compared: a failure says why in the test's output.
    expect(await jobs.get(next, quiet)).toMatchObject({ state: 'done', error: null });
  });

  it('the admin CLI starts a job on a running server and prints its progress, then the report; the metrics count it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'audit-jobs-'));
    const server = await startServer(loadConfig({ PORT: '0', ADMIN_TOKEN, DATABASE_URL: db.url, SOURCE_URL: 'sandbox', DATA_DIR: dataDir, LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '60000' }));
    try {
      let stdout = '';
      let stderr = '';
      const code = await run(['audit', '--url', server.url, '--token', ADMIN_TOKEN], {
        env: {},
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
        auditPollMs: 20,
      });
      expect({ code, stderr }).toMatchObject({ code: 0 });
      expect(stdout).toBe(`audit ok: ${events} events, 3 workspaces, 3 ledger chains, every projection matches the log\n`);
      const lines = stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^audit aud_[0-9A-Z]{26}: started on the server$/);
      expect(lines.at(-1)).toMatch(new RegExp(`^audit aud_[0-9A-Z]{26}: done, ${events} events read in \\d+\\.\\ds \\(\\d+ events/s\\)$`));
      for (const line of lines.slice(1, -1)) expect(line).toMatch(/: (catching the usage projection up|\d+ events read, \d+\.\d% of the log \(position \d+ of \d+\), \d+ events\/s)/);

      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
      expect(metrics).toMatch(/^lookup_api_audit_duration_seconds_count\{outcome="ok"\} [1-9]\d*$/m);
      expect(metrics).toMatch(/^lookup_api_audits_running 0$/m);
      expect(metrics).toMatch(/^lookup_api_audit_events_per_second [1-9]\d*$/m);
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
