import { describe, expect, it } from 'vitest';
import { isAdminAuthorization, readCredentials } from '../../../services/http/admission/credentials';

const KEY = `lk_live_${'a'.repeat(32)}`;
const OTHER = `lk_live_${'b'.repeat(32)}`;
const ADMIN = 'admin-token-of-some-length';

/** Node's raw header list: name, value, name, value... in the order and case received. */
const raw = (...pairs: Array<[string, string]>) => pairs.flat();

describe('reading the API key from the raw headers', () => {
  it('given no key header, then there are no credentials', () => {
    expect(readCredentials(raw(['Host', 'x'], ['Accept', '*/*']))).toEqual({ kind: 'none' });
  });

  it.each([
    ['Authorization: Bearer', raw(['Authorization', `Bearer ${KEY}`])],
    ['authorization in any case, bearer in any case', raw(['aUtHoRiZaTiOn', `bearer ${KEY}`])],
    ['X-Api-Key', raw(['X-Api-Key', KEY])],
    ['both headers with the same key', raw(['Authorization', `Bearer ${KEY}`], ['X-Api-Key', KEY])],
    ['two identical Authorization headers', raw(['Authorization', `Bearer ${KEY}`], ['Authorization', `Bearer ${KEY}`])],
    ['two identical X-Api-Key headers', raw(['X-Api-Key', KEY], ['x-api-key', KEY])],
  ])('given %s, then the key is read', (_what, headers) => {
    expect(readCredentials(headers)).toEqual({ kind: 'key', key: KEY });
  });

  it.each([
    ['two Authorization headers with different keys (Node keeps only the first in req.headers)', raw(['Authorization', `Bearer ${KEY}`], ['Authorization', `Bearer ${OTHER}`])],
    ['two X-Api-Key headers with different keys', raw(['X-Api-Key', KEY], ['X-Api-Key', OTHER])],
    ['Authorization and X-Api-Key with different keys', raw(['Authorization', `Bearer ${KEY}`], ['X-Api-Key', OTHER])],
    ['a second Authorization that is not a bearer', raw(['Authorization', `Bearer ${KEY}`], ['Authorization', 'Basic dXNlcjpwYXNz'])],
    ['a key of the wrong shape', raw(['Authorization', 'Bearer lk_live_short'])],
    ['an empty X-Api-Key beside a bearer', raw(['Authorization', `Bearer ${KEY}`], ['X-Api-Key', ''])],
    ['a scheme other than Bearer', raw(['Authorization', `Token ${KEY}`])],
  ])('given %s, then the credentials are malformed', (_what, headers) => {
    expect(readCredentials(headers)).toEqual({ kind: 'malformed' });
  });
});

describe('the admin token check', () => {
  it('given Bearer <ADMIN_TOKEN>, then it passes', () => {
    expect(isAdminAuthorization(raw(['Authorization', `Bearer ${ADMIN}`]), ADMIN)).toBe(true);
  });

  it.each([
    ['no Authorization', raw(['Host', 'x'])],
    ['another token', raw(['Authorization', `Bearer ${ADMIN}x`])],
    ['the token without the Bearer scheme', raw(['Authorization', ADMIN])],
    ['the token first and another Authorization after it', raw(['Authorization', `Bearer ${ADMIN}`], ['Authorization', 'Bearer other'])],
    ['the token in X-Api-Key', raw(['X-Api-Key', ADMIN])],
  ])('given %s, then it fails', (_what, headers) => {
    expect(isAdminAuthorization(headers, ADMIN)).toBe(false);
  });
});
