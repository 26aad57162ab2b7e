// A ledger workload through the real Ledger, and the checks that hold the topics to the log.
import { expect } from 'vitest';
import { newEvent, streams } from '../../../contracts/events';
import { newRequestId } from '../../../services/common/ids';
import type { EventStore } from '../../../services/eventstore/event-store';
import type { RecordedEvent } from '../../../services/eventstore/types';
import type { Ledger } from '../../../services/ledger/ledger';
import { foldLedger, parsePublishedEvent } from '../../../services/relay/ledger-balances';
import { routeOf, type TopicNames } from '../../../services/relay/routing';
import { accountsOf } from '../../support/accounts';
import { readWholeTopic, type ReadMessage } from '../../support/kafka-support';

export interface Workspace {
  id: string;
  keyId: string;
}

export async function createWorkspaces(store: EventStore, count: number): Promise<Workspace[]> {
  const { workspaces, keys } = accountsOf(store);
  const created: Workspace[] = [];
  for (let i = 0; i < count; i++) {
    const ws = await workspaces.create({ name: `relay test ${i}`, credits: 50 + i });
    const key = await keys.create(ws.id, { name: `key ${i}` });
    created.push({ id: ws.id, keyId: key.id });
  }
  return created;
}

/**
 * Grants, concurrent charges (many share one batched transaction), refunds of some of them, and
 * refused charges that append nothing.
 */
export async function ledgerRound(ledger: Ledger, workspaces: Workspace[], round: number): Promise<void> {
  await Promise.all(
    workspaces.map(async (ws, i) => {
      if ((round + i) % 3 === 0) await ledger.grantCredits(ws.id, 5 + i, `round ${round}`);
      const charges = Array.from({ length: 4 }, (_, n) => ({ requestId: newRequestId(), credits: 1 + ((n + i + round) % 4) }));
      const results = await Promise.all(
        charges.map((c) => ledger.charge({ workspaceId: ws.id, requestId: c.requestId, keyId: ws.keyId, operation: 'domain', credits: c.credits })),
      );
      const refundable = charges.filter((_, n) => results[n]!.kind === 'charged' && n % 2 === 0);
      for (const c of refundable) {
        await ledger.settle({
          workspaceId: ws.id,
          requestId: c.requestId,
          keyId: ws.keyId,
          operation: 'domain',
          refund: { owed: c.credits, cause: 'timeout' },
          completed: { outcome: 'error', cache_status: null, credits_charged: 0, error_code: 'timeout' },
        });
      }
    }),
  );
}

/**
 * The whole log in the global order the relay follows. Read directly rather than with readAll,
 * which holds back events while any transaction of the (shared) server is older than them.
 */
export async function readWholeLog(store: EventStore): Promise<Pick<RecordedEvent, 'stream' | 'version' | 'type' | 'data'>[]> {
  const { rows } = await store.sql.query<{ stream: string; version: number; type: string; data: unknown }>(
    'SELECT stream, version, type, data FROM events ORDER BY transaction_id, position',
  );
  return rows.map((r) => ({ ...r, version: Number(r.version) }));
}

export async function appendProfileAndUnknownEvents(store: EventStore): Promise<void> {
  await store.append(streams.company('1337'), [
    newEvent('ProfileFetched', {
      entity: 'company:1337',
      kind: 'company',
      data: { id: '1337', name: 'Acme Robotics' },
      content_hash: `sha256:${'c'.repeat(64)}`,
      fetched_at: new Date().toISOString(),
      aliases: ['acme-robotics'],
    }, newRequestId()),
  ]);
  // A type this contract does not know (a newer writer): it must reach the fallback topic.
  await store.append('company-1337-aliases', [{ type: 'AliasesObserved', data: { aliases: ['acme-robotics-inc'] } }]);
}

/** First occurrence of every event id, per key, in the order a consumer reads them. */
function firstSeenPerKey(messages: ReadMessage[]): Map<string, string[]> {
  const seen = new Set<string>();
  const perKey = new Map<string, string[]>();
  for (const m of messages) {
    const id = m.headers['event-id']!;
    if (seen.has(id)) continue;
    seen.add(id);
    perKey.set(m.key, [...(perKey.get(m.key) ?? []), id]);
  }
  return perKey;
}

export interface TopicCheck {
  ledgerMessages: number;
  duplicates: number;
  balances: Map<string, number>;
}

/** Each key's value last on the compacted balances topic: what a consumer starting from the beginning ends with. */
export async function latestBalances(brokers: string[], topic: string): Promise<Map<string, number>> {
  const latest = new Map<string, number>();
  for (const m of await readWholeTopic(brokers, topic)) {
    // Messages come sorted by partition then offset, and one key lives on one partition.
    const value = JSON.parse(m.value) as { workspace_id: string; balance: number };
    expect(value.workspace_id).toBe(m.key);
    expect(m.headers).toMatchObject({ ce_specversion: '1.0', ce_type: 'com.lookup-api.WorkspaceBalance.v1', ce_subject: m.key });
    latest.set(m.key, value.balance);
  }
  return latest;
}

/**
 * Everything in the log is on its topic, each key's events in log order, and the ledger topic
 * alone gives every workspace's balance as the projection has it.
 */
export async function expectTopicsToMirrorLog(store: EventStore, brokers: string[], topics: TopicNames): Promise<TopicCheck> {
  const log = await readWholeLog(store);
  const byTopic = new Map<string, typeof log>();
  for (const event of log) {
    const { topic } = routeOf(event, topics);
    byTopic.set(topic, [...(byTopic.get(topic) ?? []), event]);
  }
  let ledgerCheck: TopicCheck | undefined;
  const { balances: balancesTopic, ...eventTopics } = topics;
  for (const topic of Object.values(eventTopics)) {
    const expected = byTopic.get(topic) ?? [];
    const messages = await readWholeTopic(brokers, topic);
    const expectedPerKey = new Map<string, string[]>();
    for (const event of expected) {
      const key = routeOf(event, topics).key;
      expectedPerKey.set(key, [...(expectedPerKey.get(key) ?? []), `${event.stream}:${event.version}`]);
    }
    // Same events (none lost, none invented), and per key in log order.
    expect(firstSeenPerKey(messages), `topic ${topic}`).toEqual(expectedPerKey);

    if (topic === topics.ledger) {
      const events = messages.map((m) => parsePublishedEvent(m.value));
      for (const [i, m] of messages.entries()) {
        expect(m.headers['event-id']).toBe(events[i]!.event_id);
        // CloudEvents binary mode beside the headers of before.
        expect(m.headers).toMatchObject({
          ce_specversion: '1.0',
          ce_id: events[i]!.event_id,
          ce_type: `com.lookup-api.${events[i]!.type}.v1`,
          ce_source: '/lookup-api/workspace',
          ce_subject: events[i]!.stream,
          ce_time: events[i]!.recorded_at,
          'content-type': 'application/json',
        });
      }
      const state = foldLedger(events);
      const { rows } = await store.sql.query<{ id: string; balance: number }>('SELECT id, balance FROM workspaces');
      expect(rows.length).toBeGreaterThan(0);
      const projection = Object.fromEntries(rows.map((r) => [r.id, Number(r.balance)]));
      expect(Object.fromEntries(state.balances)).toEqual(projection);
      // The compacted topic alone, read from the start, ends with the same balances.
      expect(Object.fromEntries(await latestBalances(brokers, balancesTopic))).toEqual(projection);
      ledgerCheck = { ledgerMessages: messages.length, duplicates: state.duplicates, balances: state.balances };
    }
  }
  return ledgerCheck!;
}

export async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
