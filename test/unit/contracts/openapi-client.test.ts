// A client generated from the OpenAPI document, as a client team would (openapi-typescript), then
// type-checked by tsc: calls that leave out the optional fields (`max_age`, `limit`, ...) compile,
// and mistakes still do not.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../contracts/openapi';

const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const CLIENT = `
import type { components, paths } from './api';

type JsonBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export const company: JsonBody<'/v1/company', 'post'> = { url: 'acme-robotics' };
export const domain: JsonBody<'/v1/domain', 'post'> = { domain: 'acmerobotics.com' };
export const person: JsonBody<'/v1/person', 'post'> = { url: 'Jane Doe' };
export const search: JsonBody<'/v1/search', 'post'> = { query: 'acme robotics' };
export const searchAll: JsonBody<'/v1/search', 'post'> = { query: 'acme robotics', limit: 5, max_age: 0 };
export const invitation: JsonBody<'/console/v1/invitations', 'post'> = { email: 'ada@example.com' };
export const consoleKey: JsonBody<'/console/v1/keys', 'post'> = {};

// Answers: what the service always sends is not optional.
declare const answer: components['schemas']['CompanyLookupResponse'];
export const charged: number = answer.meta.credits_charged;
export const status: 'HIT' | 'MISS' | 'REFRESH' | 'STALE' = answer.meta.cache.status;
declare const failure: components['schemas']['ErrorEnvelope'];
export const code: components['schemas']['ErrorObject']['code'] = failure.error.code;
// @ts-expect-error error.code is the catalogue's enum, not any string
export const notACode: components['schemas']['ErrorObject']['code'] = 'no_such_code';

// @ts-expect-error url is required
export const noUrl: JsonBody<'/v1/company', 'post'> = {};
// @ts-expect-error max_age is a number of seconds
export const wrongType: JsonBody<'/v1/company', 'post'> = { url: 'acme-robotics', max_age: 'soon' };
// @ts-expect-error unknown fields are refused
export const unknownField: JsonBody<'/v1/search', 'post'> = { query: 'acme', page: 2 };
`;

describe('a client generated from the OpenAPI document with openapi-typescript', () => {
  it('compiles calls that omit the optional fields, and refuses wrong ones', async () => {
    const ast = await openapiTS(buildOpenApiDocument({ serverUrl: 'https://api.example.org' }) as never);
    writeFileSync(join(dir, 'api.ts'), astToString(ast));
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    const compilerOptions = { noEmit: true, strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', types: [] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
    const result = await promisify(execFile)(process.execPath, [TSC, '-p', dir], { cwd: dir }).then(
      () => ({ ok: true, output: '' }),
      (err: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` }),
    );
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 120_000);
});
