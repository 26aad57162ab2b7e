import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, contentHash } from '../../../contracts/content-hash';

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
