// Pure rules of the idempotency area (no server needed); kept beside the store's tests.
import { describe, expect, it } from 'vitest';
import { idempotencyKeyProblem } from '../../../contracts/validation';
import { fingerprint, isStoredOutcome } from '../../../services/idempotency/idempotency';

/** The one check the HTTP layer applies to the header. */
const isValidIdempotencyKey = (key: string) => idempotencyKeyProblem(key) === null;

describe('idempotency fingerprint', () => {
  it('is a sha256 hex digest', () => {
    expect(fingerprint('/v1/company', { url: 'acme' })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores key order, at every depth', () => {
    expect(fingerprint('/v1/person', { url: 'x', max_age: 10, extra: { b: 1, a: [1, { d: 2, c: 3 }] } })).toBe(
      fingerprint('/v1/person', { extra: { a: [1, { c: 3, d: 2 }], b: 1 }, max_age: 10, url: 'x' }),
    );
  });

  it('changes with the endpoint, any value, array order or an added field', () => {
    const base = fingerprint('/v1/company', { url: 'acme', max_age: 10 });
    expect(fingerprint('/v1/domain', { url: 'acme', max_age: 10 })).not.toBe(base);
    expect(fingerprint('/v1/company', { url: 'Acme', max_age: 10 })).not.toBe(base);
    expect(fingerprint('/v1/company', { url: 'acme', max_age: '10' })).not.toBe(base);
    expect(fingerprint('/v1/company', { url: 'acme', max_age: 10, x: null })).not.toBe(base);
    expect(fingerprint('/v1/search', { q: [1, 2] })).not.toBe(fingerprint('/v1/search', { q: [2, 1] }));
  });

  it('cannot be fooled by moving text between endpoint and body', () => {
    expect(fingerprint('/v1/a', 'b')).not.toBe(fingerprint('/v1/', 'ab'));
  });

  it('treats equal JSON numbers as equal', () => {
    expect(fingerprint('/v1/company', { max_age: 1.0 })).toBe(fingerprint('/v1/company', { max_age: 1 }));
  });

  it('accepts a missing body', () => {
    expect(fingerprint('/v1/company', undefined)).not.toBe(fingerprint('/v1/company', null));
  });
});

describe('Idempotency-Key validity', () => {
  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(isValidIdempotencyKey('a')).toBe(true);
    expect(isValidIdempotencyKey('order-42 retry #1 ~!')).toBe(true);
    expect(isValidIdempotencyKey('k'.repeat(255))).toBe(true);
  });

  it('refuses empty, too long, control or non-ASCII keys', () => {
    expect(isValidIdempotencyKey('')).toBe(false);
    expect(isValidIdempotencyKey('k'.repeat(256))).toBe(false);
    expect(isValidIdempotencyKey('tab\there')).toBe(false);
    expect(isValidIdempotencyKey('del\x7f')).toBe(false);
    expect(isValidIdempotencyKey('clé')).toBe(false);
  });
});

describe('stored outcomes', () => {
  it('stores 200 and 404 only', () => {
    expect([200, 404].every(isStoredOutcome)).toBe(true);
    expect([400, 401, 402, 409, 422, 429, 500, 502, 503, 504].some(isStoredOutcome)).toBe(false);
  });
});
