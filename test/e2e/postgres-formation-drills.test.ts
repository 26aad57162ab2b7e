// Failover drills on a pg_auto_failover formation in containers (test/support/pg-formation.ts):
// a monitor, a primary and its synchronous secondary. Two instances (child processes) reach it
// through `postgres://…@127.0.0.1:<node1>,127.0.0.1:<node2>/db?target_session_attrs=read-write`
// and take charged lookups (cache hits and live fetches, half with an Idempotency-Key, retried
// once with the same key after a 503) while the primary: hands over in a planned switchover;
// has its container killed; is frozen (docker pause) for 10 s; is cut off by a firewall that drops
// its packets. Each drill: no process exits, no 500, no connection dropped, 503
// service_unavailable only between the fault and the moment every instance has answered a 200
// committed on the new primary (the window, printed), every 200 has exactly one charge and every 503 its refund (per request id,
// in the new primary's ledger), no Idempotency-Key charged twice, balance = ledger, the audit
// clean. Then the formation heals (the old primary rejoins as secondary) for the next drill.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formationAvailable, startFormation, type Formation, type FormationNode } from '../support/pg-formation';
import { serverUrl } from '../support/servers';
import { ADMIN_TOKEN, type Admin, eventually, type ChildInstance, type InstancePair, startInstancePair } from './support-instances/instances';
import { bearer, call, type HttpAnswer } from './support-instances/http';

const SUITE = 'test/e2e/postgres-formation-drills.test.ts';
const redisUrl = serverUrl('redis', SUITE);
const available = formationAvailable(SUITE);

/** This file's own Redis logical database: its keys never meet another suite's. */
const REDIS_DATABASE = 12;
/** A small load: concurrent callers, each bounded in calls. */
const WORKERS = 8;
const CALLS_PER_WORKER = 3_000;
/** The longest a drill's load runs, whatever happens. */
const LOAD_LIMIT_MS = 60_000;
const FREEZE_MS = 10_000;
const COMPANY = 'https://www.linkedin.com/company/acme-robotics';

interface Answer {
  instance: number;
  startedAt: number;
  endedAt: number;
  key?: string;
  answer?: HttpAnswer;
  dropped?: string;
}

interface Drill {
  /** Breaks the primary (or starts handing it over); resolves at once or once the switch is done. */
  fault(primary: FormationNode): Promise<void>;
  /** Undoes the fault once the service serves from the new primary (restart, unpause, firewall off). */
  heal?(oldPrimary: FormationNode, faultAt: number): Promise<void>;
}

describe.skipIf(!redisUrl || !available)('pg_auto_failover drills under load', () => {
  let formation: Formation;
  let running: InstancePair | undefined;
  let instances: ChildInstance[] = [];
  let admin: Admin;
  const figures: string[] = [];

  beforeAll(async () => {
    const startedAt = Date.now();
    formation = await startFormation();
    const [sync] = await formation.query<{ names: string }>(await formation.primary(), 'SELECT current_setting($1) AS names', ['synchronous_standby_names']);
    console.log(`formation up in ${Date.now() - startedAt} ms: ${formation.databaseUrl}, synchronous_standby_names = '${sync!.names}'`);
    running = await startInstancePair(formation.databaseUrl, redisUrl!, REDIS_DATABASE);
    ({ instances, admin } = running);
  }, 240_000);

  afterAll(async () => {
    await running?.stop();
    await formation?.remove();
    if (figures.length > 0) console.log(`pg_auto_failover drills:\n${figures.join('\n')}`);
  }, 60_000);

  test('synchronous replication: a committed write is on both nodes', async () => {
    const primary = await formation.primary();
    const [sync] = await formation.query<{ names: string }>(primary, 'SELECT current_setting($1) AS names', ['synchronous_standby_names']);
    expect(sync!.names).toMatch(/^ANY 1 \(pgautofailover_standby_\d+\)$/);
    const [standby] = await formation.query<{ sync_state: string }>(primary, 'SELECT sync_state FROM pg_stat_replication');
    expect(standby!.sync_state).toBe('quorum');
  });

  const alive = (instance: ChildInstance) => running!.alive(instance);

  async function underLoad(name: string, drill: Drill) {
    const oldPrimary = await formation.primary();
    const newPrimary = formation.nodes.find((n) => n !== oldPrimary)!;
    const { key, workspaceId } = await admin.keyedWorkspace({ credits: 1_000_000, max_concurrency: 1000, rate_limit_per_minute: 100_000 });
    const initial = (await admin.workspace(workspaceId)).balance;

    const answers: Answer[] = [];
    let stop = false;
    const loadStartedAt = Date.now();
    const worker = async (w: number) => {
      const instance = w % instances.length;
      /** A keyed call answered 503, sent again once as it was (same key, same body). */
      let retry: { key: string; body: Record<string, unknown> } | undefined;
      for (let i = 0; i < CALLS_PER_WORKER && !stop && Date.now() - loadStartedAt < LOAD_LIMIT_MS; i++) {
        // Hits and live fetches; odd workers send an Idempotency-Key, and send it again once after a 503.
        const body = retry?.body ?? (i % 3 === 0 ? { url: COMPANY, max_age: 0 } : { url: COMPANY });
        const idempotencyKey = w % 2 === 1 ? (retry?.key ?? `drill-${workspaceId}-${w}-${i}`) : undefined;
        const headers = idempotencyKey ? { ...bearer(key), 'idempotency-key': idempotencyKey } : bearer(key);
        const startedAt = Date.now();
        try {
          const answer = await call(instances[instance]!.url, '/v1/company', { headers, body });
          answers.push({ instance, startedAt, endedAt: Date.now(), key: idempotencyKey, answer });
          retry = answer.status === 503 && retry === undefined && idempotencyKey ? { key: idempotencyKey, body } : undefined;
        } catch (err) {
          answers.push({ instance, startedAt, endedAt: Date.now(), key: idempotencyKey, dropped: String(err) });
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    const okSince = (instance: number, since: number) => answers.filter((a) => a.instance === instance && a.endedAt > since && a.answer?.status === 200).length;

    // When the new primary first took writes, seen from here (polled every 20 ms).
    let promotedAt = 0;
    const watcher = watchPromotion(newPrimary.port, (at) => (promotedAt = at));
    let faultAt = 0;
    let faultDoneAt = 0;
    // Healed once, whatever happens: a drill that fails must not leave its node paused or cut off.
    let healing: Promise<void> | undefined;
    const heal = () => (healing ??= drill.heal?.(oldPrimary, faultAt) ?? Promise.resolve());
    const recoveredAt: number[] = [];
    try {
      expect(await eventually(async () => okSince(0, 0) >= 20 && okSince(1, 0) >= 20, 30_000), 'the load never got going').toBe(true);
      faultAt = Date.now();
      await drill.fault(oldPrimary);
      faultDoneAt = Date.now();
      const served = await eventually(async () => promotedAt > 0 && okSince(0, promotedAt) >= 1 && okSince(1, promotedAt) >= 1, 45_000, 20);
      expect(served, `no 200 from the new primary on both instances:\n${await formation.events()}`).toBe(true);
      // The first 200 answered after the promotion: no commit on the old primary can be answered
      // then (killed, frozen, cut off or demoted, and a commit there waits for the new primary).
      for (const i of [0, 1]) recoveredAt.push(Math.min(...answers.filter((a) => a.instance === i && a.endedAt > promotedAt && a.answer?.status === 200).map((a) => a.endedAt)));
      await heal();
      // Some more load on the new primary.
      await eventually(async () => okSince(0, Math.max(...recoveredAt)) >= 20 && okSince(1, Math.max(...recoveredAt)) >= 20, 30_000);
    } finally {
      stop = true;
      watcher.stop();
      if (faultAt > 0) await heal();
      await load;
    }
    const loadMs = Date.now() - loadStartedAt;

    const unavailable = answers.filter((a) => a.answer?.status === 503);
    const slowest = Math.max(...answers.map((a) => a.endedAt - a.startedAt));
    // The window ends once every instance has served from the new primary: until then a batch of
    // one instance may still meet the switch just after its first 200 there.
    const windowEnd = Math.max(...recoveredAt);
    const figure =
      `${name}: ${answers.length} calls in ${loadMs} ms; new primary writable ${promotedAt - faultAt} ms after the fault` +
      (faultDoneAt - faultAt > 50 ? ` (the fault itself took ${faultDoneAt - faultAt} ms)` : '') +
      `; window (fault → first 200 committed on the new primary) ${windowEnd - faultAt} ms (instance 1 / 2: ${recoveredAt.map((r) => r - faultAt).join(' / ')} ms); ` +
      `${unavailable.length} × 503; slowest answer ${slowest} ms; ${JSON.stringify(countBy(answers))}`;
    figures.push(figure);
    console.log(`drill ${figure}`);

    expect(instances.every(alive), instances.map((i) => i.output()).join('\n')).toBe(true);
    expect(answers.filter((a) => a.dropped).map((a) => a.dropped), 'connections dropped without an answer').toEqual([]);
    // A 503's Idempotency-Key is released as it is answered; when that write cannot reach a database
    // either, the release is retried in the background, and the one immediate retry of that key may
    // come first and get 409 idempotency_key_in_use (retryable, never charged: docs/api.md "Idempotency").
    const answered503 = new Set(answers.filter((a) => a.key && a.answer?.status === 503).map((a) => a.key));
    const keyStillClaimed = (a: Answer) =>
      a.answer!.status === 409 && a.answer!.body?.error?.code === 'idempotency_key_in_use' && answered503.has(a.key) && a.answer!.body?.meta?.credits_charged === 0;
    const unexpected = answers.filter((a) => a.answer!.status !== 200 && a.answer!.status !== 503 && !keyStillClaimed(a));
    expect(unexpected.map((a) => [a.answer!.status, a.answer!.body]), JSON.stringify(countBy(answers))).toEqual([]);
    // Answered once the fault was there (it may have been sent just before), sent before the window ended.
    const outside = unavailable.filter((a) => a.endedAt < faultAt || a.startedAt > windowEnd);
    if (outside.length > 0) {
      // What the formation and the instance were doing then: the cause, should this ever happen.
      const told = outside.map((a) => `sent ${a.startedAt - faultAt} ms, answered ${a.endedAt - faultAt} ms after the fault (${new Date(a.endedAt).toISOString()}), instance ${a.instance + 1}: ${JSON.stringify(a.answer!.body)}`);
      const logs = outside.map((a) => `instance ${a.instance + 1}'s lines within 1 s of it:\n${linesAround(instances[a.instance]!.output(), a.endedAt, 1_000).join('\n')}`);
      expect.fail(`503 outside the window (fault at ${new Date(faultAt).toISOString()}):\n${told.join('\n')}\n${await formation.events()}\n${logs.join('\n')}`);
    }
    for (const a of unavailable) {
      expect(a.answer!.body.error).toMatchObject({ code: 'service_unavailable', type: 'api_error', retryable: true });
      expect(a.answer!.headers['retry-after']).toBe(String(a.answer!.body.error.retry_after_seconds));
      expect(a.answer!.body.meta.credits_charged).toBe(0);
    }

    // Money, on the new primary, once the instances have written the refunds owed from the switch.
    const charged = answers.reduce((sum, a) => sum + a.answer!.body.meta.credits_charged, 0);
    let balance = Number.NaN;
    const reconciled = await eventually(async () => (balance = (await admin.workspace(workspaceId)).balance) === initial - charged, 30_000, 100);
    expect(reconciled, `balance ${balance}, expected ${initial} - ${charged}`).toBe(true);
    const [ledger] = await formation.query<{ sum: number }>(newPrimary, 'SELECT coalesce(sum(credits), 0)::int AS sum FROM ledger_entries WHERE workspace_id = $1', [workspaceId]);
    expect(ledger!.sum, 'balance = the sum of the ledger').toBe(balance);

    const byRequest = await chargesByRequest(formation, newPrimary, workspaceId);
    const fresh = answers.filter((a) => a.answer!.status === 200 && a.answer!.headers['idempotent-replayed'] !== 'true');
    const wrong = fresh
      .map((a) => ({ request: a.answer!.body.meta.request_id as string, said: a.answer!.body.meta.credits_charged as number, ...(byRequest.get(a.answer!.body.meta.request_id) ?? { charges: 0, net: 0 }) }))
      .filter((a) => a.charges !== 1 || a.net !== a.said);
    expect(wrong, 'every 200 has exactly one charge, and its net is what the answer said').toEqual([]);
    const notRefunded = unavailable.map((a) => a.answer!.body.meta.request_id as string).filter((id) => (byRequest.get(id)?.net ?? 0) !== 0);
    expect(notRefunded, 'a 503 whose charge was not refunded').toEqual([]);
    // Per Idempotency-Key, over every request sent with it: charged at most once.
    const requestsByKey = new Map<string, Set<string>>();
    for (const a of answers) if (a.key) requestsByKey.set(a.key, (requestsByKey.get(a.key) ?? new Set()).add(a.answer!.body.meta.request_id));
    const chargedTwice = [...requestsByKey].filter(([, ids]) => [...ids].filter((id) => (byRequest.get(id)?.charges ?? 0) > 0 && (byRequest.get(id)?.net ?? 0) > 0).length > 1);
    expect(chargedTwice.map(([k]) => k), 'an Idempotency-Key charged twice').toEqual([]);

    // The audit's own connection may still be on a host in doubt right after the fault: it answers 503
    // with Retry-After until it has found the primary by itself, so it is asked again for a bounded time.
    let audit = await call(instances[1]!.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    for (const until = Date.now() + 30_000; audit.status === 503 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 1_000));
      audit = await call(instances[1]!.url, '/admin/v1/audit', { method: 'POST', headers: bearer(ADMIN_TOKEN) });
    }
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    expect(audit.body.mismatches).toEqual([]);
    expect(audit.body.ok).toBe(true);

    // The formation back to a primary and a secondary for the next drill.
    const healStartedAt = Date.now();
    const primaryNow = await formation.waitHealthy(90_000);
    expect(primaryNow.name).toBe(newPrimary.name);
    console.log(`drill ${name}: the old primary rejoined as secondary ${Date.now() - healStartedAt} ms after the checks`);
  }

  test('a planned switchover (pg_autoctl perform switchover)', async () => {
    await underLoad('switchover', { fault: () => formation.switchover() });
  }, 180_000);

  test("the primary's container killed, then started again", async () => {
    await underLoad('kill', {
      fault: (primary) => formation.kill(primary),
      heal: (old) => formation.start(old),
    });
  }, 180_000);

  test('the primary frozen (docker pause) for 10 s', async () => {
    await underLoad('freeze 10 s', {
      fault: (primary) => formation.pause(primary),
      heal: async (old, faultAt) => {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, faultAt + FREEZE_MS - Date.now())));
        await formation.unpause(old);
      },
    });
  }, 180_000);

  test('the primary cut off by a packet-dropping firewall (iptables DROP in its network namespace)', async () => {
    await underLoad('firewall DROP', {
      fault: (primary) => formation.cutOff(primary),
      heal: (old) => formation.reconnect(old),
    });
  }, 180_000);
});

/** The JSON log lines within `marginMs` of `at` (`time` in ms from pino, ISO text from the background logger). */
function linesAround(output: string, at: number, marginMs: number): string[] {
  return output.split('\n').filter((line) => {
    try {
      const time = (JSON.parse(line) as { time?: unknown }).time;
      const ms = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : Number.NaN;
      return Math.abs(ms - at) <= marginMs;
    } catch {
      return false;
    }
  });
}

/** Polls `port` every 20 ms until it takes writes (not in recovery); calls `promoted` with the time. */
function watchPromotion(port: number, promoted: (at: number) => void): { stop(): void } {
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/db`, connectionTimeoutMillis: 1_000, query_timeout: 1_000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        while (!stopped) {
          const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
          if (!rows[0]!.recovery) {
            promoted(Date.now());
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        void client.end().catch(() => undefined);
      }
    }
  })();
  return {
    stop() {
      stopped = true;
    },
  };
}

/** Per request id: its LookupCharged events and its net charge in the ledger (charges minus refunds). */
async function chargesByRequest(formation: Formation, primary: FormationNode, workspaceId: string): Promise<Map<string, { charges: number; net: number }>> {
  const rows = await formation.query<{ request_id: string; charges: number; net: number }>(
    primary,
    `SELECT l.request_id, (SELECT count(*)::int FROM events e WHERE e.type = 'LookupCharged' AND e.metadata->>'request_id' = l.request_id) AS charges,
            (-sum(l.credits))::int AS net
       FROM ledger_entries l WHERE l.workspace_id = $1 AND l.request_id IS NOT NULL GROUP BY l.request_id`,
    [workspaceId],
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
