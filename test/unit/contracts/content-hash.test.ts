import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { z } from 'zod';
import { canonicalJson, contentHash } from '../../../contracts/content-hash';
import { EVENT_SCHEMAS, type EventType } from '../../../contracts/events';
import { anyString } from '../../support/unicode-arbitraries';

describe('contentHash', () => {
  it('hashes the RFC 8785 canonical form: a known vector', () => {
    // Canonical text {"a":"x","b":1}; its SHA-256 computed independently with `printf | sha256sum`.
    expect(contentHash({ b: 1, a: 'x' })).toBe('sha256:cdab067e9f3beb32d1252cfd63e492592fecbf591b0d08cadb24bb17f3864246');
  });

  it('canonicalises key order of nested objects, numbers and non-ASCII text per RFC 8785', () => {
    const data = { z: { b: 2, a: 1 }, 'é': 'ü', n: 1e21, m: 0.000001, k: -0 };
    expect(canonicalJson(data)).toBe('{"k":0,"m":0.000001,"n":1e+21,"z":{"a":1,"b":2},"é":"ü"}');
    expect(contentHash(data)).toBe('sha256:d15e4a24e1dc4c09079345711bc9d7083732487efcb27065fb9cee25bf37ade0');
  });

  it('is shaped sha256:<64 hex>', () => {
    expect(contentHash([1, 2, 3])).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('does not depend on key order, and changes when a value changes', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        fc.pre(!Object.hasOwn(obj, '__changed'));
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(contentHash(reversed)).toBe(contentHash(obj));
        expect(contentHash({ ...obj, __changed: true })).not.toBe(contentHash(obj));
      }),
    );
  });

  it('refuses a value JSON cannot hold', () => {
    expect(() => contentHash(undefined)).toThrow(TypeError);
  });
});

/** The subset of JSON Schema that the event contract's zod schemas produce. */
interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
}

/** Values of a schema: any string where a string goes (lone surrogates, controls), any number where a number goes. */
function valuesOf(schema: Schema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(valuesOf));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type) => valuesOf({ ...schema, type })));
  switch (schema.type) {
    case 'string':
      return anyString();
    case 'integer':
      return fc.oneof(fc.integer(), fc.maxSafeInteger());
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valuesOf(schema.items ?? {}), { maxLength: 5 });
    case 'object': {
      const fields = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, field]) => [name, valuesOf(field)]));
      const known = fc.record(fields, { requiredKeys: schema.required ?? [] });
      if (typeof schema.additionalProperties !== 'object') return known;
      return fc.tuple(known, fc.dictionary(anyString(8), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })).map(([k, extra]) => ({ ...extra, ...k }));
    }
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

const asReadFromTheLog = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

/** The reference: `canonicalize`, which answers undefined where canonicalJson throws. */
const reference = (value: unknown) => {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError('not representable as JSON');
  return canonical;
};

/** The text, or the kind of error thrown, to compare the two implementations. */
const outcome = (serialise: (value: unknown) => string, value: unknown) => {
  try {
    return { text: serialise(value) };
  } catch (err) {
    return { threw: (err as Error).name };
  }
};

describe('canonicalJson', () => {
  it.each(Object.keys(EVENT_SCHEMAS) as EventType[])('given %s data as the log returns it, then it is the text canonicalize gives, alone and wrapped as the ledger chain hashes it', (type) => {
    const schema = z.toJSONSchema(EVENT_SCHEMAS[type]) as Schema;
    fc.assert(
      fc.property(valuesOf(schema).map(asReadFromTheLog), fc.option(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })), (data, prevHash) => {
        expect(canonicalJson(data)).toBe(canonicalize(data));
        const chained = { event: { type, stream: 'workspace-ws_1', data }, prev_hash: prevHash };
        expect(canonicalJson(chained)).toBe(canonicalize(chained));
      }),
      { numRuns: 300 },
    );
  });

  it('given any JSON value with any strings, then it is the text canonicalize gives', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), fc.dictionary(anyString(), anyString()), (value, strings) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
        expect(canonicalJson(strings)).toBe(canonicalize(strings));
      }),
      { numRuns: 500 },
    );
  });

  it('given any JavaScript value, then it gives what canonicalize gives, or both refuse it', () => {
    const anything = fc.anything({
      withBoxedValues: true, withMap: true, withSet: true, withObjectString: true, withNullPrototype: true,
      withBigInt: true, withDate: true, withTypedArray: true, withSparseArray: true, withUnicodeString: true,
    });
    fc.assert(
      fc.property(anything, (value) => {
        expect(outcome(canonicalJson, value)).toEqual(outcome(reference, value));
      }),
      { numRuns: 500 },
    );
  });

  it('given keys JS would not keep in insertion order, then they still come in code-unit order', () => {
    const examples: Array<[string, string]> = [
      ['{"b":1,"10":2,"9":3}', '{"10":2,"9":3,"b":1}'],
      ['{"a":[{"2":0,"10":1}]}', '{"a":[{"10":1,"2":0}]}'],
      ['{"b":1,"__proto__":{"x":1}}', '{"__proto__":{"x":1},"b":1}'],
      ['{"\\uffff":1,"\\ud83d\\ude00":2,"\\ud800":3}', '{"\\ud800":3,"😀":2,"￿":1}'],
    ];
    for (const [text, canonical] of examples) {
      const value = JSON.parse(text);
      expect(canonicalJson(value)).toBe(canonical);
      expect(canonicalJson(value)).toBe(canonicalize(value));
    }
  });

  it('given values JSON cannot hold, then it throws as canonicalize does', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow();
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow();
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    expect(canonicalJson({ a: undefined, b: [undefined], c: new Date(0) })).toBe(canonicalize({ a: undefined, b: [undefined], c: new Date(0) }));
  });
});
