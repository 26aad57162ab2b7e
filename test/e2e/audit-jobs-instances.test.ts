// Audit jobs across instances on one database (ADR 0012): a job started on one instance is
// answered by another; a second start on the other while it runs gives the running one; the
// instance running it killed (SIGKILL) mid-audit, the other fails it once its heartbeat is older
// than AUDIT_HEARTBEAT_TIMEOUT_MS, then starts and finishes the next audit itself.
//
// The job is held mid-audit by holding the usage subscription's lock: the audit first brings the
// usage projection to the end of the log, and waits on that lock while a test holds it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { subscriptionLockKey } from '../../services/eventstore/subscription';
import { usageProjection } from '../../services/projections/usage';
import { serverUrl } from '../support/servers';
import { bearer, call } from './support-instances/http';
import { ADMIN_TOKEN, Admin, eventually, startChildInstance, startInstance, startSharedServers, type ChildInstance, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');
const HEARTBEAT_TIMEOUT_MS = 3_000;
const SETTINGS = { AUDIT_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) };

describe.skipIf(!databaseUrl || !redisUrl)('audit jobs across instances', () => {
  let servers: SharedServersHandle;
  let survivor: RunningServer;
  let doomed: ChildInstance;
  let holder: pg.Client;

  beforeAll(async () => {
    servers = await startSharedServers(redisUrl!);
    [survivor, doomed] = await Promise.all([startInstance(servers, SETTINGS), startChildInstance(servers, SETTINGS)]);
    holder = new pg.Client({ connectionString: servers.databaseUrl });
    await holder.connect();
  }, 60_000);
  afterAll(async () => {
    await holder?.end();
    await doomed?.stop();
    await survivor?.close();
    await servers?.close();
  });

  const admin = bearer(ADMIN_TOKEN);
  const getJob = (url: string, id: string) => call(url, `/admin/v1/audits/${id}`, { headers: admin });

  test('any instance answers for a job, one runs across instances, a job whose instance was killed is failed by the other', async () => {
    await new Admin(survivor.url).keyedWorkspace({ credits: 10 });
    // The usage projection cannot take a batch while this lock is held: the audit waits in catching_up.
    await holder.query('SELECT pg_advisory_lock($1)', [subscriptionLockKey(usageProjection.name)]);
    await new Admin(survivor.url).createWorkspace({ name: 'after the lock' });

    const started = await call(doomed.url, '/admin/v1/audits', { method: 'POST', headers: admin });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const id: string = started.body.id;

    const elsewhere = await getJob(survivor.url, id);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).toMatchObject({ id, state: 'running', phase: 'catching_up', report: null, error: null });
    // One at a time across instances: the other instance gives the running job, with its Location.
    const second = await call(survivor.url, '/admin/v1/audits', { method: 'POST', headers: admin });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.id).toBe(id);
    expect(second.headers.location).toBe(`/admin/v1/audits/${id}`);
    // Heartbeats keep it alive past the timeout.
    await new Promise((r) => setTimeout(r, HEARTBEAT_TIMEOUT_MS + 1_000));
    expect((await getJob(survivor.url, id)).body.state).toBe('running');

    await doomed.kill();
    const killedAt = Date.now();
    let failed = await getJob(survivor.url, id);
    expect(failed.body.state).toBe('running'); // its last heartbeat is recent yet
    expect(await eventually(async () => (failed = await getJob(survivor.url, id)).body.state !== 'running', HEARTBEAT_TIMEOUT_MS + 10_000, 200)).toBe(true);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(HEARTBEAT_TIMEOUT_MS - 1_000);
    expect(failed.body).toMatchObject({ id, state: 'failed', phase: null, report: null, error: expect.stringMatching(/^its instance \(.+\) stopped: no heartbeat since /) });
    expect(failed.body.finished_at).toEqual(expect.any(String));
    const metrics = await call(survivor.url, '/metrics', { headers: admin });
    expect(metrics.body).toMatch(/^lookup_api_audit_jobs_abandoned_total 1$/m);

    // The slot is free: the survivor runs the next audit to its end.
    await holder.query('SELECT pg_advisory_unlock_all()');
    const next = await call(survivor.url, '/admin/v1/audits', { method: 'POST', headers: admin });
    expect(next.status, JSON.stringify(next.body)).toBe(202);
    expect(next.body.id).not.toBe(id);
    let done = await getJob(survivor.url, next.body.id);
    expect(await eventually(async () => (done = await getJob(survivor.url, next.body.id)).body.state !== 'running', 60_000, 100)).toBe(true);
    expect(done.body).toMatchObject({ state: 'done', error: null, report: { ok: true, mismatches: [] } });
    // The dead one stays failed.
    expect((await getJob(survivor.url, id)).body.state).toBe('failed');
  }, 120_000);
});
