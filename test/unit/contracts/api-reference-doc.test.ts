// docs/api.md, the client's reference, against the service's own tables: every public endpoint,
// request field, header, price and error code is there with the service's figures; and README.md
// points only inside the repository.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publicJsonEndpoints } from '../../../contracts/endpoints';
import { ERROR_CATALOGUE, ERROR_CODES, reasonsOf } from '../../../contracts/errors';
import { REFUND_CAUSES } from '../../../contracts/events';
import { eventJsonSchemas } from '../../../contracts/jsonschema';
import { buildOpenApiDocument } from '../../../contracts/openapi';
import { PRICES } from '../../../contracts/prices';
import { pricingTable, refundOwed, successPrice } from '../../../services/ledger/pricing';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const reference = read('docs/api.md');
const rows = reference.split('\n').filter((line) => line.startsWith('| '));
const cells = (line: string) => line.split('|').slice(1, -1).map((c) => c.trim());
const doc = buildOpenApiDocument({ serverUrl: 'https://api.example.org' }) as Record<string, any>;

describe('docs/api.md', () => {
  it('lists every public endpoint with its method', () => {
    for (const row of publicJsonEndpoints()) {
      expect(rows.some((line) => cells(line)[0] === row.method && cells(line)[1] === `\`${row.path}\``), `${row.method} ${row.path}`).toBe(true);
    }
  });

  it('describes every request field of every public endpoint', () => {
    for (const row of publicJsonEndpoints()) {
      const schema = row.body && doc.paths[row.path][row.method.toLowerCase()].requestBody.content['application/json'].schema;
      for (const field of Object.keys(schema?.properties ?? {})) {
        expect(rows.some((line) => cells(line)[0] === `\`${field}\`` && cells(line)[1]!.includes(`\`${row.path}\``) || (cells(line)[0] === '`max_age`' && field === 'max_age')), `${row.path} ${field}`).toBe(true);
      }
    }
  });

  it('lists every response header of the OpenAPI document', () => {
    const headers = new Set<string>();
    for (const ops of Object.values<any>(doc.paths)) for (const op of Object.values<any>(ops)) for (const r of Object.values<any>(op.responses)) for (const h of Object.keys(r.headers ?? {})) headers.add(h);
    for (const header of headers) expect(rows.some((line) => cells(line)[0] === `\`${header}\``), header).toBe(true);
  });

  it('gives the prices of GET /v1/pricing', () => {
    const section = reference.slice(reference.indexOf('## Prices'), reference.indexOf('## Idempotency'));
    const priceRows = section.split('\n').filter((line) => line.startsWith('| '));
    for (const op of pricingTable().operations) {
      const line = priceRows.find((l) => cells(l)[0] === `\`${op.operation}\``);
      expect(line, op.operation).toBeDefined();
      expect(cells(line!)[2]).toBe(String(op.success_price));
      expect(cells(line!)[3]).toBe(op.not_found_price === null ? '—' : `${op.not_found_price} (free from cache)`);
    }
  });

  it('prices the endpoint table from the price table: no row restates a price of its own', () => {
    const by: Partial<Record<string, string>> = { person_url: 'by URL ', person_name: 'by name ' };
    for (const row of publicJsonEndpoints()) {
      const line = rows.find((l) => cells(l)[0] === row.method && cells(l)[1] === `\`${row.path}\``)!;
      if (row.batch) {
        expect(cells(line)[4], row.path).toBe("the sum of its items' prices");
        continue;
      }
      if (row.priced === undefined) {
        expect(cells(line)[4], row.path).toBe('free');
        continue;
      }
      const ops = row.priced.map((op) => PRICES[op]);
      const notFound = [...new Set(ops.map((p) => p.notFound))];
      const expected = row.priced.map((op) => `${by[op] ?? ''}${PRICES[op].success}`).join(', ') + (notFound[0] === null ? '' : `; not-found ${notFound.join('/')} (free from cache)`);
      expect(cells(line)[4], row.path).toBe(expected);
    }
  });

  it('lists every error code with the catalogue status, type, retry flag and what to do', () => {
    for (const code of ERROR_CODES) {
      const line = rows.find((l) => cells(l)[0] === `\`${code}\``);
      expect(line, code).toBeDefined();
      const entry = ERROR_CATALOGUE[code];
      expect(cells(line!).slice(1, 4)).toEqual([String(entry.status), `\`${entry.type}\``, entry.retryable ? 'yes' : 'no']);
      expect(cells(line!)[4]).toMatch(entry.billing === 'refunded' ? /^refunded/ : entry.billing === 'never_charged' ? /^never charged/ : /^not-found price/);
      expect(cells(line!)[5], `${code}: copy its action from contracts/errors.ts`).toBe(entry.action);
    }
  });
});

describe('README.md and docs/', () => {
  it('link only inside the repository; the README to the client reference', () => {
    const files = ['README.md', 'docs/api.md', 'docs/events.md', ...readdirSync(new URL('../../../docs/adr/', import.meta.url)).map((f) => `docs/adr/${f}`)];
    for (const file of files) {
      const text = read(file);
      expect(text, file).not.toMatch(/\.\.\//);
      expect(text, file).not.toMatch(/shared\/spec|shared\/design/);
    }
    expect(read('README.md')).toContain('(docs/api.md)');
  });

  it('shows every `error.reason` with its code, as generated from contracts/errors.ts', () => {
    const lines = ['| `error.reason` | With code | Meaning |', '|---|---|---|'];
    for (const code of ERROR_CODES) for (const r of reasonsOf(code)) lines.push(`| \`${r.reason}\` | \`${code}\` | ${r.meaning} |`);
    const start = reference.indexOf('<!-- Generated from ERROR_REASONS');
    const end = reference.indexOf('<!-- End of the error.reason table. -->');
    expect(start).toBeGreaterThan(0);
    const block = reference.slice(reference.indexOf('\n', start) + 1, end).trim();
    expect(block, 'regenerate the table from reasonsOf()').toBe(lines.join('\n'));
  });
});

/** The bullets of the refund-cause list that follows the marker of `doc`. */
function refundCauseBullets(doc: string): string[] {
  const start = doc.indexOf('<!-- Generated from REFUND_CAUSES');
  expect(start).toBeGreaterThan(0);
  const after = doc.slice(doc.indexOf('\n', start) + 1);
  return after.slice(0, after.search(/\n\n|$/)).split('\n');
}

describe('refund causes (LookupRefunded.cause)', () => {
  const bullets = Object.entries(REFUND_CAUSES).map(([cause, meaning]) => `- \`${cause}\`: ${meaning}`);

  it.each(['docs/api.md', 'docs/events.md'])('%s explains every cause, as generated from contracts/events.ts', (path) => {
    expect(refundCauseBullets(read(path))).toEqual(bullets);
  });

  it('are the not-found price and every error code refunded by the catalogue, all named by the event schema', () => {
    const refunded = ERROR_CODES.filter((code) => ERROR_CATALOGUE[code].billing === 'refunded');
    expect(Object.keys(REFUND_CAUSES)).toEqual(['not_found_price', ...refunded]);
    const described = (eventJsonSchemas()['LookupRefunded.json'] as any).properties.data.properties.cause.description as string;
    for (const cause of Object.keys(REFUND_CAUSES)) expect(described, cause).toContain(cause);
  });

  it('the example the docs give holds: a person by name not found is charged 3 and refunded 2', () => {
    expect(successPrice('person_name')).toBe(3);
    expect(refundOwed(3, 'not_found', 'person_name')).toBe(2);
    expect(REFUND_CAUSES.not_found_price).toContain('3 charged, 2 refunded, 1 kept');
  });
});
