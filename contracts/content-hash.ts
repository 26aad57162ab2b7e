import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * `meta.content_hash`: `sha256:` + hex SHA-256 of the RFC 8785 (JCS) canonical JSON of `data`.
 * Canonical JSON makes the hash independent of key order, so an unchanged profile keeps its hash.
 */
export function contentHash(data: unknown): string {
  const canonical = canonicalize(data);
  // canonicalize returns undefined only for values JSON cannot hold at top level (undefined, functions).
  if (canonical === undefined) throw new TypeError('contentHash: data is not representable as JSON');
  return `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

/**
 * The same value with its object keys in RFC 8785 order, so that serialising it gives the very
 * text `content_hash` covers. Profiles are put in this order once, where they enter the service
 * (live from the source, or read from the cache, whose jsonb reorders keys), not per answer.
 */
export function inCanonicalOrder<T>(value: T): T {
  return JSON.parse(canonicalJson(value)) as T;
}

/** The RFC 8785 canonical JSON text itself, for callers that compare bodies canonically. */
export function canonicalJson(value: unknown): string {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError('canonicalJson: value is not representable as JSON');
  return canonical;
}
