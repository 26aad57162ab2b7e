// PostgreSQL restarted or stopped under load, on a private cluster this file owns. Two API
// instances (child processes) take a steady mix of cache hits, live fetches and not-founds (half of
// them with an Idempotency-Key) while the database goes away, plus a third that stays idle. No
// process may exit, every answer must be a 200, a 404 or a 503 service_unavailable (never a 500,
// never a dropped connection), the instances serve again by themselves, and every credit
// reconciles: per request, the ledger holds exactly what the answer said was charged, refunds of
// the outage written by the instances themselves (the abandoned-charge sweeper would take over a
// minute). Each test brings about its own outage, so any one runs alone with `-t`. The last test calls
// the batch, webhook-endpoint, watch, password-reset and alert endpoints while it is away.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { usageProjection } from '../../services/projections/usage';
import { startSandbox, type Sandbox } from '../../services/sandbox/server';
import { privateServersAvailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-servers';
import { serverUrl } from '../support/servers';
import { ADMIN_TOKEN, Admin, eventually, startChildInstance, type ChildInstance, type SharedServers } from './support-instances/instances';
import { bearer, call, type HttpAnswer } from './support-instances/http';

const redisUrl = serverUrl('redis');
const available = privateServersAvailable(['postgres'], 'test/e2e/postgres-restart.test.ts');

/** Concurrent callers during an outage. */
const WORKERS = 20;
/** This file's own Redis logical database: its keys never meet another suite's. */
const REDIS_DATABASE = 9;

const COMPANY = 'https://www.linkedin.com/company/acme-robotics';
/** Each kind of call the load sends, in turn: hits, live fetches, live not-founds (one partly refunded). */
const CALLS: Array<{ path: string; body: Record<string, unknown> }> = [
  { path: '/v1/company', body: { url: COMPANY } },
  { path: '/v1/company', body: { url: COMPANY, max_age: 0 } },
  { path: '/v1/company', body: { url: COMPANY } },
  { path: '/v1/company', body: { url: 'https://www.linkedin.com/company/999999999', max_age: 0 } },
  { path: '/v1/person', body: { url: 'https://www.linkedin.com/in/nobody-here-000', max_age: 0 } },
  { path: '/v1/person', body: { url: 'Nobody Anywhere Atall', max_age: 0 } },
];

interface Answer {
  instance: number;
  /** Started after the outage was over (the database answering again). */
  afterOutage: boolean;
  answer?: HttpAnswer;
  /** The connection failed: no answer at all. */
  dropped?: string;
}

function ownRedisDatabase(url: string): string {
  const u = new URL(url);
  u.pathname = `/${REDIS_DATABASE}`;
  return u.toString();
}

describe.skipIf(!redisUrl || !available)('PostgreSQL restarted under load', () => {
  let postgres: PrivatePostgres;
  let sandbox: Sandbox;
  const instances: ChildInstance[] = [];
  let idle: ChildInstance;
  let admin: Admin;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
    const servers: SharedServers = { databaseUrl: postgres.url, redisUrl: ownRedisDatabase(redisUrl!), sourceUrl: sandbox.url };
    // Load shedding would answer 503 no_capacity on a busy test machine; that is another suite's subject.
    const env = { MAX_EVENT_LOOP_DELAY_MS: '60000', SOURCE_TIMEOUT_MS: '5000' };
    // One after the other: the first one migrates the fresh cluster.
    instances.push(await startChildInstance(servers, env));
    instances.push(await startChildInstance(servers, env));
    idle = await startChildInstance(servers, env);
    admin = new Admin(instances[0]!.url);
  }, 90_000);

  afterAll(async () => {
    for (const instance of [...instances, idle]) await instance?.stop();
    await sandbox?.close();
    await postgres?.destroy();
  });

  const alive = (instance: ChildInstance) => instance.process.exitCode === null && instance.process.signalCode === null;

  function expectAllAlive() {
    for (const instance of [...instances, idle]) expect(alive(instance), `an instance exited:\n${instance.output()}`).toBe(true);
  }

  /** Runs the load, brings the database down with `outage` (resolving once it is back), and checks everything. */
  async function underLoad(outage: () => Promise<void>) {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 1_000_000, max_concurrency: 1000, rate_limit_per_minute: 100_000 });
    const initial = (await admin.workspace(workspaceId)).balance;
    const answers: Answer[] = [];
    let outageOver = false;
    let stop = false;

    const worker = async (w: number) => {
      const instance = w % instances.length;
      // Bounded however the outage goes: at most this many calls per worker.
      for (let i = 0; i < 1500 && !stop; i++) {
        const afterOutage = outageOver;
        const { path, body } = CALLS[(w + i) % CALLS.length]!;
        // Half the workers send an Idempotency-Key (its own per call): the claims and stored
        // answers, group-committed, meet the outage too.
        const headers = w % 2 === 1 ? { ...bearer(key), 'idempotency-key': `outage-${workspaceId}-${w}-${i}` } : bearer(key);
        try {
          answers.push({ instance, afterOutage, answer: await call(instances[instance]!.url, path, { headers, body }) });
        } catch (err) {
          answers.push({ instance, afterOutage, dropped: String(err) });
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

    const ok = (instance: number, afterOutage: boolean) =>
      answers.filter((a) => a.instance === instance && a.afterOutage === afterOutage && a.answer?.status === 200).length;
    const warmedUp = await eventually(async () => ok(0, false) >= 20 && ok(1, false) >= 20, 30_000);
    await outage();
    outageOver = true;
    // Back by themselves: no instance is restarted.
    const recovered = await eventually(async () => ok(0, true) >= 20 && ok(1, true) >= 20, 30_000, 100);
    stop = true;
    await load;

    expect(warmedUp, 'the load never got going').toBe(true);
    expectAllAlive();
    expect(recovered, `no 200s after the outage: ${summary(answers)}`).toBe(true);

    expect(answers.filter((a) => a.dropped), 'connections dropped without an answer').toEqual([]);
    const byStatus = countBy(answers.map((a) => a.answer!.status));
    expect(Object.keys(byStatus).sort(), summary(answers)).toEqual(expect.arrayContaining(['200']));
    for (const status of Object.keys(byStatus)) expect(['200', '404', '503'], summary(answers)).toContain(status);
    const unavailable = answers.filter((a) => a.answer!.status === 503).map((a) => a.answer!);
    expect(unavailable.length, 'no call met the outage').toBeGreaterThan(0);
    for (const answer of unavailable) {
      expect(answer.body.error).toMatchObject({ code: 'service_unavailable', type: 'api_error', retryable: true });
      expect(answer.body.error.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(answer.headers['retry-after']).toBe(String(answer.body.error.retry_after_seconds));
      expect(answer.headers['x-request-id']).toBe(answer.body.meta.request_id);
      expect(answer.body.meta.credits_charged).toBe(0);
    }

    // Money: the balance moved by exactly what the answers said, once the instances have written
    // the refunds owed during the outage (they retry until the database answers).
    const charged = answers.reduce((sum, a) => sum + a.answer!.body.meta.credits_charged, 0);
    let balance = NaN;
    const reconciled = await eventually(async () => (balance = (await admin.workspace(workspaceId)).balance) === initial - charged, 20_000, 100);
    expect(reconciled, `balance ${balance}, expected ${initial} - ${charged}`).toBe(true);

    // Per request: the ledger's net charge is what the answer said, so every charge of a 503 has its refund.
    const net = await netChargedByRequest(postgres.url, workspaceId);
    const wrong = answers
      .map((a) => ({ request: a.answer!.body.meta.request_id as string, status: a.answer!.status, said: a.answer!.body.meta.credits_charged as number }))
      .filter((a) => (net.get(a.request) ?? 0) !== a.said)
      .map((a) => ({ ...a, ledger: net.get(a.request) ?? 0 }));
    expect(wrong).toEqual([]);

    const audit = await call(instances[1]!.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect(audit.status).toBe(200);
    expect(audit.body.mismatches).toEqual([]);
    expect(audit.body.ok).toBe(true);

    await expectIdleServesAgain();
    return { answers, unavailable: unavailable.length };
  }

  /** The instance that had no calls during the outage serves again by itself, subscriptions included. */
  async function expectIdleServesAgain() {
    expectAllAlive();
    const { key } = await admin.keyedWorkspace({ credits: 10 });
    let answer: HttpAnswer | undefined;
    const served = await eventually(async () => (answer = await call(idle.url, '/v1/company', { headers: bearer(key), body: { url: COMPANY } })).status === 200, 15_000, 100);
    expect(served, `the idle instance does not serve again: ${JSON.stringify(answer?.body)}`).toBe(true);
    const health = await call(idle.url, '/v1/health');
    expect(health.status).toBe(200);
    // The usage subscription polls again: it reaches the lookups just made.
    expect(await eventually(async () => !(await usageBehind(postgres.url)), 15_000, 100), 'the usage subscription is stuck').toBe(true);
  }

  // A restart takes well under a second with nothing to flush; on a loaded machine no call may fall
  // into it. Half a second down between stop and start makes sure the load meets the outage.
  const restart = (mode: 'fast' | 'immediate') => async () => {
    await postgres.stop(mode);
    await new Promise((r) => setTimeout(r, 500));
    await postgres.start();
  };

  test('pg_ctl restart -m fast', async () => {
    await underLoad(restart('fast'));
  }, 90_000);

  test('pg_ctl restart -m immediate', async () => {
    await underLoad(restart('immediate'));
  }, 90_000);

  test('five seconds without a database', async () => {
    await underLoad(async () => {
      await postgres.stop('fast');
      await new Promise((r) => setTimeout(r, 5_000));
      await postgres.start();
    });
  }, 90_000);

  test('while the database is away: health, the admin API, audit jobs and the console answer 503 with Retry-After, and nothing exits', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 10 });
    // A console session opened before the outage.
    const invitation = await call(idle.url, `/admin/v1/workspaces/${workspaceId}/invitations`, { headers: bearer(ADMIN_TOKEN), body: { email: 'owner@outage.example', role: 'owner' } });
    expect(invitation.status, JSON.stringify(invitation.body)).toBe(201);
    const accepted = await call(idle.url, '/console/v1/invitations/accept', { body: { token: new URL(invitation.body.link).searchParams.get('token'), password: 'outage password 123456' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const cookie = String(accepted.headers['set-cookie']).split(';')[0]!;
    // An audit job finished before the outage: read from PostgreSQL like every job.
    const audited = await call(idle.url, '/admin/v1/audits', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect(audited.status, JSON.stringify(audited.body)).toBe(202);
    const auditDone = async () => (await call(idle.url, `/admin/v1/audits/${audited.body.id}`, { headers: bearer(ADMIN_TOKEN) })).body.state === 'done';
    expect(await eventually(auditDone, 30_000)).toBe(true);
    await postgres.stop('fast');
    try {
      const statement = await call(idle.url, `/console/v1/statement?from=${encodeURIComponent('2000-01-01T00:00:00Z')}&to=${encodeURIComponent('2999-01-01T00:00:00Z')}`, { headers: { cookie } });
      expect(statement.status, JSON.stringify(statement.body)).toBe(503);
      expect(statement.body.error).toMatchObject({ code: 'service_unavailable', retryable: true });

      const syncAudit = await call(idle.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
      expect(syncAudit.status).toBe(503);
      // Audit jobs live in PostgreSQL: neither started nor read while it is away, 503 and never 500.
      for (const answer of [
        await call(idle.url, '/admin/v1/audits', { method: 'POST', headers: bearer(ADMIN_TOKEN) }),
        await call(idle.url, `/admin/v1/audits/${audited.body.id}`, { headers: bearer(ADMIN_TOKEN) }),
      ]) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(503);
        expect(answer.body.error).toMatchObject({ code: 'service_unavailable', retryable: true });
        expect(answer.headers['retry-after']).toBe(String(answer.body.error.retry_after_seconds));
      }

      const health = await call(idle.url, '/v1/health');
      expect(health.status).toBe(503);
      expect(health.body.checks.database).toBe('fail');

      const workspace = await call(idle.url, '/admin/v1/workspaces', { method: 'POST', headers: bearer(ADMIN_TOKEN), body: { name: 'during-outage' } });
      expect(workspace.status).toBe(503);
      expect(workspace.body.error).toMatchObject({ code: 'service_unavailable', retryable: true });
      expect(workspace.headers['retry-after']).toBe(String(workspace.body.error.retry_after_seconds));

      const lookup = await call(idle.url, '/v1/company', { headers: bearer(key), body: { url: COMPANY } });
      expect(lookup.status).toBe(503);
      expect(lookup.body.error.code).toBe('service_unavailable');
      expect(lookup.body.meta.credits_charged).toBe(0);
      const keyed = await call(idle.url, '/v1/company', { headers: { ...bearer(key), 'idempotency-key': 'during-outage' }, body: { url: COMPANY } });
      expect(keyed.status).toBe(503);
      expect(keyed.body.error.code).toBe('service_unavailable');
      expect(keyed.body.meta.credits_charged).toBe(0);
    } finally {
      await postgres.start();
    }
    await expectIdleServesAgain();
    expect(await eventually(auditDone, 10_000)).toBe(true);
  }, 60_000);

  test('while the database is away: the batch, webhook endpoints, watches, password reset and alerts answer 503 (never 500), their workers keep the process alive', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 10 });
    const invitation = await call(idle.url, `/admin/v1/workspaces/${workspaceId}/invitations`, { headers: bearer(ADMIN_TOKEN), body: { email: 'owner@outage-two.example', role: 'owner' } });
    expect(invitation.status, JSON.stringify(invitation.body)).toBe(201);
    const accepted = await call(idle.url, '/console/v1/invitations/accept', { body: { token: new URL(invitation.body.link).searchParams.get('token'), password: 'outage password 654321' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const session = { cookie: String(accepted.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': accepted.body.csrf_token };
    // Registered before the outage: the delivery worker and the watch scheduler have rows to poll.
    const endpoint = await call(idle.url, '/v1/webhook-endpoints', { headers: bearer(key), body: { url: 'https://hooks.example.com/outage', event_types: ['profile.changed'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    await postgres.stop('fast');
    try {
      const answers = {
        batch: await call(idle.url, '/v1/batch', { headers: bearer(key), body: { items: [{ operation: 'company', body: { url: COMPANY } }] } }),
        createEndpoint: await call(idle.url, '/v1/webhook-endpoints', { headers: bearer(key), body: { url: 'https://hooks.example.com/other', event_types: ['profile.changed'] } }),
        listEndpoints: await call(idle.url, '/v1/webhook-endpoints', { method: 'GET', headers: bearer(key) }),
        createWatch: await call(idle.url, '/v1/watches', { headers: bearer(key), body: { operation: 'company', body: { url: COMPANY }, every: '1d', webhook_endpoint_id: endpoint.body.data.id } }),
        listWatches: await call(idle.url, '/v1/watches', { method: 'GET', headers: bearer(key) }),
        askReset: await call(idle.url, '/console/v1/password-reset', { body: { workspace_id: workspaceId, email: 'owner@outage-two.example' } }),
        setAlerts: await call(idle.url, '/console/v1/alerts', { method: 'PATCH', headers: session, body: { low_balance_threshold: 5 } }),
      };
      // A batch answers per item: the batch itself may be 200, its item then the single call's 503, uncharged.
      const batch = answers.batch;
      if (batch.status === 200) expect(batch.body.data[0]).toMatchObject({ status: 503, credits_charged: 0, error: { code: 'service_unavailable' } });
      for (const [name, answer] of Object.entries(answers)) {
        if (name === 'batch' && answer.status === 200) continue;
        expect(answer.status, `${name}: ${JSON.stringify(answer.body)}`).toBe(503);
        expect(answer.body.error, name).toMatchObject({ code: 'service_unavailable', retryable: true });
        expect(answer.headers['retry-after'], name).toBe(String(answer.body.error.retry_after_seconds));
      }
      // The workers poll through the outage (a webhook, watch, email or alert pass fails each time).
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    } finally {
      await postgres.start();
    }
    await expectIdleServesAgain();
    const listed = await eventually(async () => (await call(idle.url, '/v1/webhook-endpoints', { method: 'GET', headers: bearer(key) })).status === 200, 10_000);
    expect(listed).toBe(true);
  }, 60_000);
});

/** True while some committed event lies past the usage subscription's checkpoint. */
async function usageBehind(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ behind: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM events e, subscription_checkpoints c
          WHERE c.name = $1 AND (e.transaction_id, e.position) > (c.transaction_id, c.position)
       ) OR NOT EXISTS (SELECT 1 FROM subscription_checkpoints WHERE name = $1) AS behind`,
      [usageProjection.name],
    );
    return rows[0]!.behind;
  } finally {
    await client.end();
  }
}

async function netChargedByRequest(databaseUrl: string, workspaceId: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string; net: string }>(
      `SELECT request_id, (-sum(credits))::text AS net FROM ledger_entries
        WHERE workspace_id = $1 AND request_id IS NOT NULL GROUP BY request_id`,
      [workspaceId],
    );
    return new Map(rows.map((r) => [r.request_id, Number(r.net)]));
  } finally {
    await client.end();
  }
}

function countBy(values: Array<string | number>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[String(v)] = (counts[String(v)] ?? 0) + 1;
  return counts;
}

function summary(answers: Answer[]): string {
  const seen = answers.map((a) => (a.dropped ? 'dropped' : `${a.answer!.status} ${a.answer!.body?.error?.code ?? ''}`.trim()));
  return JSON.stringify(countBy(seen));
}
