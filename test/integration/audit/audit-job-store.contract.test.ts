// The audit job store's contract, on PGlite and on PostgreSQL (migration 010 on both): one running
// job at a time, any reader sees it, writes to a job only while it runs, a job whose heartbeat is
// older than the timeout failed by the reader that finds it (and then stays failed), only the last
// finished ones kept, text made storable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { createPgliteSql } from '../../../services/eventstore/sql-pglite';
import type { AuditReport } from '../../../services/audit/audit';
import { doneAuditJob, failedAuditJob, progressedAuditJob, startedAuditJob } from '../../../services/audit/audit-job';
import { AuditJobStore } from '../../../services/audit/audit-job-store';
import { AuditJobs, type AuditJobLog } from '../../../services/audit/audit-jobs';
import { createTestDatabase, serverUrl } from '../../support/servers';

const databaseUrl = serverUrl('postgres');
const backends: { name: string; open(): Promise<{ sql: Sql; cleanup(): Promise<void> }> }[] = [
  {
    name: 'PGlite',
    async open() {
      const sql = await createPgliteSql();
      return { sql, cleanup: () => sql.close() };
    },
  },
];
if (databaseUrl) {
  backends.push({
    name: 'PostgreSQL',
    async open() {
      const db = await createTestDatabase();
      const sql = createPgSql(db.url);
      return {
        sql,
        async cleanup() {
          await sql.close();
          await db.drop();
        },
      };
    },
  });
}

const report: AuditReport = { ok: true, events: 3, workspaces: 1, mismatches: [], chains: { checked: 1, broken: [] } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let ids = 0;
const newJob = () => startedAuditJob(`aud_contract_${++ids}`, Date.now());

describe.each(backends)('the audit job store on $name', (backend) => {
  let sql: Sql;
  let cleanup: () => Promise<void>;
  /** Two instances' stores on one database: a slow heartbeat (never judged dead here) and a quick one. */
  let patient: AuditJobStore;
  let quick: AuditJobStore;

  beforeAll(async () => {
    ({ sql, cleanup } = await backend.open());
    await migrate(sql);
    patient = new AuditJobStore(sql, { heartbeatTimeoutMs: 60_000, keepFinished: 3 });
    quick = new AuditJobStore(sql, { heartbeatTimeoutMs: 200, keepFinished: 3 });
  });
  afterAll(async () => cleanup?.());

  it('one running job: a second claim gets the first; any store reads it; its progress and end are written while it runs, never after', async () => {
    const first = newJob();
    expect(await patient.claim(first, 'host-a/1')).toEqual({ claimed: true, abandoned: null });
    const second = await patient.claim(newJob(), 'host-b/2');
    expect(second).toMatchObject({ claimed: false, running: { id: first.id, end: null } });

    const progressed = progressedAuditJob(first, { phase: 'replaying', events: 40, position: 50, head: 100 }, first.startedAt + 1_000);
    expect(await patient.heartbeat(progressed)).toBe(true);
    expect(await patient.get(first.id)).toEqual({ job: progressed, abandoned: false });

    const done = doneAuditJob(progressed, report, first.startedAt + 2_000);
    expect(await patient.finish(done)).toBe(true);
    expect(await patient.get(first.id)).toEqual({ job: done, abandoned: false });
    expect(await patient.heartbeat(progressed)).toBe(false);
    expect(await patient.finish(failedAuditJob(progressed, 'too late', first.startedAt + 3_000))).toBe(false);
    expect((await patient.get(first.id))!.job.end).toMatchObject({ state: 'done', report });
    expect(await patient.get('aud_no_such_job')).toBeUndefined();
  });

  it('a job with no heartbeat past the timeout: failed by the reader that finds it, once; its instance can then write nothing; the slot is free', async () => {
    const job = newJob();
    expect((await patient.claim(job, 'host-a/1')).claimed).toBe(true);
    // Read by the patient store: alive. By the quick one, once its timeout has passed: dead.
    expect((await patient.get(job.id))!.abandoned).toBe(false);
    await sleep(500);
    const found = await quick.get(job.id);
    expect(found).toMatchObject({ abandoned: true, job: { id: job.id, end: { state: 'failed', failure: expect.stringMatching(/^its instance \(host-a\/1\) stopped: no heartbeat since \d{4}-/) } } });
    expect(await quick.get(job.id)).toMatchObject({ abandoned: false, job: { end: { state: 'failed' } } });
    expect(await patient.heartbeat(job)).toBe(false);
    expect(await patient.finish(doneAuditJob(job, report, Date.now()))).toBe(false);
    expect((await patient.get(job.id))!.job.end!.state).toBe('failed');
    const next = newJob();
    expect(await patient.claim(next, 'host-b/2')).toEqual({ claimed: true, abandoned: null });
    await patient.finish(doneAuditJob(next, report, Date.now()));
  });

  it('a claim finding a dead running job fails it and takes the slot; a job that keeps its heartbeat stays alive', async () => {
    const alive = newJob();
    await patient.claim(alive, 'host-a/1');
    for (let i = 0; i < 4; i++) {
      await sleep(50);
      expect(await patient.heartbeat(alive)).toBe(true);
    }
    expect(await quick.claim(newJob(), 'host-b/2')).toMatchObject({ claimed: false, running: { id: alive.id } });
    await sleep(500);
    const taking = newJob();
    const claim = await quick.claim(taking, 'host-b/2');
    expect(claim).toMatchObject({ claimed: true, abandoned: { id: alive.id, end: { state: 'failed' } } });
    await quick.finish(doneAuditJob(taking, report, Date.now()));
  });

  it('a registry whose job another instance failed as dead sees its heartbeat refused and stops its audit; the failure written by the other stays', async () => {
    const lines: string[] = [];
    const log: AuditJobLog = { info: (_, m) => lines.push(`info ${m}`), warn: (_, m) => lines.push(`warn ${m}`), error: (_, m) => lines.push(`error ${m}`) };
    // An audit that runs until it is stopped: what is under test is the registry around it.
    const endless = (options: { signal: AbortSignal }) => new Promise<AuditReport>((_, reject) => options.signal.addEventListener('abort', () => reject(options.signal.reason)));
    const slow = new AuditJobs(endless, patient, { heartbeatEveryMs: 50, runner: 'host-slow/1' });
    const { job, started } = await slow.start(log);
    expect(started).toBe(true);
    // Another instance that judges every heartbeat dead at once.
    const strict = new AuditJobStore(sql, { heartbeatTimeoutMs: 0, keepFinished: 3 });
    // Read until its clock has moved past the last heartbeat (a read in the same millisecond sees it alive).
    await expect.poll(async () => (await strict.get(job.id))?.abandoned, { timeout: 5_000, interval: 5 }).toBe(true);
    expect((await strict.get(job.id))!.job.end).toMatchObject({ state: 'failed' });
    await expect.poll(() => lines.includes('info audit job stopped'), { timeout: 5_000 }).toBe(true);
    expect(lines).toContain('error audit job was failed by another instance (its heartbeat came too late); stopping its audit');
    await expect.poll(async () => (await slow.get(job.id, log))?.error, { timeout: 5_000 }).toMatch(/^its instance \(host-slow\/1\) stopped: no heartbeat since/);
    expect(lines).toContain('warn audit job had already been failed by another instance; its end is not written');
  });

  it('keeps only the last finished jobs; a failure with text PostgreSQL cannot store is stored made storable', async () => {
    const finished: string[] = [];
    for (let i = 0; i < 4; i++) {
      const job = newJob();
      await patient.claim(job, 'host-a/1');
      await patient.finish(failedAuditJob(job, `broken \u0000 and \uD800 ${i}`, Date.now() + i));
      finished.push(job.id);
    }
    expect(await patient.get(finished[0]!)).toBeUndefined();
    expect((await patient.get(finished[3]!))!.job.end).toMatchObject({ state: 'failed', failure: 'broken \uFFFD and \uFFFD 3' });
    const { rows } = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_jobs WHERE state <> 'running'");
    expect(rows[0]!.n).toBe(3);
  });
});
