// One of two instances lost under load, SIGKILLed (no shutdown code runs) or SIGTERMed (drains).
// The survivor never exits and never answers 500; callers of the lost one get either an answer or a
// refused/dropped connection, never a 500; and the money reconciles per request: what the ledger
// holds for a request id is what its answer said, and a request the killed instance charged but
// never answered is refunded by the survivor's abandoned-charge sweep.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serverUrl } from '../support/servers';
import { ADMIN_TOKEN, Admin, eventually, startChildInstance, startSharedServers, type ChildInstance, type SharedServersHandle } from './support-instances/instances';
import { bearer, call, type HttpAnswer } from './support-instances/http';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

const WORKERS = 16;
/** This file's own Redis logical database: its buckets and slots never meet another suite's. */
const REDIS_DATABASE = 10;
/** Short, so the survivor's sweep refunds what the killed instance left unsettled within the test. */
const SOURCE_TIMEOUT_MS = 3000;
const ABANDONED_CHARGE_GRACE_MS = 4000;

/** Cache hits, live fetches, live not-founds, and slow lookups (~2 s) that are in flight when the instance goes. */
const CALLS: Array<{ path: string; body: Record<string, unknown> }> = [
  { path: '/v1/company', body: { url: 'https://www.linkedin.com/company/acme-robotics' } },
  { path: '/v1/company', body: { url: 'https://www.linkedin.com/company/acme-robotics', max_age: 0 } },
  { path: '/v1/company', body: { url: 'https://www.linkedin.com/company/sandbox-slow', max_age: 0 } },
  { path: '/v1/domain', body: { domain: 'no-company-here.com', max_age: 0 } },
  { path: '/v1/person', body: { url: 'https://www.linkedin.com/in/jane-doe-42' } },
  { path: '/v1/person', body: { url: 'https://www.linkedin.com/in/sandbox-slow', max_age: 0 } },
];

interface Outcome {
  instance: 'survivor' | 'lost';
  answer?: HttpAnswer;
  /** No answer: refused (the instance was gone or closing) or dropped mid-request (killed). */
  failed?: string;
}

describe.skipIf(!databaseUrl || !redisUrl)('one of two instances lost under load', () => {
  let servers: SharedServersHandle;
  let survivor: ChildInstance;
  const lost: ChildInstance[] = [];
  let admin: Admin;

  const env = {
    SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
    ABANDONED_CHARGE_GRACE_MS: String(ABANDONED_CHARGE_GRACE_MS),
    IDEMPOTENCY_LOCK_TTL_MS: '5000',
    // Load shedding would answer 503 no_capacity on a busy test machine; another suite's subject.
    MAX_EVENT_LOOP_DELAY_MS: '60000',
  };

  beforeAll(async () => {
    const url = new URL(redisUrl!);
    url.pathname = `/${REDIS_DATABASE}`;
    servers = await startSharedServers(url.toString());
    survivor = await startChildInstance(servers, env);
    admin = new Admin(survivor.url);
  }, 60_000);

  afterAll(async () => {
    for (const instance of [survivor, ...lost]) await instance?.stop();
    await servers?.close();
  });

  const alive = (instance: ChildInstance) => instance.process.exitCode === null && instance.process.signalCode === null;

  /** Load on both instances; `lose` takes the second one away mid-load. Returns every outcome. */
  async function underLoad(key: string, lose: (instance: ChildInstance) => Promise<void>): Promise<Outcome[]> {
    const doomed = await startChildInstance(servers, env);
    lost.push(doomed);
    const outcomes: Outcome[] = [];
    let gone = false;
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; i < 400 && !stop; i++) {
        // Half the callers use the doomed instance until it is gone, then come to the survivor.
        const instance = w % 2 === 1 && !gone ? 'lost' : 'survivor';
        const { path, body } = CALLS[(w + i) % CALLS.length]!;
        try {
          const answer = await call(instance === 'lost' ? doomed.url : survivor.url, path, { headers: bearer(key), body });
          outcomes.push({ instance, answer });
        } catch (err) {
          outcomes.push({ instance, failed: String(err) });
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    const answered = (instance: Outcome['instance']) => outcomes.filter((o) => o.instance === instance && o.answer?.status === 200).length;
    const warmedUp = await eventually(async () => answered('lost') >= 20 && answered('survivor') >= 20, 30_000);
    const before = answered('survivor');
    await lose(doomed);
    gone = true;
    const servedAfter = await eventually(async () => answered('survivor') >= before + 40, 30_000, 100);
    stop = true;
    await load;
    expect(warmedUp, 'the load never got going').toBe(true);
    expect(servedAfter, 'the survivor stopped answering').toBe(true);
    expect(alive(survivor), `the survivor exited:\n${survivor.output()}`).toBe(true);
    return outcomes;
  }

  function expectNoServerErrors(outcomes: Outcome[]) {
    for (const { answer } of outcomes) {
      if (!answer) continue;
      expect([200, 404], JSON.stringify(answer.body)).toContain(answer.status);
      expect(answer.headers['x-request-id']).toBe(answer.body.meta.request_id);
    }
  }

  /** Net credits each request id cost, from the workspace's ledger (charges minus refunds). */
  async function netByRequest(workspaceId: string): Promise<Map<string, number>> {
    const net = new Map<string, number>();
    let after: number | null = 0;
    while (after !== null) {
      const page = await call(survivor.url, `/admin/v1/workspaces/${workspaceId}/ledger?after=${after}&limit=500`, { headers: bearer(ADMIN_TOKEN) });
      // Ledger credits are signed: a charge is negative, a refund positive.
      for (const entry of page.body.data as Array<{ request_id: string | null; credits: number }>) {
        if (entry.request_id) net.set(entry.request_id, (net.get(entry.request_id) ?? 0) - entry.credits);
      }
      after = page.body.next;
    }
    return net;
  }

  /** Charges of the workspace whose lookup never recorded an outcome (what the sweep is for). */
  async function unsettledCharges(workspaceId: string): Promise<number> {
    const client = new pg.Client({ connectionString: servers.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM charges WHERE workspace_id = $1 AND NOT settled', [workspaceId]);
      return rows[0]!.n;
    } finally {
      await client.end();
    }
  }

  async function expectMoneyReconciles(workspaceId: string, initial: number, outcomes: Outcome[], unanswered: 'none' | 'refunded') {
    // The sweep of the survivor settles (refunds) what the lost instance left unsettled.
    const swept = await eventually(async () => (await unsettledCharges(workspaceId)) === 0, ABANDONED_CHARGE_GRACE_MS * 4, 200);
    expect(swept, 'charges left unsettled by the lost instance were never refunded').toBe(true);
    const answers = outcomes.flatMap((o) => (o.answer ? [o.answer] : []));
    const said = new Map(answers.map((a) => [a.body.meta.request_id as string, a.body.meta.credits_charged as number]));
    const net = await netByRequest(workspaceId);
    for (const [requestId, credits] of said) expect(net.get(requestId) ?? 0, requestId).toBe(credits);
    const unknown = [...net].filter(([requestId]) => !said.has(requestId));
    if (unanswered === 'none') expect(unknown, 'ledger entries of requests nobody was answered for').toEqual([]);
    // A request the killed instance completed but could not answer keeps its charge: its caller saw
    // a dropped connection, as on any network failure (Idempotency-Key is the remedy). Everything
    // it charged and did not complete is refunded: net 0.
    for (const [, credits] of unknown) expect(credits).toBeGreaterThanOrEqual(0);
    const kept = unknown.reduce((sum, [, credits]) => sum + credits, 0);
    const charged = [...said.values()].reduce((sum, c) => sum + c, 0);
    const refundedUnanswered = unknown.filter(([, credits]) => credits === 0).length;
    console.log(
      `instance-loss: ${answers.length} answers, ${outcomes.length - answers.length} without an answer; ` +
        `${unknown.length} unanswered requests in the ledger, ${refundedUnanswered} of them refunded, ${kept} credits kept`,
    );
    expect((await admin.workspace(workspaceId)).balance).toBe(initial - charged - kept);
    const audit = await call(survivor.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    expect(audit.body).toMatchObject({ ok: true, mismatches: [] });
  }

  test('SIGKILL: the survivor answers on without a 500, and the killed one\'s unsettled charges are refunded by the sweep', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 1_000_000, max_concurrency: 1000, rate_limit_per_minute: 100_000 });
    const initial = (await admin.workspace(workspaceId)).balance;
    const outcomes = await underLoad(key, async (doomed) => {
      // While slow lookups are surely in flight on it.
      await new Promise((r) => setTimeout(r, 500));
      await doomed.kill();
    });
    expectNoServerErrors(outcomes);
    expect(outcomes.filter((o) => o.instance === 'survivor' && o.failed), 'the survivor dropped a connection').toEqual([]);
    expect(outcomes.filter((o) => o.instance === 'lost' && o.failed).length, 'nothing was in flight on the killed instance').toBeGreaterThan(0);
    await expectMoneyReconciles(workspaceId, initial, outcomes, 'refunded');
  }, 90_000);

  test('SIGTERM: every request the lost one accepted is answered and settled, it exits 0, the survivor answers on', async () => {
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 1_000_000, max_concurrency: 1000, rate_limit_per_minute: 100_000 });
    const initial = (await admin.workspace(workspaceId)).balance;
    let exitCode: number | null = null;
    const outcomes = await underLoad(key, async (doomed) => {
      await new Promise((r) => setTimeout(r, 500));
      await doomed.stop();
      exitCode = doomed.process.exitCode;
    });
    expect(exitCode).toBe(0);
    expectNoServerErrors(outcomes);
    // Refused connections only: a request the closing instance had accepted is never dropped.
    for (const o of outcomes.filter((x) => x.failed)) expect(o.failed).toMatch(/ECONNREFUSED|ECONNRESET|socket hang up/);
    expect(outcomes.filter((o) => o.instance === 'survivor' && o.failed), 'the survivor dropped a connection').toEqual([]);
    await expectMoneyReconciles(workspaceId, initial, outcomes, 'none');
  }, 90_000);
});
