// The OpenAPI document as a client reads it: described operations and fields,
// an example request and answer per operation that the service's own schemas accept, error codes
// as the catalogue's enum, non-negative integer headers, a license and a tag per area.
import { describe, expect, it } from 'vitest';
import { publicJsonEndpoints, type EndpointId } from '../../../contracts/endpoints';
import { ERROR_CODES, renderErrorsDocHtml } from '../../../contracts/errors';
import { operationExamples } from '../../../contracts/examples';
import { buildOpenApiDocument, renderDocsIndexHtml } from '../../../contracts/openapi';

type Json = Record<string, any>;
const doc = buildOpenApiDocument({ serverUrl: 'https://api.example.org' }) as Json;
const operations = Object.entries(doc.paths as Json).flatMap(([path, ops]) => Object.entries(ops as Json).map(([method, op]) => ({ path, method, op: op as Json })));
const publicOperations = operations.filter(({ op }) => !op.tags.includes('Console'));

function deref(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref.slice(2).split('/').reduce((acc: Json, key: string) => acc[key], doc);
}

/** `where.field` of every property without a description, through nested objects and arrays. */
function undescribed(node: Json, where: string, seen = new Set<Json>()): string[] {
  node = deref(node);
  if (!node || typeof node !== 'object' || seen.has(node)) return [];
  seen.add(node);
  const missing: string[] = [];
  for (const [name, prop] of Object.entries<Json>(node.properties ?? {})) {
    if (!prop.description && !deref(prop).description) missing.push(`${where}.${name}`);
    missing.push(...undescribed(prop, `${where}.${name}`, seen));
  }
  for (const key of ['items', 'additionalProperties']) if (typeof node[key] === 'object') missing.push(...undescribed(node[key], `${where}[]`, seen));
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const branch of node[key] ?? []) missing.push(...undescribed(branch, where, seen));
  return missing;
}

describe('the OpenAPI document for clients', () => {
  it('describes every operation', () => {
    for (const { path, method, op } of operations) expect(op.description, `${method} ${path}`).toEqual(expect.any(String));
  });

  it('describes every field of the public API: request bodies, answers, parameters', () => {
    const missing: string[] = [];
    for (const { path, method, op } of publicOperations) {
      const where = `${method} ${path}`;
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) missing.push(...undescribed(body, `${where} body`));
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema) missing.push(...undescribed(schema, `${where} ${status}`));
      }
      for (const param of op.parameters ?? []) if (!deref(param).description) missing.push(`${where} parameter ${deref(param).name}`);
    }
    expect(missing).toEqual([]);
  });

  it('shows an example request and answer per public operation, accepted by its own schemas', () => {
    for (const row of publicJsonEndpoints()) {
      const op = doc.paths[row.path][row.method.toLowerCase()];
      const example = operationExamples('https://api.example.org/docs')[row.id as EndpointId];
      expect(example, row.id).toBeDefined();
      expect(op.responses[String(row.status)].content['application/json'].example, row.id).toEqual(example!.answer);
      if (typeof row.answer !== 'string') expect(row.answer.safeParse(example!.answer).error, row.id).toBeUndefined();
      if (row.body) {
        expect(op.requestBody.content['application/json'].example, row.id).toEqual(example!.request);
        expect(row.body.safeParse(example!.request).error, row.id).toBeUndefined();
      }
    }
  });

  it('lists the readiness probe\'s 503 with the readiness body and its example, not the error envelope', () => {
    const ready = doc.paths['/v1/health/ready'].get;
    const unready = ready.responses['503'].content['application/json'];
    expect(unready.schema).toEqual(ready.responses['200'].content['application/json'].schema);
    expect(unready.schema.$ref).toBe('#/components/schemas/ReadinessResponse');
    const example = operationExamples('https://api.example.org/docs').ready!.otherAnswers![503];
    expect(unready.example).toEqual(example);
    const row = publicJsonEndpoints().find((r) => r.id === 'ready')!;
    expect(typeof row.answer !== 'string' && row.answer.safeParse(example).success).toBe(true);
  });

  it('gives error.code as the enum of the error catalogue', () => {
    expect(deref(doc.components.schemas.ErrorObject).properties.code.enum).toEqual(ERROR_CODES);
    expect(deref(doc.components.schemas.ErrorCatalogueEntry).properties.code.enum).toEqual(ERROR_CODES);
  });

  it('bounds every integer header below by 0 (Retry-After by 1)', () => {
    let integers = 0;
    for (const { op } of operations) {
      for (const response of Object.values<Json>(op.responses)) {
        for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
          const schema = deref(deref(header).schema);
          if (schema.type !== 'integer') continue;
          integers++;
          expect(schema.minimum, name).toBe(name === 'Retry-After' ? 1 : 0);
        }
      }
    }
    expect(integers).toBeGreaterThan(0);
  });

  it('has a license, and a described tag for each area that every operation uses', () => {
    expect(doc.info.license).toMatchObject({ name: expect.any(String) });
    const tags = doc.tags.map((t: Json) => t.name);
    expect(tags).toEqual(['Lookups', 'Search', 'Cache', 'Webhooks', 'Watches', 'Meta', 'Console']);
    for (const tag of doc.tags) expect(tag.description).toEqual(expect.any(String));
    for (const { path, method, op } of operations) expect(op.tags.length === 1 && tags.includes(op.tags[0]), `${method} ${path}`).toBe(true);
  });

  it('keeps fields with a default optional in request bodies (inline, where generators read them as optional)', () => {
    const search = doc.paths['/v1/search'].post.requestBody.content['application/json'].schema;
    expect(search.$ref).toBeUndefined();
    expect(search.required).toEqual(['query']);
    expect(search.properties.limit.default).toBe(10);
  });
});

describe('the served documentation pages', () => {
  it('/docs names every endpoint that takes an Idempotency-Key, search included', () => {
    const html = renderDocsIndexHtml();
    const sentence = html.slice(0, html.indexOf('accept an <code>Idempotency-Key</code>'));
    const lastParagraph = sentence.slice(sentence.lastIndexOf('<p>'));
    for (const path of ['/v1/company', '/v1/domain', '/v1/person', '/v1/search']) expect(lastParagraph).toContain(`POST ${path}`);
    expect(html).not.toMatch(/three lookups/i);
    for (const header of ['X-Credits-Charged', 'X-Credits-Remaining', 'RateLimit-Limit', 'Retry-After', 'Idempotent-Replayed', 'WWW-Authenticate']) {
      expect(html).toContain(`<code>${header}`);
    }
  });

  it('/docs/errors shows code as code, never literal backticks', () => {
    const html = renderErrorsDocHtml('https://api.example.org/docs', '1 credit by company reference, 4 by website domain');
    expect(html).not.toContain('`');
    expect(html).toContain('<code>url</code> is not a company reference.');
    for (const code of ERROR_CODES) expect(html).toContain(`id="${code}"`);
  });
});
