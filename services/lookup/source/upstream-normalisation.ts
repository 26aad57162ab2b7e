import { PERSON_ABOUT_MAX_CHARS } from '../../../contracts/profiles';
import { cutKeepingPairs, toWellFormed } from '../../../contracts/text';

/**
 * The one rule for what the upstream sends (docs/api.md, "Upstream data: cleaned, not refused";
 * docs/adr/0009). The upstream is a scraper's output, not a trusted peer: what can be cleaned is cleaned,
 * and only a body that still breaks the envelope schema afterwards is `parse_error`.
 *
 * Applied to a 200 body as parsed JSON, before the schema and so before anything is hashed,
 * stored or served, for every operation alike:
 * - every string: unpaired surrogates become U+FFFD (PostgreSQL cannot store them and they have no
 *   UTF-8 form; replacing rather than dropping keeps a trace that something unreadable was there,
 *   as any UTF-8 decoder does with bytes it cannot read), then control characters (C0, DEL, C1;
 *   U+0000 among them) are removed; the long texts below keep `\n` and `\t`;
 * - a person's `about` is cut to its first 300 characters (UTF-16 code units, so it is at most 300
 *   in any counting), never between the two halves of a surrogate pair;
 * - a person's employers: current ones first, otherwise in the upstream's order.
 *
 * Pure: takes a value, returns a new one; nothing passed in is changed.
 */

/** Texts that may span lines: they keep line feeds and tabs. */
export const MULTILINE_FIELDS: ReadonlySet<string> = new Set(['description', 'about', 'snippet']);

const CONTROL_CHARACTERS = /\p{Cc}/gu;
const CONTROL_CHARACTERS_BUT_LF_AND_TAB = /(?![\n\t])\p{Cc}/gu;

/** One upstream string made storable and free of control characters. */
export function cleanUpstreamText(value: string, multiline: boolean): string {
  return toWellFormed(value).replace(multiline ? CONTROL_CHARACTERS_BUT_LF_AND_TAB : CONTROL_CHARACTERS, '');
}

/**
 * Every string value of a JSON value cleaned; the key a string sits under decides whether it is
 * multiline. Keys stay as sent: the strict envelope schemas refuse any key they do not know.
 */
export function cleanUpstreamJson(value: unknown, key?: string): unknown {
  if (typeof value === 'string') return cleanUpstreamText(value, key !== undefined && MULTILINE_FIELDS.has(key));
  if (Array.isArray(value)) return value.map((item) => cleanUpstreamJson(item, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cleanUpstreamJson(v, k)]));
  }
  return value;
}

/** The start of a text, at most `max` UTF-16 code units, never half a surrogate pair. */
export function cutText(value: string, max = PERSON_ABOUT_MAX_CHARS): string {
  return cutKeepingPairs(value, max);
}

/** Current positions first; the order among current ones and among past ones is the upstream's. */
export function currentEmployersFirst<T>(employers: readonly T[]): T[] {
  const isCurrent = (e: T) => isRecord(e) && e.is_current === true;
  return [...employers.filter(isCurrent), ...employers.filter((e) => !isCurrent(e))];
}

/** A company envelope (`{company, aliases}`): its strings cleaned. */
export function normaliseCompanyEnvelope(body: unknown): unknown {
  return cleanUpstreamJson(body);
}

/** A person envelope (`{person}`): strings cleaned, `about` cut, current employers first. */
export function normalisePersonEnvelope(body: unknown): unknown {
  const cleaned = cleanUpstreamJson(body);
  if (!isRecord(cleaned) || !isRecord(cleaned.person)) return cleaned;
  const { about, employers } = cleaned.person;
  const person = {
    ...cleaned.person,
    ...(typeof about === 'string' ? { about: cutText(about) } : {}),
    ...(Array.isArray(employers) ? { employers: currentEmployersFirst(employers) } : {}),
  };
  return { ...cleaned, person };
}

/** A search envelope (`{results}`): its strings cleaned. */
export function normaliseSearchEnvelope(body: unknown): unknown {
  return cleanUpstreamJson(body);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
