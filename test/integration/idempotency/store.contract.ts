import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, expect, it } from 'vitest';
import type { Sql } from '../../../services/eventstore/sql';
import { fingerprint, type StoredResponse } from '../../../services/idempotency/idempotency';
import { createSqlIdempotencyStore } from '../../../services/idempotency/sql-idempotency-store';
import { recordingSql } from '../../support/recording-sql';

const HOUR = 60 * 60 * 1000;
const company = (url: string, extra: Record<string, unknown> = {}) => fingerprint('/v1/company', { url, ...extra });

function response(n: number): StoredResponse {
  return {
    status: 200,
    // Keys deliberately out of alphabetical order: a replay must return them as stored.
    body: { meta: { request_id: `req_${n}`, credits_charged: 1 }, data: { name: `Acme ${n}`, id: String(n) } },
    headers: { 'x-request-id': `req_${n}`, 'x-credits-charged': '1', 'x-cache': 'MISS', age: '0' },
  };
}

/** One behavioural suite for the SQL idempotency store, on whichever database `sql()` gives. */
export function idempotencyStoreContract(sql: () => Sql): void {
  let ws: string;
  beforeEach(() => {
    ws = `ws_${randomUUID()}`; // each test in a workspace of its own
  });

  it('the first request starts; after complete the same key and body replay the stored response', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('acme');
    const first = await store.begin(ws, 'k1', fp);
    expect(first.kind).toBe('started');
    if (first.kind !== 'started') return;
    await store.complete(ws, 'k1', first.token, response(1));
    const again = await store.begin(ws, 'k1', fp);
    expect(again).toEqual({ kind: 'replay', response: response(1) });
    if (again.kind === 'replay') {
      expect(JSON.stringify(again.response.body)).toBe(JSON.stringify(response(1).body));
    }
  });

  it('a 404 outcome replays with its status', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('nobody');
    const first = await store.begin(ws, 'k404', fp);
    if (first.kind !== 'started') throw new Error(first.kind);
    const notFound = { status: 404, body: { error: { code: 'not_found' } }, headers: { 'x-request-id': 'r' } };
    await store.complete(ws, 'k404', first.token, notFound);
    expect(await store.begin(ws, 'k404', fp)).toEqual({ kind: 'replay', response: notFound });
  });

  it('while the first is running, the same key and body is in use', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('acme');
    expect((await store.begin(ws, 'k', fp)).kind).toBe('started');
    expect(await store.begin(ws, 'k', fp)).toEqual({ kind: 'in_use' });
  });

  it('the same key with another body or endpoint is reused, running or done', async () => {
    const store = createSqlIdempotencyStore(sql());
    const first = await store.begin(ws, 'k', company('acme'));
    if (first.kind !== 'started') throw new Error(first.kind);
    expect(await store.begin(ws, 'k', company('globex'))).toEqual({ kind: 'reused' });
    await store.complete(ws, 'k', first.token, response(1));
    expect(await store.begin(ws, 'k', company('globex'))).toEqual({ kind: 'reused' });
    expect(await store.begin(ws, 'k', fingerprint('/v1/domain', { url: 'acme' }))).toEqual({ kind: 'reused' });
    expect((await store.begin(ws, 'k', company('acme'))).kind).toBe('replay');
  });

  it('bodies are compared canonically: key order does not matter, values do', async () => {
    const store = createSqlIdempotencyStore(sql());
    const first = await store.begin(ws, 'k', fingerprint('/v1/company', { url: 'acme', max_age: 3600 }));
    if (first.kind !== 'started') throw new Error(first.kind);
    await store.complete(ws, 'k', first.token, response(1));
    const reordered = fingerprint('/v1/company', { max_age: 3600, url: 'acme' });
    expect((await store.begin(ws, 'k', reordered)).kind).toBe('replay');
    const changed = fingerprint('/v1/company', { max_age: 60, url: 'acme' });
    expect((await store.begin(ws, 'k', changed)).kind).toBe('reused');
  });

  it('keys are scoped to the workspace', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('acme');
    expect((await store.begin(ws, 'shared-key', fp)).kind).toBe('started');
    expect((await store.begin(`${ws}-other`, 'shared-key', company('globex'))).kind).toBe('started');
  });

  it('after abandon the same key runs anew, and the old token no longer acts', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('acme');
    const first = await store.begin(ws, 'k', fp);
    if (first.kind !== 'started') throw new Error(first.kind);
    await store.abandon(ws, 'k', first.token);
    const second = await store.begin(ws, 'k', company('globex')); // a new body is fine: nothing was stored
    if (second.kind !== 'started') throw new Error(second.kind);
    expect(second.token).not.toBe(first.token);
    await store.complete(ws, 'k', first.token, response(1));
    await store.abandon(ws, 'k', first.token);
    expect(await store.begin(ws, 'k', company('globex'))).toEqual({ kind: 'in_use' });
    await store.complete(ws, 'k', second.token, response(2));
    expect(await store.begin(ws, 'k', company('globex'))).toEqual({ kind: 'replay', response: response(2) });
  });

  it('abandon leaves a completed record alone', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('acme');
    const first = await store.begin(ws, 'k', fp);
    if (first.kind !== 'started') throw new Error(first.kind);
    await store.complete(ws, 'k', first.token, response(1));
    await store.abandon(ws, 'k', first.token);
    expect((await store.begin(ws, 'k', fp)).kind).toBe('replay');
  });

  it("a lapsed lock (dead instance) is taken over, and the old owner's token can't clobber it", async () => {
    const store = createSqlIdempotencyStore(sql(), { lockTtlMs: 500 });
    const fp = company('acme');
    const dead = await store.begin(ws, 'k', fp);
    if (dead.kind !== 'started') throw new Error(dead.kind);
    expect(await store.begin(ws, 'k', fp)).toEqual({ kind: 'in_use' });
    await sleep(650);
    const takeover = await store.begin(ws, 'k', fp);
    if (takeover.kind !== 'started') throw new Error(takeover.kind);
    expect(takeover.token).not.toBe(dead.token);
    await store.complete(ws, 'k', dead.token, response(1));
    await store.abandon(ws, 'k', dead.token);
    expect(await store.begin(ws, 'k', fp)).toEqual({ kind: 'in_use' });
    await store.complete(ws, 'k', takeover.token, response(2));
    expect(await store.begin(ws, 'k', fp)).toEqual({ kind: 'replay', response: response(2) });
  });

  it('a slow owner whose lock lapsed but was not taken over still completes', async () => {
    const store = createSqlIdempotencyStore(sql(), { lockTtlMs: 300 });
    const fp = company('acme');
    const slow = await store.begin(ws, 'k', fp);
    if (slow.kind !== 'started') throw new Error(slow.kind);
    await sleep(400);
    await store.complete(ws, 'k', slow.token, response(1));
    expect(await store.begin(ws, 'k', fp)).toEqual({ kind: 'replay', response: response(1) });
  });

  it('a stored response replays for 24 h from the first request, then the key is new again', async () => {
    const store = createSqlIdempotencyStore(sql());
    const t0 = new Date();
    const fp = company('acme');
    const first = await store.begin(ws, 'k', fp, t0);
    if (first.kind !== 'started') throw new Error(first.kind);
    await store.complete(ws, 'k', first.token, response(1));
    const justBefore = new Date(t0.getTime() + 24 * HOUR - 1000);
    expect((await store.begin(ws, 'k', company('globex'), justBefore)).kind).toBe('reused');
    expect((await store.begin(ws, 'k', fp, justBefore)).kind).toBe('replay');
    const after = new Date(t0.getTime() + 24 * HOUR);
    expect((await store.begin(ws, 'k', company('globex'), after)).kind).toBe('started');
  });

  it('purgeExpired deletes only records past retention', async () => {
    const store = createSqlIdempotencyStore(sql(), { retentionMs: HOUR });
    const t0 = new Date(Date.now() - 10 * 365 * 24 * HOUR); // older than anything other tests wrote
    const old = await store.begin(ws, 'old-done', company('a'), t0);
    if (old.kind !== 'started') throw new Error(old.kind);
    await store.complete(ws, 'old-done', old.token, response(1));
    await store.begin(ws, 'old-running', company('b'), t0);
    await store.begin(ws, 'newer', company('c'), new Date(t0.getTime() + 2 * HOUR));
    expect(await store.purgeExpired(new Date(t0.getTime() + HOUR))).toBe(2);
    expect(await store.purgeExpired(new Date(t0.getTime() + HOUR))).toBe(0);
    const rows = await sql().query<{ idem_key: string }>(
      'SELECT idem_key FROM idempotency_keys WHERE workspace_id = $1',
      [ws],
    );
    expect(rows.rows.map((r) => r.idem_key)).toEqual(['newer']);
  });

  it('concurrent begins of one key: exactly one starts, the rest are in use', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fp = company('acme');
    const results = await Promise.all(Array.from({ length: 20 }, () => store.begin(ws, 'race', fp)));
    expect(results.filter((r) => r.kind === 'started')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'in_use')).toHaveLength(19);
  });

  it('concurrent begins with different bodies: exactly one starts, the others are in use or reused', async () => {
    const store = createSqlIdempotencyStore(sql());
    const fps = Array.from({ length: 12 }, (_, i) => company(i % 2 ? 'acme' : 'globex'));
    const results = await Promise.all(fps.map((fp) => store.begin(ws, 'race2', fp)));
    const winner = results.findIndex((r) => r.kind === 'started');
    expect(results.filter((r) => r.kind === 'started')).toHaveLength(1);
    results.forEach((r, i) => {
      if (i === winner) return;
      expect(r.kind).toBe(fps[i] === fps[winner] ? 'in_use' : 'reused');
    });
  });

  it('concurrent begins and completes of many keys share statements: one claim for all, one completion for all', async () => {
    const recording = recordingSql(sql());
    const store = createSqlIdempotencyStore(recording.sql);
    const keys = Array.from({ length: 40 }, (_, i) => `many-${i}`);
    const begun = await Promise.all(keys.map((k) => store.begin(ws, k, company(k))));
    expect(begun.every((b) => b.kind === 'started')).toBe(true);
    expect(recording.queries).toHaveLength(1);
    await Promise.all(begun.map((b, i) => (b.kind === 'started' ? store.complete(ws, keys[i]!, b.token, response(i)) : undefined)));
    expect(recording.queries).toHaveLength(2);
    const replays = await Promise.all(keys.map((k) => store.begin(ws, k, company(k))));
    expect(replays).toEqual(keys.map((_, i) => ({ kind: 'replay', response: response(i) })));
  });

  it('one batch answers each call for itself: started, replayed, in use, reused, and the same key twice', async () => {
    const store = createSqlIdempotencyStore(sql());
    const done = await store.begin(ws, 'done', company('acme'));
    if (done.kind !== 'started') throw new Error(done.kind);
    await store.complete(ws, 'done', done.token, response(7));
    expect((await store.begin(ws, 'running', company('acme'))).kind).toBe('started');
    const results = await Promise.all([
      store.begin(ws, 'fresh', company('acme')),
      store.begin(ws, 'done', company('acme')),
      store.begin(ws, 'running', company('acme')),
      store.begin(ws, 'done', company('globex')),
      store.begin(ws, 'twice', company('acme')),
      store.begin(ws, 'twice', company('globex')),
    ]);
    expect(results.map((r) => r.kind)).toEqual(['started', 'replay', 'in_use', 'reused', 'started', 'reused']);
  });
}
