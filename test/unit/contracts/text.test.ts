import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  AdminPathParams,
  CompanyCacheRequest,
  CompanyLookupRequest,
  CreditsGrantRequest,
  DomainCacheRequest,
  DomainLookupRequest,
  KeyCreateRequest,
  LedgerQuery,
  PersonCacheRequest,
  PersonLookupRequest,
  SearchRequest,
  UsageQuery,
  WorkspaceCreateRequest,
} from '../../../contracts/http';
import { cutKeepingPairs, hasControlCharacter, hasLoneSurrogate, isBlank, isStorableText, toStorableExcerpt, toStorableText, toWellFormed } from '../../../contracts/text';
import { parseValue } from '../../../contracts/validation';
import { anyString } from '../../support/unicode-arbitraries';

describe('isStorableText', () => {
  it.each([
    ['plain text', 'acme robotics'],
    ['letters outside the BMP (a surrogate pair)', 'rocket \u{1F680} 𝔸'],
    ['other control characters (a line judges those)', 'a\u0001b\tc\n'],
    ['the empty string', ''],
    ['U+FFFD itself', '\uFFFD'],
  ])('given %s, then it is storable', (_, value) => {
    expect(isStorableText(value)).toBe(true);
  });

  it.each([
    ['U+0000 inside', 'x\u0000y'],
    ['U+0000 at the end', 'acmerobotics.com\u0000'],
    ['a lone high surrogate at the end', 'acme\uD800'],
    ['a lone low surrogate', '\uDC00acme'],
    ['two high surrogates', '\uD83D\uD83D'],
    ['a pair in the wrong order', '\uDE80\uD83D'],
  ])('given %s, then it is not storable', (_, value) => {
    expect(isStorableText(value)).toBe(false);
  });

  it('given any string, then it is storable exactly when it survives UTF-8 unchanged and has no U+0000', () => {
    fc.assert(
      fc.property(anyString(40), (value) => {
        const survivesUtf8 = Buffer.from(value, 'utf8').toString('utf8') === value;
        expect(isStorableText(value)).toBe(survivesUtf8 && !value.includes('\u0000'));
      }),
      { numRuns: 500 },
    );
  });
});

describe('toWellFormed', () => {
  it('given lone surrogates, then each becomes U+FFFD and pairs stay', () => {
    expect(toWellFormed('a\uD800b\uDC00c\u{1F680}')).toBe('a\uFFFDb\uFFFDc\u{1F680}');
  });

  it('given any string, then the result can be %-encoded and has no lone surrogate', () => {
    fc.assert(
      fc.property(anyString(40), (value) => {
        const wellFormed = toWellFormed(value);
        expect(hasLoneSurrogate(wellFormed)).toBe(false);
        expect(() => encodeURIComponent(wellFormed)).not.toThrow();
        if (!hasLoneSurrogate(value)) expect(wellFormed).toBe(value);
      }),
    );
  });
});

describe('toStorableExcerpt (a peer\'s error text, cut for a column)', () => {
  it('given a pair across the cut, then the cut falls before it, not between its halves', () => {
    expect(toStorableExcerpt(`${'a'.repeat(499)}\u{1F600}b`, 500)).toBe('a'.repeat(499));
    expect(cutKeepingPairs(`${'a'.repeat(498)}\u{1F600}b`, 500)).toBe(`${'a'.repeat(498)}\u{1F600}`);
  });

  it('given U+0000 or a lone surrogate, then each becomes U+FFFD', () => {
    expect(toStorableExcerpt('451 no\u0000pe \uD800!', 500)).toBe('451 no\uFFFDpe \uFFFD!');
  });

  it('given any string and length, then the result is storable, at most that long, and the start of the cleaned text', () => {
    fc.assert(
      fc.property(anyString(40), fc.integer({ min: 1, max: 45 }), (value, max) => {
        const excerpt = toStorableExcerpt(value, max);
        expect(isStorableText(excerpt)).toBe(true);
        expect(excerpt.length).toBeLessThanOrEqual(max);
        expect(excerpt.length).toBeGreaterThanOrEqual(Math.min(value.length, max) - 1);
        expect(toStorableText(value).startsWith(excerpt)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('hasControlCharacter and isBlank', () => {
  it('sees C0, DEL and C1 controls, tab and newline included, and nothing else', () => {
    for (const c of ['\u0000', '\u0001', '\t', '\n', '\r', '\u001F', '\u007F', '\u0080', '\u009F']) expect(hasControlCharacter(`a${c}b`)).toBe(true);
    for (const text of ['acme robotics', 'José', '\u200B', 'a b']) expect(hasControlCharacter(text)).toBe(false);
  });

  it('takes whitespace only, of any kind, as blank', () => {
    for (const text of ['', ' ', '   ', '\t\n', '\u00A0', '\u3000', '\uFEFF']) expect(isBlank(text)).toBe(true);
    for (const text of ['a', ' a ', '\u0000', '\u200B']) expect(isBlank(text)).toBe(false);
  });
});

/** Every string a client sends in a body, path or query, by schema and field. */
const STRING_FIELDS: Array<[string, z.ZodType, Record<string, unknown>, string, 'line' | 'reference' | 'id']> = [
  ['company lookup', CompanyLookupRequest, {}, 'url', 'reference'],
  ['domain lookup', DomainLookupRequest, {}, 'domain', 'reference'],
  ['person lookup', PersonLookupRequest, {}, 'url', 'reference'],
  ['search', SearchRequest, {}, 'query', 'line'],
  ['company cache', CompanyCacheRequest, {}, 'url', 'reference'],
  ['domain cache', DomainCacheRequest, {}, 'domain', 'reference'],
  ['person cache', PersonCacheRequest, {}, 'url', 'reference'],
  ['workspace create', WorkspaceCreateRequest, {}, 'name', 'line'],
  ['key create', KeyCreateRequest, {}, 'name', 'line'],
  ['credits grant', CreditsGrantRequest, { amount: 1 }, 'reason', 'line'],
  ['admin path', AdminPathParams, {}, 'id', 'id'],
  ['usage query', UsageQuery, {}, 'key_id', 'id'],
  ['ledger query', LedgerQuery, {}, 'request_id', 'id'],
];

describe.each(STRING_FIELDS)('the %s schema, field %s', (_, schema, rest, field, kind) => {
  const parse = (value: unknown) => parseValue(schema, { ...rest, [field]: value });

  it('given U+0000 or a lone surrogate, then invalid_type naming the field, with the rule as the message', () => {
    for (const value of ['x\u0000y', 'acme\uD800', '\uDFFFacme']) {
      expect(parse(value)).toEqual({
        ok: false,
        details: [{ field, issue: 'invalid_type', message: `\`${field}\` must not contain U+0000 or unpaired surrogates.` }],
      });
    }
  });

  it('given whitespace only, then too_small unless it is an id', () => {
    const result = parse('   ');
    if (kind === 'id') expect(result.ok).toBe(true);
    else expect(result).toEqual({ ok: false, details: [{ field, issue: 'too_small', message: `\`${field}\` must not be blank.` }] });
  });

  it('given a control character, then invalid_type in a line of text, and the parser decides for a reference', () => {
    const result = parse('acme\u0001robotics');
    if (kind === 'line') expect(result).toEqual({ ok: false, details: [expect.objectContaining({ field, issue: 'invalid_type' })] });
    else expect(result.ok).toBe(true);
  });

  it('given any string, then it passes only when it is storable, not blank and (in a line) free of controls', () => {
    fc.assert(
      fc.property(anyString(), (value) => {
        const result = parse(value);
        const acceptable =
          value.length > 0 && isStorableText(value) && (kind === 'id' || !isBlank(value)) && (kind !== 'line' || !hasControlCharacter(value));
        expect(result.ok).toBe(acceptable);
        if (!result.ok) for (const detail of result.details) expect(detail.field).toBe(field);
      }),
      { numRuns: 300 },
    );
  });
});

describe('precedence on one string', () => {
  it('given an empty string, then only "must not be empty" is said', () => {
    expect(parseValue(SearchRequest, { query: '' })).toEqual({
      ok: false,
      details: [{ field: 'query', issue: 'too_small', message: '`query` must not be empty.' }],
    });
  });

  it('given a string both too long and not storable, then both are said', () => {
    const result = parseValue(SearchRequest, { query: `${'x'.repeat(300)}\u0000` });
    expect(!result.ok && result.details.map((d) => d.issue)).toEqual(['too_big', 'invalid_type']);
  });

  it('given U+0000 in a line, then the storage rule speaks, not the control-character rule', () => {
    const result = parseValue(WorkspaceCreateRequest, { name: 'a\u0000b' });
    expect(!result.ok && result.details).toEqual([
      { field: 'name', issue: 'invalid_type', message: '`name` must not contain U+0000 or unpaired surrogates.' },
    ]);
  });
});
