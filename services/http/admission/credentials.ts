import { timingSafeEqual } from 'node:crypto';
import { API_KEY_PATTERN } from '../../keys/key-material';

export type Credentials = { kind: 'none' } | { kind: 'malformed' } | { kind: 'key'; key: string };

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Reads the key from `Authorization: Bearer` or `X-Api-Key`, from the raw header list: Node keeps
 * only the first of two Authorization headers in `req.headers`, so a second key would go unseen.
 * Every key sent must be the same one; two different keys, or anything not shaped like a key, is
 * "malformed".
 */
export function readCredentials(rawHeaders: readonly string[]): Credentials {
  const authorizations = headerValues(rawHeaders, 'authorization');
  const apiKeys = headerValues(rawHeaders, 'x-api-key').map((v) => v.trim());
  if (authorizations.length === 0 && apiKeys.length === 0) return { kind: 'none' };
  const keys = new Set(apiKeys);
  for (const authorization of authorizations) {
    const m = BEARER.exec(authorization);
    if (!m) return { kind: 'malformed' };
    keys.add(m[1]!);
  }
  const [key] = keys;
  return keys.size === 1 && API_KEY_PATTERN.test(key!) ? { kind: 'key', key: key! } : { kind: 'malformed' };
}

/** The admin token check: every Authorization header sent must be `Bearer <ADMIN_TOKEN>`. */
export function isAdminAuthorization(rawHeaders: readonly string[], adminToken: string): boolean {
  const authorizations = headerValues(rawHeaders, 'authorization');
  if (authorizations.length === 0) return false;
  const expected = Buffer.from(adminToken);
  return authorizations.every((authorization) => {
    const given = Buffer.from(BEARER.exec(authorization)?.[1] ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** Every value of one header, in order, from Node's `[name, value, name, value, ...]` list. */
function headerValues(rawHeaders: readonly string[], lowerCaseName: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === lowerCaseName) values.push(rawHeaders[i + 1]!);
  }
  return values;
}
