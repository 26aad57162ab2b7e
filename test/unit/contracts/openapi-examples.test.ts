// Every operation of both OpenAPI documents (the public one, console included, which
// /docs/reference renders, and the admin API's) shows a curl call and an example answer, each
// accepted by the operation's own schemas, so the reference never shows what the service refuses.
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { documentRows, type Endpoint, type EndpointId } from '../../../contracts/endpoints';
import { operationExamples } from '../../../contracts/examples';
import { ErrorEnvelope } from '../../../contracts/http';
import { buildAdminOpenApiDocument, buildOpenApiDocument } from '../../../contracts/openapi';

type Json = Record<string, any>;
const DOCS_URL = 'https://api.example.org/docs';
const documents = {
  public: buildOpenApiDocument({ serverUrl: 'https://api.example.org' }) as Json,
  admin: buildAdminOpenApiDocument({ serverUrl: 'https://api.example.org' }) as Json,
};
const examples = operationExamples(DOCS_URL);
const rowsOf = (document: 'public' | 'admin') => documentRows(document).map((row) => ({ row, op: documents[document].paths[row.path][row.method.toLowerCase()] as Json }));
const both = [...rowsOf('public'), ...rowsOf('admin')];
const parses = (schema: unknown, value: unknown) => (schema as z.ZodType).safeParse(value).error;

describe('the examples of the OpenAPI documents', () => {
  it('cover both documents, the console calls included', () => {
    expect(both.filter(({ op }) => op.tags.includes('Console')).length).toBeGreaterThan(20);
    expect(rowsOf('admin').length).toBeGreaterThan(15);
  });

  it.each(both.map(({ row, op }) => [row.id, row, op] as const))('%s: a curl call of its method and path, every path value filled, the body and credential it needs', (_id, row: Endpoint, op: Json) => {
    const samples = op['x-codeSamples'] as { lang: string; label: string; source: string }[];
    expect(samples.map((s) => s.label)).toEqual(['curl']);
    const curl = samples[0]!.source;
    expect(curl.startsWith(`curl -X ${row.method} "$API_URL${row.path.split('{')[0]}`)).toBe(true);
    expect(curl, 'a path value left as {name}').not.toMatch(/\{\w+\}/);
    expect(curl.includes('-d \'')).toBe(row.body !== undefined);
    if (row.tag === 'Admin') expect(curl).toContain('Authorization: Bearer $ADMIN_TOKEN');
    if (op.security?.[0]?.consoleSession) {
      expect(curl).toContain('-b "lookup_console_session=$SESSION"');
      expect(curl.includes('X-CSRF-Token: $CSRF_TOKEN')).toBe(row.method !== 'GET');
    }
  });

  it.each(both.map(({ row, op }) => [row.id, row, op] as const))('%s: an example of every success answer with a body, its request, path and query, each accepted by its schema', (_id, row: Endpoint, op: Json) => {
    const example = examples[row.id as EndpointId];
    expect(example).toBeDefined();
    for (const [status, response] of Object.entries<Json>(op.responses)) {
      if (!/^2/.test(status) && !(row.otherAnswers ?? []).some((other) => String(other.status) === status)) continue;
      if (response.content === undefined) {
        // An empty answer (204, 202): nothing to show but its status and description.
        expect(row.answer, status).toBe('empty');
        continue;
      }
      for (const [type, media] of Object.entries<Json>(response.content)) {
        expect(media.example, `${status} ${type}`).toBeDefined();
        if (type === 'application/json') expect(parses(row.answer, media.example), `${status} ${type}`).toBeUndefined();
        if (type === 'text/csv') {
          const lines = (media.example as string).split('\r\n');
          expect(lines.at(-1), 'CSV ends with a line break').toBe('');
          const width = lines[0]!.split(',').length;
          expect(lines.slice(1, -1).length).toBeGreaterThan(0);
          for (const line of lines.slice(1, -1)) expect(line.split(',').length, line).toBe(width);
        }
      }
    }
    if (row.body !== undefined) {
      expect(op.requestBody.content['application/json'].example).toEqual(example!.request);
      expect(parses(row.body, example!.request)).toBeUndefined();
    }
    if (row.params !== undefined) expect(parses(row.params, example!.params)).toBeUndefined();
    if (row.query !== undefined && example!.query !== undefined) expect(parses(row.query, example!.query)).toBeUndefined();
  });

  it.each(both.map(({ row, op }) => [row.id, row, op] as const))('%s: an example of every error it answers, in the error envelope, saying what to do', (_id, row: Endpoint, op: Json) => {
    const others = new Set((row.otherAnswers ?? []).map((other) => String(other.status)));
    const errors = Object.entries<Json>(op.responses).filter(([status]) => /^[45]/.test(status) && !others.has(status));
    expect(errors.length).toBeGreaterThan(0);
    for (const [status, response] of errors) {
      const shown = Object.values<Json>(response.content['application/json'].examples ?? {});
      expect(shown.length, status).toBeGreaterThan(0);
      for (const { value, description } of shown) {
        expect(ErrorEnvelope.safeParse(value).error, status).toBeUndefined();
        expect(description, status).toMatch(/^What to do: /);
      }
    }
  });
});
