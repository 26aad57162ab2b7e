// End-to-end: GET /v1/asyncapi.json, public, is a valid AsyncAPI 3 document of every Kafka topic.
import { Parser } from '@asyncapi/parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EVENT_SCHEMAS } from '../../contracts/events';
import { TOPICS } from '../../contracts/jsonschema';
import { call, startE2eServer, type E2eServer } from './support/harness';

describe('GET /v1/asyncapi.json', () => {
  let server: E2eServer;
  beforeAll(async () => {
    server = await startE2eServer({ name: 'PGlite', available: true });
  }, 60_000);
  afterAll(async () => server?.stop());

  test('public JSON that the AsyncAPI parser accepts, with every topic and every event type, and linked from /docs', async () => {
    const res = await call(server.url, 'GET', '/v1/asyncapi.json');
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const { document, diagnostics } = await new Parser().parse(res.body);
    expect(diagnostics.filter((d) => d.severity === 0).map((d) => d.message)).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
    expect(document?.channels().all().map((c) => c.address()).sort()).toEqual(Object.values(TOPICS).sort());
    const messageNames = document?.allMessages().all().map((m) => m.name()) ?? [];
    for (const type of Object.keys(EVENT_SCHEMAS)) expect(messageNames).toContain(type);

    const docs = await call(server.url, 'GET', '/docs');
    expect(docs.text).toContain('/v1/asyncapi.json');
  });
});
