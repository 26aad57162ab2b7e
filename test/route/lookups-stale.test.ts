// `on_error: "stale"` through app.inject, by answer status: the live fetch fails by a sandbox
// failure trigger (services/sandbox/README.md) while the cache holds a copy of the trigger's
// reference, written as an earlier fetch would have written it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../contracts/content-hash';
import { newEvent, streams } from '../../contracts/events';
import { aliases, entities } from '../../services/lookup/aliases';
import { errorOf, startRouteApp, type Answer, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 60_000);
afterAll(async () => t?.close());

const HOUR = 3600;

/** A ProfileFetched of `data` an hour ago, answering to `alias` too: what an earlier live fetch leaves. */
async function cacheCopy(alias: string, entity: { kind: 'company' | 'person' | 'search'; entity: string; stream: string }, data: Record<string, unknown>) {
  const fetchedAt = new Date(Date.now() - HOUR * 1000).toISOString();
  const profile = { entity: entity.entity, kind: entity.kind, data, content_hash: contentHash(data), fetched_at: fetchedAt, aliases: [alias] };
  await t.store.append(entity.stream, [newEvent('ProfileFetched', profile)]);
  return profile;
}

/** A real profile fetched through the API by another workspace: data the schemas accept. */
async function fetched(path: string, body: object) {
  const { headers } = await t.keyed({ credits: 10 });
  const answer = await t.call('POST', path, { headers, body });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json().data as Record<string, unknown>;
}

/** The ledger lines and the LookupCompleted of one request. */
async function recorded(workspaceId: string, requestId: string) {
  const entries = (await t.readModels.ledgerEntries(workspaceId, { requestId, limit: 10 })).data as { type: string; credits: number }[];
  const { rows } = await t.store.sql.query<{ data: Record<string, unknown> }>(`SELECT data FROM events WHERE type = 'LookupCompleted' AND data->>'request_id' = $1`, [requestId]);
  return { ledger: entries.map((e) => [e.type, e.credits]), completed: rows.map((r) => r.data) };
}

function expectStale(answer: Answer, charged: number, remaining: number) {
  expect(answer.statusCode, answer.body).toBe(200);
  expect(answer.headers['x-cache']).toBe('STALE');
  expect(Number(answer.headers.age)).toBeGreaterThanOrEqual(HOUR);
  expect(answer.json().meta).toMatchObject({ cache: { status: 'STALE', age_seconds: Number(answer.headers.age) }, credits_charged: charged, credits_remaining: remaining });
  expect(answer.headers).toMatchObject({ 'x-credits-charged': String(charged), 'x-credits-remaining': String(remaining) });
}

describe('200 STALE', () => {
  it('a company whose refresh fails (upstream_error): the cached copy at the cache-hit price; the ledger holds its one charge, LookupCompleted says STALE and why', async () => {
    const data = await fetched('/v1/company', { url: 'globex' });
    const copy = await cacheCopy(aliases.companySlug('sandbox-upstream-error'), { kind: 'company', entity: entities.company(String(data.id)), stream: streams.company(String(data.id)) }, data);
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const answer = await t.call('POST', '/v1/company', { headers, body: { url: 'sandbox-upstream-error', max_age: 60, on_error: 'stale' } });
    expectStale(answer, 1, 9);
    expect(answer.json().data).toEqual(data);
    expect(answer.json().meta).toMatchObject({ content_hash: copy.content_hash, cache: { fetched_at: copy.fetched_at } });
    expect(await t.balance(workspaceId)).toBe(9);
    expect(await recorded(workspaceId, answer.json().meta.request_id)).toEqual({
      // The failed fetch's refund and the stale answer's charge net out (docs/api.md).
      ledger: [['LookupCharged', -1]],
      completed: [expect.objectContaining({ outcome: 'success', cache_status: 'STALE', credits_charged: 1, error_code: 'upstream_error' })],
    });
    // The console's story of the call says what it answered: 200 from the copy, not the failed fetch's 502.
    const story = await t.readModels.requestStory(workspaceId, answer.json().meta.request_id);
    expect(story).toMatchObject({ call: { status: 200, cache_status: 'STALE', credits_charged: 1, error_code: 'upstream_error' }, refund: null });
  });

  it('a domain (blocked), a person (parse_error) and a search (source_rate_limited): each its copy, each at its price', async () => {
    const company = await fetched('/v1/company', { url: 'acme-robotics' });
    await cacheCopy(aliases.domain('sandbox-blocked.com'), { kind: 'company', entity: entities.company(String(company.id)), stream: streams.company(String(company.id)) }, company);
    const person = await fetched('/v1/person', { url: 'Jane Doe' });
    const id = String(person.public_identifier);
    await cacheCopy(aliases.personId('sandbox-parse-error'), { kind: 'person', entity: entities.person(id), stream: streams.person(id) }, person);
    const search = { query: 'sandbox-source-rate-limited', results: [] };
    await cacheCopy(aliases.search('sandbox-source-rate-limited', 10), { kind: 'search', entity: entities.search('sandbox-source-rate-limited', 10), stream: streams.search(10, 'sandbox-source-rate-limited') }, search);

    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const domain = await t.call('POST', '/v1/domain', { headers, body: { domain: 'sandbox-blocked.com', max_age: 0, on_error: 'stale' } });
    expectStale(domain, 4, 6);
    expect(domain.json().meta.resolved).toEqual({ domain: 'sandbox-blocked.com', confirmed: false });
    const personAnswer = await t.call('POST', '/v1/person', { headers, body: { url: 'https://www.linkedin.com/in/sandbox-parse-error', max_age: 0, on_error: 'stale' } });
    expectStale(personAnswer, 1, 5);
    expect(personAnswer.json().data).toEqual(person);
    const searchAnswer = await t.call('POST', '/v1/search', { headers, body: { query: 'sandbox-source-rate-limited', max_age: 0, on_error: 'stale' } });
    expectStale(searchAnswer, 1, 4);
    expect(await t.balance(workspaceId)).toBe(4);
  });

  it('replayed for its Idempotency-Key: STALE and its Age again, not charged again', async () => {
    const data = await fetched('/v1/company', { url: 'acme-robotics' });
    await cacheCopy(aliases.companySlug('sandbox-upstream-error'), { kind: 'company', entity: entities.company(String(data.id)), stream: streams.company(String(data.id)) }, data);
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const withKey = { ...headers, 'idempotency-key': 'stale-replay-1' };
    const body = { url: 'sandbox-upstream-error', max_age: 0, on_error: 'stale' };
    const first = await t.call('POST', '/v1/company', { headers: withKey, body });
    const again = await t.call('POST', '/v1/company', { headers: withKey, body });
    expectStale(first, 1, 9);
    expect([again.headers['idempotent-replayed'], again.headers['x-cache'], again.headers.age, again.body]).toEqual(['true', 'STALE', first.headers.age, first.body]);
    expect(await t.balance(workspaceId)).toBe(9);
  });
});

describe('5xx as without the flag', () => {
  it('no copy cached: the failure answers, refunded', async () => {
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const answer = await t.call('POST', '/v1/company', { headers, body: { url: 'sandbox-blocked', on_error: 'stale' } });
    expect(errorOf(answer)).toEqual({ status: 503, code: 'blocked', charged: 0, remaining: 10 });
    expect(await t.balance(workspaceId)).toBe(10);
  });

  it('a copy cached but no on_error: the failure answers, refunded; the ledger holds the charge and its refund', async () => {
    const data = await fetched('/v1/company', { url: 'globex' });
    await cacheCopy(aliases.domain('sandbox-upstream-error.com'), { kind: 'company', entity: entities.company(String(data.id)), stream: streams.company(String(data.id)) }, data);
    const { workspaceId, headers } = await t.keyed({ credits: 10 });
    const answer = await t.call('POST', '/v1/domain', { headers, body: { domain: 'sandbox-upstream-error.com', max_age: 0 } });
    expect(errorOf(answer)).toEqual({ status: 502, code: 'upstream_error', charged: 0, remaining: 10 });
    expect((await recorded(workspaceId, answer.json().meta.request_id)).ledger).toEqual([
      ['LookupCharged', -4],
      ['LookupRefunded', 4],
    ]);
  });
});

describe('400', () => {
  it('on_error other than "stale": invalid_request, never charged', async () => {
    const { headers } = await t.keyed({ credits: 10 });
    const answer = await t.call('POST', '/v1/company', { headers, body: { url: 'globex', on_error: 'fresh' } });
    expect(errorOf(answer)).toMatchObject({ status: 400, code: 'invalid_request', charged: 0 });
    expect(answer.json().error.details[0]).toMatchObject({ field: 'on_error' });
  });
});
