// DATABASE_URL listing a primary and its streaming standby, standby first
// (`postgres://…@127.0.0.1:<standby>,127.0.0.1:<primary>/lookup?target_session_attrs=read-write`),
// on two clusters this file makes with Debian's tools (test/support/pg-clusters.ts). The service
// writes to the primary; a primary turned read-only makes writes 503, not 500, until it takes
// writes again. Then two switchovers under a small load of charged lookups on two instances
// (child processes): the primary stopped and its standby promoted; and back, the primary fenced
// (read-only), its standby promoted, the old one stopped. Each time: no process exits, no 500,
// 503 only in the switch window (printed), every 200 has exactly one charge, balance = ledger,
// the audit is clean, and LISTEN hears NOTIFY from the new primary. The tests build on each
// other (roles switch): run the file whole.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { backgroundLogger } from '../../services/common/log';
import type { Sql } from '../../services/eventstore/sql';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { DatabaseUnavailableError } from '../../services/eventstore/unavailable';
import {
  caughtUp,
  type Cluster,
  createReplicatedPair,
  debianClustersAvailable,
  fenceWrites,
  followAsStandby,
  type ReplicatedPair,
  unfenceWrites,
} from '../support/pg-clusters';
import { serverUrl } from '../support/servers';
import { ADMIN_TOKEN, type Admin, eventually, type ChildInstance, type InstancePair, startInstancePair } from './support-instances/instances';
import { bearer, call, type HttpAnswer } from './support-instances/http';

const SUITE = 'test/e2e/postgres-failover.test.ts';
const redisUrl = serverUrl('redis', SUITE);
const available = debianClustersAvailable(SUITE);

/** This file's own Redis logical database: its keys never meet another suite's. */
const REDIS_DATABASE = 11;
/** A small load: concurrent callers, each bounded in calls. */
const WORKERS = 8;
const CALLS_PER_WORKER = 2_000;
const DATABASE = 'lookup';
const COMPANY = 'https://www.linkedin.com/company/acme-robotics';

interface Answer {
  instance: number;
  startedAt: number;
  endedAt: number;
  answer?: HttpAnswer;
  dropped?: string;
}

describe.skipIf(!redisUrl || !available)('PostgreSQL primary and standby in one DATABASE_URL', () => {
  let pair: ReplicatedPair;
  /** Which cluster is which right now: the tests switch them. */
  let roles: { primary: Cluster; standby: Cluster };
  let running: InstancePair | undefined;
  let databaseUrl: string;
  let instances: ChildInstance[] = [];
  let admin: Admin;

  beforeAll(async () => {
    pair = await createReplicatedPair();
    await pair.primary.query(`CREATE DATABASE ${DATABASE}`);
    // Written to by this file's own connections, to make them find the primary.
    await pair.primary.query('CREATE TABLE failover_probe (n int)', [], DATABASE);
    await caughtUp(pair);
    roles = { primary: pair.primary, standby: pair.standby };
    databaseUrl = `postgres://postgres@127.0.0.1:${pair.standby.port},127.0.0.1:${pair.primary.port}/${DATABASE}?target_session_attrs=read-write`;
    running = await startInstancePair(databaseUrl, redisUrl!, REDIS_DATABASE);
    ({ instances, admin } = running);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    await pair?.drop();
  }, 60_000);

  const alive = (instance: ChildInstance) => running!.alive(instance);
  const clientBackends = (cluster: Cluster) =>
    cluster.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = $1", [DATABASE]).then((r) => r[0]!.n);

  test('the service writes to the primary although the standby is listed first', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 10 });
    const lookup = await call(instances[1]!.url, '/v1/company', { headers: bearer(key), body: { url: COMPANY } });
    expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
    expect((await admin.workspace(workspaceId)).balance).toBe(10 - lookup.body.meta.credits_charged);
    // Every connection the instances keep (pools, LISTEN) is on the primary; the standby saw the probes only.
    expect(await eventually(async () => (await clientBackends(pair.standby)) === 0, 5_000), 'connections left on the standby').toBe(true);
    expect(await clientBackends(pair.primary)).toBeGreaterThan(0);
    for (const instance of instances) expect((await call(instance.url, '/v1/health/ready')).status).toBe(200);
  }, 30_000);

  test('a primary that stops taking writes (25006): writes fail as an outage, not a statement error, and come back by themselves', async () => {
    const sql = createPgSql(databaseUrl, { logger: backgroundLogger('silent') });
    try {
      await sql.query('INSERT INTO failover_probe VALUES (1)');
      await fenceWrites(roles.primary);
      const refused = await sql.query('INSERT INTO failover_probe VALUES (2)').then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(DatabaseUnavailableError);
      expect((refused as DatabaseUnavailableError).cause).toMatchObject({ code: '25006' });
      // While no host takes writes, the search says why for each host.
      const searched = await sql.query('SELECT 1').then(() => undefined, (err: unknown) => err);
      expect(String(searched)).toMatch(new RegExp(`no writable database host: 127.0.0.1:${roles.standby.port} is a standby.*127.0.0.1:${roles.primary.port} is read-only`));
      const answered = await call(instances[0]!.url, '/admin/v1/workspaces', { method: 'POST', headers: bearer(ADMIN_TOKEN), body: { name: 'read-only' } });
      expect(answered.status, JSON.stringify(answered.body)).toBe(503);
      expect(answered.body.error).toMatchObject({ code: 'service_unavailable', retryable: true });
      expect(answered.headers['retry-after']).toBe(String(answered.body.error.retry_after_seconds));
    } finally {
      await unfenceWrites(roles.primary);
    }
    try {
      expect(await eventually(async () => sql.query('INSERT INTO failover_probe VALUES (3)').then(() => true, () => false), 5_000, 50)).toBe(true);
      for (const instance of instances) expect(await eventually(async () => (await call(instance.url, '/v1/health/ready')).status === 200, 10_000, 100)).toBe(true);
      // Readiness is the instance's own state (not the database's): each one also writes again,
      // its pool having found the unfenced primary, before the next test starts its load.
      for (const instance of instances) {
        const writes = async () => (await call(instance.url, '/admin/v1/workspaces', { method: 'POST', headers: bearer(ADMIN_TOKEN), body: { name: 'writable again' } })).status === 201;
        expect(await eventually(writes, 10_000, 100)).toBe(true);
      }
      expect(instances.every(alive)).toBe(true);
    } finally {
      await sql.close();
    }
  }, 60_000);

  /**
   * Runs a small load of charged lookups on both instances while `switchover` makes the standby
   * the primary (resolving once it is promoted and the old primary is down), then checks it all.
   */
  async function switchUnderLoad(name: string, switchover: (listener: { sql: Sql; heard: string[] }) => Promise<void>) {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 1_000_000, max_concurrency: 1000, rate_limit_per_minute: 100_000 });
    const initial = (await admin.workspace(workspaceId)).balance;
    // A listener in this process on the same URL: after the switch it must hear the new primary.
    const listener = { sql: createPgSql(databaseUrl, { logger: backgroundLogger('silent') }), heard: [] as string[] };
    const stopListening = await listener.sql.listen('failover_test', (payload) => listener.heard.push(payload));

    const answers: Answer[] = [];
    let stop = false;
    const worker = async (w: number) => {
      const instance = w % instances.length;
      for (let i = 0; i < CALLS_PER_WORKER && !stop; i++) {
        // Hits and live fetches, half of them with an Idempotency-Key of their own.
        const body = i % 3 === 0 ? { url: COMPANY, max_age: 0 } : { url: COMPANY };
        const headers = w % 2 === 1 ? { ...bearer(key), 'idempotency-key': `failover-${workspaceId}-${w}-${i}` } : bearer(key);
        const startedAt = Date.now();
        try {
          const answer = await call(instances[instance]!.url, '/v1/company', { headers, body });
          answers.push({ instance, startedAt, endedAt: Date.now(), answer });
        } catch (err) {
          answers.push({ instance, startedAt, endedAt: Date.now(), dropped: String(err) });
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    const okSince = (instance: number, since: number) => answers.filter((a) => a.instance === instance && a.startedAt >= since && a.answer?.status === 200).length;

    let switchStartedAt = 0;
    let switchedAt = 0;
    let recoveredAt = 0;
    try {
      expect(await eventually(async () => okSince(0, 0) >= 20 && okSince(1, 0) >= 20, 30_000), 'the load never got going').toBe(true);
      switchStartedAt = Date.now();
      await switchover(listener);
      switchedAt = Date.now();
      expect(await eventually(async () => okSince(0, switchedAt) >= 1 && okSince(1, switchedAt) >= 1, 30_000, 20), 'no 200 after the switch').toBe(true);
      recoveredAt = Math.max(...[0, 1].map((i) => Math.min(...answers.filter((a) => a.instance === i && a.startedAt >= switchedAt && a.answer?.status === 200).map((a) => a.endedAt))));
      // Some more load on the new primary.
      await eventually(async () => okSince(0, recoveredAt) >= 20 && okSince(1, recoveredAt) >= 20, 30_000);
    } finally {
      stop = true;
      await load;
    }

    const unavailable = answers.filter((a) => a.answer?.status === 503);
    const firstUnavailable = Math.min(...unavailable.map((a) => a.endedAt));
    const lastUnavailable = Math.max(...unavailable.map((a) => a.endedAt));
    console.log(
      `failover (${name}): ${answers.length} calls; the switch took ${switchedAt - switchStartedAt} ms; ` +
        `every instance answered 200 again ${recoveredAt - switchStartedAt} ms after it began (${recoveredAt - switchedAt} ms after it ended); ` +
        (unavailable.length > 0 ? `${unavailable.length} × 503 answered over ${lastUnavailable - firstUnavailable} ms (the first ${firstUnavailable - switchStartedAt} ms after the switch began)` : 'no 503'),
    );

    expect(instances.every(alive), instances.map((i) => i.output()).join('\n')).toBe(true);
    expect(answers.filter((a) => a.dropped).map((a) => a.dropped), 'connections dropped without an answer').toEqual([]);
    const statuses = [...new Set(answers.map((a) => a.answer!.status))];
    expect(statuses.filter((s) => s !== 200 && s !== 503), JSON.stringify(countBy(answers))).toEqual([]);
    for (const a of unavailable) {
      // In the window: answered once the switch had begun (it may have been sent just before), sent before every instance served again.
      expect(a.endedAt >= switchStartedAt && a.startedAt <= recoveredAt, `a 503 outside the switch window: sent ${a.startedAt - switchStartedAt} ms, answered ${a.endedAt - switchStartedAt} ms after the switch began`).toBe(true);
      expect(a.answer!.body.error).toMatchObject({ code: 'service_unavailable', type: 'api_error', retryable: true });
      expect(a.answer!.headers['retry-after']).toBe(String(a.answer!.body.error.retry_after_seconds));
      expect(a.answer!.body.meta.credits_charged).toBe(0);
    }

    // Money, on the new primary: once the instances have written the refunds owed from the switch,
    // the balance moved by exactly what the answers said.
    const charged = answers.reduce((sum, a) => sum + a.answer!.body.meta.credits_charged, 0);
    let balance = Number.NaN;
    const reconciled = await eventually(async () => (balance = (await admin.workspace(workspaceId)).balance) === initial - charged, 30_000, 100);
    expect(reconciled, `balance ${balance}, expected ${initial} - ${charged}`).toBe(true);
    const [ledger] = await roles.primary.query<{ sum: number }>('SELECT coalesce(sum(credits), 0)::int AS sum FROM ledger_entries WHERE workspace_id = $1', [workspaceId], DATABASE);
    expect(ledger!.sum, 'balance = the sum of the ledger').toBe(balance);

    const byRequest = await chargesByRequest(roles.primary, workspaceId);
    const wrong = answers
      .filter((a) => a.answer!.status === 200)
      .map((a) => ({ request: a.answer!.body.meta.request_id as string, said: a.answer!.body.meta.credits_charged as number, ...(byRequest.get(a.answer!.body.meta.request_id) ?? { charges: 0, net: 0 }) }))
      .filter((a) => a.charges !== 1 || a.net !== a.said);
    expect(wrong, 'every 200 has exactly one charge, and its net is what the answer said').toEqual([]);
    const notRefunded = unavailable.map((a) => a.answer!.body.meta.request_id as string).filter((id) => (byRequest.get(id)?.net ?? 0) !== 0);
    expect(notRefunded, 'a 503 whose charge was not refunded').toEqual([]);

    const audit = await call(instances[1]!.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    expect(audit.body.mismatches).toEqual([]);
    expect(audit.body.ok).toBe(true);

    try {
      expect(await heardFromPrimary(listener), 'LISTEN did not follow the primary').toBe(true);
    } finally {
      await stopListening();
      await listener.sql.close();
    }
  }

  /** NOTIFY on the current primary reaches the listener (a write through its Sql first, which finds the primary). */
  async function heardFromPrimary(listener: { sql: Sql; heard: string[] }): Promise<boolean> {
    const payload = `from ${roles.primary.name}`;
    return eventually(async () => {
      await listener.sql.query('INSERT INTO failover_probe VALUES (4)').catch(() => undefined);
      await roles.primary.query('SELECT pg_notify($1, $2)', ['failover_test', payload], DATABASE);
      return listener.heard.includes(payload);
    }, 15_000, 200);
  }

  test('the primary stopped, then its standby promoted, under load', async () => {
    await switchUnderLoad('stop, then promote', async () => {
      // A fast shutdown sends the standby all its WAL before it exits: nothing committed is lost.
      await roles.primary.stop('fast');
      await roles.standby.promote();
      roles = { primary: roles.standby, standby: roles.primary };
    });
  }, 180_000);

  test('back again: the primary fenced (read-only), its standby promoted, then the old one stopped, under load; LISTEN moves while the old one is still up', async () => {
    // The old primary rejoins as a standby of the new one.
    await followAsStandby(roles.standby, roles.primary);
    await caughtUp(roles);
    await switchUnderLoad('fence, promote, stop', async (listener) => {
      // Writes to the old primary are refused from here on (25006), and none is left in flight:
      // whatever it committed is on the standby before the standby is promoted.
      await fenceWrites(roles.primary);
      await caughtUp(roles);
      await roles.standby.promote();
      const old = roles.primary;
      roles = { primary: roles.standby, standby: old };
      // Both servers are up: the listener's pool finds the new primary and LISTEN moves there.
      expect(await heardFromPrimary(listener), 'LISTEN did not move while the old primary was up').toBe(true);
      await old.stop('fast');
    });
  }, 180_000);
});

/** Per request id: its LookupCharged events and its net charge in the ledger (charges minus refunds). */
async function chargesByRequest(primary: Cluster, workspaceId: string): Promise<Map<string, { charges: number; net: number }>> {
  const rows = await primary.query<{ request_id: string; charges: number; net: number }>(
    `SELECT l.request_id, (SELECT count(*)::int FROM events e WHERE e.type = 'LookupCharged' AND e.metadata->>'request_id' = l.request_id) AS charges,
            (-sum(l.credits))::int AS net
       FROM ledger_entries l WHERE l.workspace_id = $1 AND l.request_id IS NOT NULL GROUP BY l.request_id`,
    [workspaceId],
    DATABASE,
  );
  return new Map(rows.map((r) => [r.request_id, { charges: r.charges, net: r.net }]));
}

function countBy(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    const key = a.dropped ? 'dropped' : `${a.answer!.status} ${a.answer!.body?.error?.code ?? ''}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
