// Redis that moves (REDIS_URL=redis+sentinel://…): two instances under load while the primary is
// killed, or frozen for 10 s (docker kill / pause / unpause of its container, or SIGKILL / SIGSTOP /
// SIGCONT of its process where no Docker engine runs). Admission answers 503 service_unavailable
// (Retry-After: 2) only during the switch, resumes by itself on the promoted replica, and a key
// gets no more than its limit from the new primary on. Prints the switch window: ms from the
// primary's death (or freeze) to each instance's first admitted request on the new primary.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { redisTopologiesAvailable, startSentinelSetup, type SentinelSetup } from '../support/redis-topologies';
import { serverUrl } from '../support/servers';
import { bearer, call } from './support-instances/http';
import { Admin, startInstance, startSharedServers, type SharedServersHandle } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const topologies = redisTopologiesAvailable('Redis failover under load');

/** Sentinels take the primary for down after this long without an answer. */
const DOWN_AFTER_MS = 1_000;
const FREEZE_MS = 10_000;
/** The limited key's rate: drained before the switch, so what it gets after shows. */
const LIMITED_PER_MINUTE = 20;
/** Bounds of the load: each worker stops at whichever comes first. */
const MAX_REQUESTS_PER_WORKER = 4_000;
const PAUSE_BETWEEN_REQUESTS_MS = 15;

interface Answer {
  instance: string;
  key: 'fast' | 'limited';
  sentAt: number;
  doneAt: number;
  status: number;
  retryAfter?: string;
  code?: string;
}

/** Workers sending requests until `stop()`; every answer kept. Bounded in count and time. */
function startLoad(targets: Array<{ name: string; url: string }>, keys: { fast: string; limited: string }, maxMs: number) {
  const answers: Answer[] = [];
  /** Requests sent and not answered yet: when each was sent, by instance and key. */
  const pending = new Map<number, { instance: string; key: string; sentAt: number }>();
  let nextId = 0;
  let stopped = false;
  const deadline = Date.now() + maxMs;
  const worker = async (instance: { name: string; url: string }, key: 'fast' | 'limited') => {
    for (let i = 0; i < MAX_REQUESTS_PER_WORKER && !stopped && Date.now() < deadline; i++) {
      const sentAt = Date.now();
      const id = nextId++;
      pending.set(id, { instance: instance.name, key, sentAt });
      // The fast key reads the cache's counts (its token only); the limited one also takes a slot and a charge.
      const answer =
        key === 'fast'
          ? await call(instance.url, '/v1/cache/stats', { headers: bearer(keys.fast) })
          : await call(instance.url, '/v1/company', { headers: bearer(keys.limited), body: { url: 'acme-robotics' } });
      pending.delete(id);
      answers.push({
        instance: instance.name,
        key,
        sentAt,
        doneAt: Date.now(),
        status: answer.status,
        retryAfter: answer.headers['retry-after'] as string | undefined,
        code: answer.body?.error?.code,
      });
      await sleep(PAUSE_BETWEEN_REQUESTS_MS);
    }
  };
  const running = targets.flatMap((t) => [worker(t, 'fast'), worker(t, 'fast'), worker(t, 'limited')]);
  return {
    answers,
    pending,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** Polls until `check` holds, at most `withinMs`. */
async function waitUntil(what: string, withinMs: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting until ${what}`);
    await sleep(20);
  }
}

interface Disruption {
  label: string;
  /** Done at t0; resolves to what follows once both instances are back (e.g. the thaw). */
  disrupt(s: SentinelSetup): Promise<() => Promise<void>>;
  /** The switch must come before this many ms after t0 (the frozen primary's wake-up), if set. */
  switchBeforeMs?: number;
}

const DISRUPTIONS: Disruption[] = [
  {
    label: 'kill',
    async disrupt(s) {
      await s.primary.kill();
      return async () => {};
    },
  },
  {
    label: `freeze ${FREEZE_MS / 1000} s`,
    async disrupt(s) {
      const frozenAt = Date.now();
      s.primary.freeze();
      return async () => {
        await sleep(Math.max(0, frozenAt + FREEZE_MS - Date.now()));
        s.primary.thaw();
        // Woken, it still believes it is the primary until the sentinels turn it into a replica.
        await waitUntil('the old primary is a replica of the new one', 20_000, () => /role:slave/.test(s.primary.cli('info', 'replication')));
      };
    },
    // Its connections stay open while it is frozen: the clients must leave it on the sentinels' word.
    switchBeforeMs: FREEZE_MS,
  },
];

describe.skipIf(!databaseUrl || !topologies).each(DISRUPTIONS)(`Redis failover under load (sentinels as ${topologies}): primary $label`, (disruption) => {
  let setup: SentinelSetup | undefined;
  let servers: SharedServersHandle | undefined;
  let instances: Array<{ name: string; server: RunningServer }> = [];

  beforeAll(async () => {
    setup = await startSentinelSetup({ downAfterMs: DOWN_AFTER_MS });
    servers = await startSharedServers(setup.url);
    instances = [
      { name: 'a', server: await startInstance(servers) },
      { name: 'b', server: await startInstance(servers) },
    ];
  });

  afterAll(async () => {
    for (const i of instances) await i.server.close();
    await servers?.close();
    await setup?.destroy();
  });

  it('answers 503 during the switch only, then admits on the promoted replica, never past a key\'s limit', async () => {
    const s = setup!;
    const label = disruption.label;
    const admin = new Admin(instances[0]!.server.url);
    const fast = await admin.keyedWorkspace({ credits: 100_000, rate_limit_per_minute: 100_000 });
    const limited = await admin.keyedWorkspace({ credits: 100_000, rate_limit_per_minute: LIMITED_PER_MINUTE });
    const targets = instances.map((i) => ({ name: i.name, url: i.server.url }));
    const load = startLoad(targets, { fast: fast.key, limited: limited.key }, 100_000);
    const { answers } = load;
    // When the sentinels announce the new primary: the switch window splits into theirs and the clients'.
    const announcements = new Redis({ host: '127.0.0.1', port: s.sentinels[0]!.port, lazyConnect: true });
    let announcedAt: number | undefined;
    announcements.on('message', (channel: string) => {
      if (channel === '+switch-master') announcedAt ??= Date.now();
    });
    await announcements.connect();
    await announcements.subscribe('+switch-master');
    try {
      // Before: everything admitted, and the limited key drained to its refill rate.
      await waitUntil('the limited key is refused (drained)', 30_000, () => answers.some((a) => a.key === 'limited' && a.status === 429));
      await sleep(1_000);
      expect(s.primaryPort()).toBe(s.primary.port);

      const t0 = Date.now();
      const aftermath = await disruption.disrupt(s);
      const recoveredAt: Record<string, number> = {};
      await waitUntil('both instances are admitted again', 30_000, () =>
        targets.every((t) => {
          const first = answers.find((a) => a.instance === t.name && a.key === 'fast' && a.sentAt >= t0 && a.status === 200);
          if (first) recoveredAt[t.name] = first.doneAt;
          return first !== undefined;
        }),
      ).catch((err: unknown) => {
        const sentinelLogs = s.sentinels.map((x) => `sentinel ${x.port}:\n${x.logTail()}`).join('\n');
        const now = Date.now();
        const afterT0 = answers.filter((a) => a.sentAt >= t0);
        const byStatus = targets.map((t) => {
          const counts = new Map<number, number>();
          for (const a of afterT0) if (a.instance === t.name) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
          return `${t.name} ${JSON.stringify(Object.fromEntries(counts))}`;
        });
        const waiting = [...load.pending.values()].map((p) => `${p.instance}/${p.key} for ${now - p.sentAt} ms`);
        throw new Error(
          `${(err as Error).message}; answers since t0 by status ${byStatus.join(', ')}; unanswered: ${waiting.join(', ') || 'none'}; admitted again: ${JSON.stringify(recoveredAt)}; sentinels announced: ${announcedAt === undefined ? 'no' : `${announcedAt - t0} ms`}, name ${s.primaryPort()} (primary was ${s.primary.port}, replica ${s.replica.port})\n` +
            `replica: ${s.replica.cli('info', 'replication').split('\n').slice(0, 3).join(' ')}\n${sentinelLogs}`,
        );
      });
      const windows = targets.map((t) => recoveredAt[t.name]! - t0);
      await waitUntil('the sentinels announce the new primary', 10_000, () => announcedAt !== undefined);
      await aftermath();
      await sleep(3_000);
      await load.stop();

      expect(s.primaryPort()).toBe(s.replica.port);
      const unavailable = answers.filter((a) => a.status === 503);
      console.log(
        `redis failover (${topologies}, primary ${label}, down-after ${DOWN_AFTER_MS} ms): switch window ${targets.map((t, i) => `${windows[i]} ms on instance ${t.name}`).join(', ')}; ` +
          `the sentinels announced the new primary after ${announcedAt! - t0} ms; ${unavailable.length} of ${answers.length} answers were 503`,
      );
      if (disruption.switchBeforeMs !== undefined) expect(Math.max(...windows)).toBeLessThan(disruption.switchBeforeMs);

      // 503 only during the switch, always as the spec's service_unavailable with Retry-After: 2.
      expect(answers.filter((a) => a.doneAt < t0 && a.status === 503)).toEqual([]);
      for (const t of targets) {
        // The switch ends on an instance once it has been admitted again and its client has acted on the
        // sentinels' announcement (it may reconnect once more then): 503s within a second of it still count.
        const switchEnd = Math.max(recoveredAt[t.name]!, announcedAt! + 1_000);
        const after = answers.filter((a) => a.instance === t.name && a.sentAt > switchEnd && a.status === 503);
        expect(after, `instance ${t.name} after its switch`).toEqual([]);
      }
      expect(unavailable.every((a) => a.retryAfter === '2' && a.code === 'service_unavailable')).toBe(true);
      expect(answers.every((a) => [200, 429, 503].includes(a.status))).toBe(true);

      // From the new primary on, the limited key (drained before) gets at most its limit within the
      // minute, over both instances: a bucket lost in the switch, or two primaries taking writes
      // at once, would each show as more.
      const fromNewPrimary = Math.min(...Object.values(recoveredAt));
      const admittedAfter = answers.filter((a) => a.key === 'limited' && a.sentAt >= fromNewPrimary && a.status === 200).length;
      const span = Math.max(...answers.map((a) => a.doneAt)) - fromNewPrimary;
      console.log(`redis failover (${topologies}, primary ${label}): the limited key (${LIMITED_PER_MINUTE}/min, drained before) was admitted ${admittedAfter} times in the ${span} ms from the new primary on`);
      expect(span).toBeLessThan(60_000);
      expect(admittedAfter).toBeLessThanOrEqual(LIMITED_PER_MINUTE);
    } finally {
      await load.stop();
      announcements.disconnect();
    }
  }, 120_000);
});
