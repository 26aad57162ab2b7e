import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * `meta.content_hash`: `sha256:` + hex SHA-256 of the RFC 8785 (JCS) canonical JSON of `data`.
 * Canonical JSON makes the hash independent of key order, so an unchanged profile keeps its hash.
 */
export function contentHash(data: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(data), 'utf8').digest('hex')}`;
}

/**
 * The same value with its object keys in RFC 8785 order, so that serialising it gives the very
 * text `content_hash` covers. Profiles are put in this order once, where they enter the service
 * (live from the source, or read from the cache, whose jsonb reorders keys), not per answer.
 */
export function inCanonicalOrder<T>(value: T): T {
  return JSON.parse(canonicalJson(value)) as T;
}

/**
 * The RFC 8785 (JCS) canonical JSON text: what `canonicalize` gives, faster for JSON-shaped values.
 * Throws a TypeError for a value JSON cannot hold at top level (undefined, a function).
 *
 * Plain objects, arrays, strings, finite numbers, booleans and null (every event's data as it reads
 * back from the log, every profile) are copied with each object's keys in UTF-16 code-unit order
 * and serialised by JSON.stringify, whose string and number forms are the ones RFC 8785 prescribes.
 * Anything else goes to `canonicalize`: keys that could be array indices (JS enumerates them first,
 * whatever their insertion order), `__proto__` (an assignment would set the prototype), non-finite
 * numbers, toJSON, functions, symbols, class instances. The unit tests check that the two agree on
 * every event type of the contract and on arbitrary values.
 */
export function canonicalJson(value: unknown): string {
  const sorted = sortedCopy(value);
  const canonical = sorted === UNSUPPORTED ? canonicalize(value) : JSON.stringify(sorted);
  if (canonical === undefined) throw new TypeError('canonicalJson: value is not representable as JSON');
  return canonical;
}

/** Marks a value the fast path leaves to the reference implementation. */
const UNSUPPORTED = Symbol('unsupported');

function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : UNSUPPORTED;
  if (typeof value !== 'object') return UNSUPPORTED;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = sortedCopy(value[i]);
      if (item === UNSUPPORTED) return UNSUPPORTED;
      out[i] = item;
    }
    return out;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return UNSUPPORTED;
  const source = value as Record<string, unknown>;
  const keys = keysInCodeUnitOrder(source);
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const first = key.charCodeAt(0);
    if ((first >= 48 && first <= 57) || key === '__proto__') return UNSUPPORTED;
    const field = source[key];
    if (field === undefined) continue; // dropped, as JSON drops it
    const copy = sortedCopy(field);
    if (copy === UNSUPPORTED) return UNSUPPORTED;
    out[key] = copy;
  }
  return out;
}

/** Below this many keys, an insertion sort beats Array#sort, whose set-up costs more than the sorting. */
const FEW_KEYS = 16;

/** The object's own enumerable keys by UTF-16 code units (`<` on strings: Array#sort's order without a comparator). */
function keysInCodeUnitOrder(object: object): string[] {
  const keys = Object.keys(object);
  if (keys.length > FEW_KEYS) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}
