import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, renderDocsIndexHtml } from '../../../contracts/openapi';
import { ERROR_CATALOGUE, type ErrorCode } from '../../../contracts/errors';
import { publicJsonEndpoints } from '../../../contracts/endpoints';

type Json = Record<string, any>;
const doc = buildOpenApiDocument({ serverUrl: 'https://api.example.org/' }) as Json;

const ENDPOINTS: [string, 'get' | 'post' | 'patch' | 'delete', ('200' | '201' | '202')?][] = [
  ['/v1/company', 'post'],
  ['/v1/domain', 'post'],
  ['/v1/person', 'post'],
  ['/v1/search', 'post'],
  ['/v1/batch', 'post'],
  ['/v1/cache/company', 'post'],
  ['/v1/cache/domain', 'post'],
  ['/v1/cache/person', 'post'],
  ['/v1/cache/stats', 'get'],
  ['/v1/health', 'get'],
  ['/v1/health/ready', 'get'],
  ['/v1/pricing', 'get'],
  ['/v1/openapi.json', 'get'],
  ['/v1/errors', 'get'],
  ['/v1/asyncapi.json', 'get'],
  ['/v1/webhook-endpoints', 'post', '201'],
  ['/v1/webhook-endpoints', 'get'],
  ['/v1/webhook-endpoints/{id}', 'get'],
  ['/v1/webhook-endpoints/{id}', 'patch'],
  ['/v1/webhook-endpoints/{id}', 'delete'],
  ['/v1/webhook-endpoints/{id}/rotate-secret', 'post'],
  ['/v1/webhook-endpoints/{id}/deliveries', 'get'],
  ['/v1/webhook-endpoints/{id}/deliveries/{delivery_id}/resend', 'post', '202'],
  ['/v1/watches', 'post', '201'],
  ['/v1/watches', 'get'],
  ['/v1/watches/{id}', 'get'],
  ['/v1/watches/{id}', 'delete'],
  ['/v1/watches/{id}/run', 'post'],
];

/** Follows a local `$ref` such as `#/components/schemas/X`. */
function deref(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((acc: Json, key: string) => acc[key], doc);
}

/** A schema is described by its own description, its `$ref` target's, or a described member of a union. */
function isDescribed(schema: Json): boolean {
  const target = deref(schema);
  if (typeof schema.description === 'string' || typeof target?.description === 'string') return true;
  return [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some((member: Json) => typeof deref(member)?.description === 'string');
}

/**
 * Every place of the document a client reads without a description: operations, parameters,
 * headers and the properties of every schema, however deep. Examples are values, not schemas.
 */
function undescribed(document: Json): string[] {
  const missing: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object') return;
    // Arrays too: their entries are keyed by index.
    for (const [key, value] of Object.entries<any>(node)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'properties' && value !== null && typeof value === 'object') {
        for (const [name, property] of Object.entries<any>(value)) {
          if (!isDescribed(property)) missing.push(`${at}/properties/${name}`);
          walk(property, `${at}/properties/${name}`);
        }
      } else {
        walk(value, `${at}/${key}`);
      }
    }
  };
  for (const [path, operations] of Object.entries<Json>(document.paths)) {
    for (const [method, op] of Object.entries<Json>(operations)) {
      const at = `${method.toUpperCase()} ${path}`;
      if (typeof op.description !== 'string') missing.push(`${at} (operation)`);
      for (const parameter of (op.parameters ?? []).map(deref)) {
        if (typeof parameter.description !== 'string' && !isDescribed(parameter.schema ?? {})) missing.push(`${at} parameter ${parameter.in} ${parameter.name}`);
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        for (const [name, header] of Object.entries<Json>(deref(response).headers ?? {})) {
          const resolved = deref(header);
          if (typeof resolved.description !== 'string' && !isDescribed(resolved.schema ?? {})) missing.push(`${at} ${status} header ${name}`);
        }
      }
    }
  }
  walk(document.paths, '#/paths');
  walk(document.components, '#/components');
  return missing;
}

describe('buildOpenApiDocument', () => {
  it('is an OpenAPI 3.1 document of version 1.0.0 with the given server', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ version: '1.0.0', title: expect.any(String) });
    expect(doc.servers).toEqual([{ url: 'https://api.example.org' }]);
  });

  it('survives a JSON round trip (it is served as JSON)', () => {
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('holds every public endpoint and nothing else', () => {
    // The console's paths (tag Console) are checked in console-openapi.test.ts.
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/console/')).sort()).toEqual([...new Set(ENDPOINTS.map(([p]) => p))].sort());
    for (const [path, method, status = '200'] of ENDPOINTS) {
      expect(doc.paths[path][method], `${method} ${path}`).toBeDefined();
      expect(doc.paths[path][method].responses[status]).toBeDefined();
    }
  });

  it('declares both ways of sending a key and makes the Meta area public', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(doc.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    for (const path of ['/v1/health', '/v1/health/ready', '/v1/pricing', '/v1/openapi.json', '/v1/errors']) {
      expect(doc.paths[path].get.security).toEqual([]);
    }
  });

  it('documents the status codes of the spec table for each lookup', () => {
    const expected: Record<string, ErrorCode[]> = {
      '/v1/company': ['invalid_request', 'invalid_company_reference', 'not_found', 'unresolvable_id'],
      '/v1/domain': ['invalid_request', 'invalid_domain', 'not_found'],
      '/v1/person': ['invalid_request', 'invalid_person_reference', 'not_found'],
    };
    const common: ErrorCode[] = [
      'unauthorized',
      'insufficient_credits',
      'idempotency_key_in_use',
      'idempotency_key_reused',
      'rate_limited',
      'concurrency_limited',
      'internal_error',
      'upstream_error',
      'parse_error',
      'blocked',
      'source_rate_limited',
      'no_capacity',
      'timeout',
    ];
    for (const [path, own] of Object.entries(expected)) {
      const responses = doc.paths[path].post.responses;
      expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '402', '404', '409', '422', '429', '500', '502', '503', '504']);
      for (const code of [...own, ...common]) {
        const response = responses[String(ERROR_CATALOGUE[code].status)];
        expect(Object.keys(response.content['application/json'].examples), `${path} ${code}`).toContain(code);
      }
    }
    expect(Object.keys(doc.paths['/v1/domain'].post.responses['404'].content['application/json'].examples)).toEqual(['not_found']);
  });

  it('sends the documented headers: Retry-After on 429/503/504, credits and cache headers on lookup 200s', () => {
    const company = doc.paths['/v1/company'].post;
    const ok = Object.keys(company.responses['200'].headers);
    expect(ok).toEqual(
      expect.arrayContaining([
        'X-Request-Id',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'RateLimit-Policy',
        'RateLimit',
        'X-Credits-Charged',
        'X-Credits-Remaining',
        'X-Cache',
        'Age',
        'Idempotent-Replayed',
      ]),
    );
    for (const status of ['429', '503', '504']) expect(Object.keys(company.responses[status].headers)).toContain('Retry-After');
    expect(Object.keys(company.responses['400'].headers)).not.toContain('Retry-After');
    expect(Object.keys(doc.paths['/v1/health'].get.responses['200'].headers)).toContain('X-Request-Id');
  });

  it('takes an optional Idempotency-Key header on the three lookups and search', () => {
    for (const path of ['/v1/company', '/v1/domain', '/v1/person', '/v1/search']) {
      const params = doc.paths[path].post.parameters.map(deref);
      expect(params).toContainEqual(expect.objectContaining({ in: 'header', name: 'Idempotency-Key' }));
      expect(params.find((p: Json) => p.name === 'Idempotency-Key').required ?? false).toBe(false);
    }
  });

  it('generates request schemas from zod: strict, with the max_age bounds', () => {
    const body = deref(doc.paths['/v1/company'].post.requestBody.content['application/json'].schema);
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(['url']);
    expect(body.properties.url).toMatchObject({ type: 'string', minLength: 1, maxLength: 2048 });
    expect(body.properties.max_age).toMatchObject({ type: 'integer', minimum: 0, maximum: 315360000, default: 2592000 });
  });

  it('links error examples to the docs', () => {
    const example = doc.paths['/v1/company'].post.responses['401'].content['application/json'].examples.unauthorized.value;
    expect(example.error.doc_url).toBe('https://api.example.org/docs/errors#unauthorized');
    expect(example.meta.credits_remaining).toBeNull();
  });

  it('describes every operation, parameter, header and schema property', () => {
    expect(undescribed(doc)).toEqual([]);
  });

  it('only refers to components that exist', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      const target = deref({ $ref: ref.slice(8, -1) });
      expect(target, ref).toBeDefined();
    }
  });
});

describe('renderDocsIndexHtml', () => {
  it('links authentication, endpoints, pricing and errors', () => {
    const html = renderDocsIndexHtml();
    expect(html).toContain('Authorization: Bearer');
    expect(html).toContain('X-Api-Key');
    expect(html).toContain('href="/v1/pricing"');
    expect(html).toContain('href="/docs/errors"');
    for (const [path] of ENDPOINTS) expect(html).toContain(path);
  });
});

describe('statuses and headers from each row policy', () => {
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses);
  const headers = (path: string, method: string, status: string) => {
    const h: Json = doc.paths[path][method].responses[status].headers ?? {};
    return Object.fromEntries(Object.entries(h).map(([name, node]) => [name, deref(node as Json).required === true]));
  };

  it('given a row of any area, then a request it cannot read (400) and a bug (500) are among its answers', () => {
    for (const row of publicJsonEndpoints()) expect(statuses(row.path, row.method.toLowerCase()), row.id).toEqual(expect.arrayContaining(['400', '500']));
  });

  it('given a row on a bucket, then 429 and the unreadable bucket 503 are among its answers; a key area adds 401', () => {
    expect(statuses('/v1/cache/stats', 'get')).toEqual(expect.arrayContaining(['401', '429', '503']));
    expect(statuses('/v1/pricing', 'get')).toEqual(expect.arrayContaining(['429', '503']));
    expect(statuses('/v1/pricing', 'get')).not.toContain('401');
  });

  it('given the readiness probe (no bucket), then no 429 and its 503 is its own body without RateLimit headers', () => {
    expect(statuses('/v1/health/ready', 'get')).not.toContain('429');
    expect(doc.paths['/v1/health/ready'].get.responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ReadinessResponse' });
    expect(headers('/v1/health/ready', 'get', '503')).toEqual({ 'X-Request-Id': true });
  });

  it('given the liveness probe (a bucket when reachable), then its 503 is the degraded body and RateLimit headers are optional', () => {
    expect(doc.paths['/v1/health'].get.responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/HealthResponse' });
    expect(headers('/v1/health', 'get', '200')).toEqual({ 'X-Request-Id': true, 'RateLimit-Limit': false, 'RateLimit-Remaining': false, 'RateLimit-Reset': false, 'RateLimit-Policy': false, RateLimit: false });
  });

  it('given a bucket row, then RateLimit headers are required except on a 500 or 503, which may come before the bucket is read', () => {
    expect(headers('/v1/company', 'post', '402')['RateLimit-Limit']).toBe(true);
    expect(headers('/v1/company', 'post', '503')['RateLimit-Limit']).toBe(false);
    expect(headers('/v1/company', 'post', '503')['Retry-After']).toBe(true);
  });

  it('given a console call, then a session call adds 401, a change adds 403, and RateLimit headers are on every answer', () => {
    expect(statuses('/console/v1/invitations/preview', 'get')).toEqual(['200', '400', '404', '429', '500', '503']);
    expect(statuses('/console/v1/invitations/accept', 'post')).toEqual(['200', '400', '403', '404', '429', '500', '503']);
    expect(statuses('/console/v1/overview', 'get')).toEqual(['200', '400', '401', '429', '500', '503']);
    expect(statuses('/console/v1/keys', 'post')).toEqual(['201', '400', '401', '403', '429', '500', '503']);
    for (const status of ['200', '503']) expect(headers('/console/v1/overview', 'get', status)['RateLimit-Limit']).toBe(true);
  });
});
