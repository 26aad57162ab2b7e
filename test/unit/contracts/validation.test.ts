import { describe, expect, it } from 'vitest';
import {
  idempotencyKeyProblem,
  invalidJsonDetail,
  isJsonContentType,
  parseValue,
  unsupportedContentTypeDetail,
} from '../../../contracts/validation';
import { CompanyLookupRequest, LedgerQuery, SearchRequest } from '../../../contracts/http';


describe('parseValue of a body', () => {
  it('given a valid body, then it returns the parsed value with defaults applied', () => {
    expect(parseValue(CompanyLookupRequest, { url: 'acme-robotics' })).toEqual({
      ok: true,
      value: { url: 'acme-robotics', max_age: 2592000 },
    });
  });

  it('given a content type other than application/json, then it is not JSON (one body detail says so)', () => {
    for (const ct of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) expect(isJsonContentType(ct)).toBe(false);
    expect(unsupportedContentTypeDetail()).toMatchObject({ field: 'body', issue: 'unsupported_content_type' });
  });

  it('accepts application/json in any case and with parameters', () => {
    expect(isJsonContentType('Application/JSON; charset=utf-8')).toBe(true);
    expect(isJsonContentType(' application/json ')).toBe(true);
  });

  it.each([
    ['null', null],
    ['an array', [{ url: 'x' }]],
    ['a string', 'acme'],
    ['a number', 42],
  ])('given %s as the body, then the body as a whole is invalid_type', (_, body) => {
    const result = parseValue(CompanyLookupRequest, body);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.details).toEqual([expect.objectContaining({ field: 'body', issue: 'invalid_type' })]);
  });

  it('given a missing field, then it is required', () => {
    const result = parseValue(CompanyLookupRequest, {});
    expect(result).toEqual({ ok: false, details: [{ field: 'url', issue: 'required', message: '`url` is required.' }] });
  });

  it('given null for a field, then it is invalid_type, not required', () => {
    const result = parseValue(CompanyLookupRequest, { url: null });
    expect(!result.ok && result.details).toEqual([expect.objectContaining({ field: 'url', issue: 'invalid_type' })]);
  });

  it('given an empty string or one over 2048 characters, then too_small / too_big', () => {
    const empty = parseValue(CompanyLookupRequest, { url: '' });
    const long = parseValue(CompanyLookupRequest, { url: 'a'.repeat(2049) });
    expect(!empty.ok && empty.details).toEqual([expect.objectContaining({ field: 'url', issue: 'too_small' })]);
    expect(!long.ok && long.details).toEqual([expect.objectContaining({ field: 'url', issue: 'too_big' })]);
    expect(parseValue(CompanyLookupRequest, { url: 'a'.repeat(2048) }).ok).toBe(true);
  });

  it.each([
    ['a string', '3600', 'invalid_type'],
    ['a fraction', 1.5, 'invalid_type'],
    ['a negative', -1, 'too_small'],
    ['a number over 315360000', 315360001, 'too_big'],
    ['a huge number', 1e20, 'too_big'],
    ['null', null, 'invalid_type'],
    ['a boolean', true, 'invalid_type'],
  ])('given max_age as %s, then %s', (_, maxAge, issue) => {
    const result = parseValue(CompanyLookupRequest, { url: 'x', max_age: maxAge });
    expect(!result.ok && result.details).toEqual([expect.objectContaining({ field: 'max_age', issue })]);
  });

  it('given a huge max_age, then the message names the schema bound, not the safe-integer range', () => {
    const result = parseValue(CompanyLookupRequest, { url: 'x', max_age: 1e20 });
    expect(!result.ok && result.details[0]!.message).toBe('`max_age` must be at most 315360000.');
  });

  it('accepts max_age at both bounds', () => {
    expect(parseValue(CompanyLookupRequest, { url: 'x', max_age: 0 })).toEqual({ ok: true, value: { url: 'x', max_age: 0 } });
    expect(parseValue(CompanyLookupRequest, { url: 'x', max_age: 315360000 }).ok).toBe(true);
  });

  it('given unknown fields, then one unknown_field detail per key, after the other problems', () => {
    const result = parseValue(CompanyLookupRequest, { url: '', foo: 1, bar: 2 });
    expect(!result.ok && result.details.map((d) => [d.field, d.issue])).toEqual([
      ['url', 'too_small'],
      ['foo', 'unknown_field'],
      ['bar', 'unknown_field'],
    ]);
  });

  it('reports every problem field of a search body', () => {
    const result = parseValue(SearchRequest, { query: 'x'.repeat(257), limit: 0 });
    expect(!result.ok && result.details.map((d) => [d.field, d.issue])).toEqual([
      ['query', 'too_big'],
      ['limit', 'too_small'],
    ]);
  });
});

describe('parseValue on query strings', () => {
  it('turns digit strings into integers and refuses anything else', () => {
    expect(parseValue(LedgerQuery, { after: '10', limit: '5' })).toEqual({ ok: true, value: { after: 10, limit: 5, mode: 'live' } });
    const bad = parseValue(LedgerQuery, { after: 'x', limit: '5000' });
    expect(!bad.ok && bad.details.map((d) => [d.field, d.issue])).toEqual([
      ['after', 'invalid_type'],
      ['limit', 'too_big'],
    ]);
  });
});

describe('HTTP-layer details', () => {
  it('share the vocabulary', () => {
    expect(invalidJsonDetail()).toEqual({ field: 'body', issue: 'invalid_json', message: expect.any(String) });
    expect(unsupportedContentTypeDetail()).toMatchObject({ field: 'body', issue: 'unsupported_content_type' });
  });
});

describe('idempotencyKeyProblem', () => {
  it('accepts an absent header and any 1-255 printable ASCII characters', () => {
    expect(idempotencyKeyProblem(undefined)).toBeNull();
    expect(idempotencyKeyProblem('a')).toBeNull();
    expect(idempotencyKeyProblem('order-42 retry #1 ~!@$%^&*()')).toBeNull();
    expect(idempotencyKeyProblem('k'.repeat(255))).toBeNull();
  });

  it.each([
    ['', 'too_small'],
    ['k'.repeat(256), 'too_big'],
    ['tab\there', 'invalid_type'],
    ['ümlaut', 'invalid_type'],
    ['line\nbreak', 'invalid_type'],
    ['del\x7F', 'invalid_type'],
  ])('refuses %j with %s on field Idempotency-Key', (value, issue) => {
    expect(idempotencyKeyProblem(value)).toEqual({ field: 'Idempotency-Key', issue, message: expect.any(String) });
  });
});
