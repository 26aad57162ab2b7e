import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasLoneSurrogate, isStorableText } from '../../../contracts/text';
import {
  cleanUpstreamJson,
  cleanUpstreamText,
  currentEmployersFirst,
  cutText,
  normaliseCompanyEnvelope,
  normalisePersonEnvelope,
  normaliseSearchEnvelope,
} from '../../../services/lookup/source/upstream-normalisation';
import { anyString } from '../../support/unicode-arbitraries';

const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_TAB_AND_LF = /(?![\n\t])\p{Cc}/u;

describe('cleanUpstreamText', () => {
  it('given U+0000 and other C0, DEL and C1 characters in a single-line text, when cleaned, then they are removed', () => {
    expect(cleanUpstreamText('Ac\u0000me\u0001 \u007FRo\u0085bo\u009Ftics\u001F', false)).toBe('Acme Robotics');
  });

  it('given tabs, line feeds and carriage returns in a single-line text, when cleaned, then all are removed', () => {
    expect(cleanUpstreamText('a\tb\nc\r\nd', false)).toBe('abcd');
  });

  it('given a multiline text, when cleaned, then line feeds and tabs stay and a carriage return goes', () => {
    expect(cleanUpstreamText('one\r\n\ttwo\u0000\u000B', true)).toBe('one\n\ttwo');
  });

  it('given unpaired surrogates, when cleaned, then each becomes U+FFFD and pairs are kept', () => {
    expect(cleanUpstreamText('a\uD800b\uDC00c😀', false)).toBe('a\uFFFDb\uFFFDc😀');
  });

  it('given characters that are not controls (zero-width, bidi, U+2028, U+FFFD), when cleaned, then they stay', () => {
    const kept = '\u200B\u200D\u202E\u2028\uFEFF\uFFFD\u00A0';
    expect(cleanUpstreamText(kept, false)).toBe(kept);
  });

  it('given any string, when cleaned, then the result is storable, holds no control character, and cleaning it again changes nothing', () => {
    fc.assert(
      fc.property(anyString(60), fc.boolean(), (text, multiline) => {
        const cleaned = cleanUpstreamText(text, multiline);
        expect(isStorableText(cleaned)).toBe(true);
        expect((multiline ? CONTROL_BUT_TAB_AND_LF : CONTROL).test(cleaned)).toBe(false);
        expect(cleanUpstreamText(cleaned, multiline)).toBe(cleaned);
      }),
    );
  });
});

describe('cleanUpstreamJson', () => {
  it('given nested objects and arrays, when cleaned, then every string value is cleaned and other values are kept', () => {
    const given = { a: 'x\u0000', n: 1, b: null, t: true, list: ['y\u0001', { about: 'p\nq\u0000' }], description: 'l1\nl2\t', snippet: 's\n' };
    expect(cleanUpstreamJson(given)).toEqual({ a: 'x', n: 1, b: null, t: true, list: ['y', { about: 'p\nq' }], description: 'l1\nl2\t', snippet: 's\n' });
  });

  it('given an object, when cleaned, then the object passed in is left as it was', () => {
    const given = { name: 'a\u0000' };
    cleanUpstreamJson(given);
    expect(given).toEqual({ name: 'a\u0000' });
  });

  it('given a key holding a control character, when cleaned, then the key stays for the strict schema to refuse', () => {
    expect(cleanUpstreamJson({ 'na\u0000me': 'x' })).toEqual({ 'na\u0000me': 'x' });
  });
});

describe('cutText', () => {
  it('given at most 300 characters, when cut, then the text is kept whole', () => {
    expect(cutText('a'.repeat(300))).toBe('a'.repeat(300));
    expect(cutText('')).toBe('');
  });

  it('given 301 characters, when cut, then the first 300 are kept', () => {
    expect(cutText(`${'a'.repeat(300)}b`)).toBe('a'.repeat(300));
  });

  it('given a surrogate pair across the 300th character, when cut, then the cut comes before the pair', () => {
    expect(cutText(`${'a'.repeat(299)}😀b`)).toBe('a'.repeat(299));
  });

  it('given a surrogate pair ending at the 300th character, when cut, then the pair is kept', () => {
    expect(cutText(`${'a'.repeat(298)}😀b`)).toBe(`${'a'.repeat(298)}😀`);
  });

  it('given any well-formed text, when cut, then it is a well-formed prefix of at most 300 units', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
        const cut = cutText(text);
        expect(cut.length).toBeLessThanOrEqual(300);
        expect(text.startsWith(cut)).toBe(true);
        expect(hasLoneSurrogate(cut)).toBe(false);
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(text.length, 299));
      }),
    );
  });
});

describe('currentEmployersFirst', () => {
  const e = (name: string, is_current: boolean) => ({ name, is_current });

  it('given past positions before current ones, when ordered, then current ones come first, each group in its given order', () => {
    expect(currentEmployersFirst([e('p1', false), e('c1', true), e('p2', false), e('c2', true)]).map((x) => x.name)).toEqual(['c1', 'c2', 'p1', 'p2']);
  });

  it('given employers already in order, when ordered, then nothing moves', () => {
    const given = [e('c1', true), e('p1', false)];
    expect(currentEmployersFirst(given)).toEqual(given);
  });

  it('given entries that are not positions, when ordered, then they count as past (the schema refuses them afterwards)', () => {
    expect(currentEmployersFirst([null, 'x', e('c', true), { is_current: 'yes' }])).toEqual([e('c', true), null, 'x', { is_current: 'yes' }]);
  });

  it('given a list, when ordered, then the list passed in is left as it was', () => {
    const given = [e('p', false), e('c', true)];
    currentEmployersFirst(given);
    expect(given.map((x) => x.name)).toEqual(['p', 'c']);
  });
});

describe('the envelopes', () => {
  it('given a person envelope, when normalised, then strings are cleaned, about cut after cleaning, current employers first', () => {
    const given = {
      person: {
        full_name: 'Jane\u0000 Doe',
        about: `\u0000${'x'.repeat(305)}`,
        employers: [{ company_name: 'Old\u0001', is_current: false }, { company_name: 'New', is_current: true }],
      },
    };
    expect(normalisePersonEnvelope(given)).toEqual({
      person: {
        full_name: 'Jane Doe',
        about: 'x'.repeat(300),
        employers: [{ company_name: 'New', is_current: true }, { company_name: 'Old', is_current: false }],
      },
    });
  });

  it('given a person envelope without about or employers, or with them of the wrong type, when normalised, then they are left for the schema', () => {
    expect(normalisePersonEnvelope({ person: { about: null, employers: 'none' } })).toEqual({ person: { about: null, employers: 'none' } });
    expect(normalisePersonEnvelope({ person: 'x\u0000' })).toEqual({ person: 'x' });
    expect(normalisePersonEnvelope(null)).toBeNull();
  });

  it('given a company envelope, when normalised, then its description keeps line feeds and its aliases are cleaned', () => {
    expect(normaliseCompanyEnvelope({ company: { name: 'A\nB', description: 'A\nB' }, aliases: { slugs: ['acme\u0000'] } })).toEqual({
      company: { name: 'AB', description: 'A\nB' },
      aliases: { slugs: ['acme'] },
    });
  });

  it('given a search envelope, when normalised, then titles are single-line and snippets keep line feeds', () => {
    expect(normaliseSearchEnvelope({ results: [{ title: 'a\nb', snippet: 'a\nb\u0000' }] })).toEqual({ results: [{ title: 'ab', snippet: 'a\nb' }] });
  });
});
