import { z } from 'zod';
import type { DetailIssue } from './errors';

/**
 * The one rule for request text (guide: "Every string that reaches PostgreSQL is checked first").
 *
 * - Storable: no U+0000 (PostgreSQL refuses it in text and jsonb) and no unpaired surrogate
 *   (it has no UTF-8 form: encodeURIComponent throws, jsonb refuses the escape, a text column
 *   would silently get U+FFFD). Every request string must be storable; otherwise 400
 *   `invalid_request` naming the field, before anything is charged or appended.
 * - Not blank: a string of only whitespace is as empty as "" (docs/api.md "Request fields": an empty string is a
 *   400), so it is `too_small` too.
 * - Single-line text (names, search queries, a grant's reason) also holds no control character
 *   (Unicode category Cc: C0 including tab and newline, DEL, C1). References (`url`, `domain`)
 *   may carry them to their own parser, which refuses them with the endpoint's own code
 *   (`invalid_domain`, ...): a storable string that is not a reference is the parser's to judge.
 */

const NUL = '\u0000';
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
const CONTROL_CHARACTER = /\p{Cc}/u;

export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

/** True when PostgreSQL can store the string and it has a UTF-8 encoding. */
export function isStorableText(value: string): boolean {
  return !value.includes(NUL) && !hasLoneSurrogate(value);
}

export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/** Whitespace only (JavaScript's `trim`, which the sandbox network applies as well). */
export function isBlank(value: string): boolean {
  return value.trim() === '';
}

/**
 * Unpaired surrogates replaced by U+FFFD, as the WHATWG URL encoder does. For encoders that must
 * not throw on text that was never meant to reach them (the request schemas refuse such text).
 */
export function toWellFormed(value: string): string {
  return value.replace(LONE_SURROGATES, '\uFFFD');
}

/**
 * Text the service itself writes (an error message, a host name), made storable: U+0000 and
 * unpaired surrogates replaced by U+FFFD. Request text is refused instead (`text()` below).
 */
export function toStorableText(value: string): string {
  return toWellFormed(value).replaceAll(NUL, '\uFFFD');
}

/** The start of a text, at most `max` UTF-16 code units, never half a surrogate pair. */
export function cutKeepingPairs(value: string, max: number): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  const splitsPair = last >= 0xd800 && last <= 0xdbff;
  return value.slice(0, splitsPair ? max - 1 : max);
}

/**
 * At most `max` code units of text a peer wrote (an SMTP server's refusal, a socket error), made
 * storable: cut never between a pair's halves, then toStorableText. A plain `slice` may leave half
 * a pair, which PostgreSQL cannot store.
 */
export function toStorableExcerpt(value: string, max: number): string {
  return toStorableText(cutKeepingPairs(value, max));
}

export const NOT_STORABLE_TEXT = 'must not contain U+0000 or unpaired surrogates.';
export const HAS_CONTROL_CHARACTER = 'must not contain control characters (U+0000–U+001F, U+007F–U+009F).';
export const BLANK_TEXT = 'must not be blank.';

/**
 * A zod custom issue carries the `details` issue and the sentence after the field's name;
 * contracts/validation.ts turns it into `{field, issue, message: "`field` <says>"}`.
 */
export interface TextIssueParams {
  detailIssue: DetailIssue;
  says: string;
}

export function textIssueParams(params: unknown): TextIssueParams | null {
  const p = params as Partial<TextIssueParams> | undefined;
  return typeof p?.detailIssue === 'string' && typeof p.says === 'string' ? { detailIssue: p.detailIssue, says: p.says } : null;
}

export interface TextOptions {
  /** At most this many UTF-16 code units (JSON's and zod's notion of length). */
  max: number;
  /** `line`: names, queries, notes; `reference`: handed to a reference parser; `id`: looked up as is. */
  kind: 'line' | 'reference' | 'id';
}

/**
 * The string schema of every request body field and admin path or query parameter: at least one
 * character, at most `max`, storable; not blank unless it is an id; no control character in a line.
 */
export function text({ max, kind }: TextOptions) {
  return z
    .string()
    .min(1)
    .max(max)
    .superRefine((value, ctx) => {
      const issue = (detailIssue: DetailIssue, says: string) =>
        ctx.addIssue({ code: 'custom', message: says, params: { detailIssue, says } satisfies TextIssueParams, input: value });
      if (!isStorableText(value)) issue('invalid_type', NOT_STORABLE_TEXT);
      else if (kind === 'line' && hasControlCharacter(value)) issue('invalid_type', HAS_CONTROL_CHARACTER);
      if (kind !== 'id' && value.length > 0 && isBlank(value)) issue('too_small', BLANK_TEXT);
    });
}
