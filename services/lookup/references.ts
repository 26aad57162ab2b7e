import { parse as parseHost } from 'tldts';

/**
 * Pure parsing of the three kinds of lookup input (docs/api.md "Request fields").
 * Anything these functions reject is answered with the endpoint's own 400 code
 * (`invalid_company_reference`, `invalid_domain`, `invalid_person_reference`).
 */

export type CompanyReference = { kind: 'slug'; slug: string } | { kind: 'id'; id: string };
export type PersonReference =
  | { kind: 'url'; publicIdentifier: string }
  | { kind: 'name'; name: string; normalizedName: string };

export type CompanyReferenceResult = { ok: true; ref: CompanyReference } | { ok: false };
export type DomainResult = { ok: true; domain: string } | { ok: false };
export type PersonReferenceResult = { ok: true; ref: PersonReference } | { ok: false };

export const NETWORK_DOMAIN = 'linkedin.com';
export const SLUG_MAX_CHARS = 100;
export const NAME_MAX_CHARS = 100;
export const PUBLIC_IDENTIFIER_MAX_CHARS = 100;

const FAIL = { ok: false } as const;

/**
 * Characters no reference holds, wherever they stand, raw or %-escaped: controls (Cc: URL
 * parsers silently drop tabs and newlines, and leading or trailing C0), invisible characters
 * (Cf and Default_Ignorable_Code_Point: zero-width space and joiners, bidi controls, BOM, soft
 * hyphen, variation selectors, which IDNA silently drops) and the backslash (WHATWG URL reads it
 * as `/`). Left in, they make a different string resolve to the same site or page unseen. Unpaired
 * surrogates (Cs) have no UTF-8 form; the request schemas refuse them first, as they do U+0000.
 */
const UNSEEN_OR_REMAPPED = /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\\]/u;

function hasUnseenOrRemapped(text: string): boolean {
  return UNSEEN_OR_REMAPPED.test(text);
}

// ---------- shared: URLs on the network's own hosts ----------

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const NETWORK_HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*linkedin\.com$/;

function isNetworkHost(host: string): boolean {
  return NETWORK_HOST.test(host.toLowerCase());
}

/** Input that must be read as a URL: it has a scheme, a path, or is the network's host itself. */
function looksLikeUrl(input: string): boolean {
  return SCHEME.test(input) || input.includes('/') || isNetworkHost(input);
}

/** Code-point length, so that a letter outside the BMP counts once. */
function charCount(text: string): number {
  return [...text].length;
}

function decodePercent(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * `[http(s)://][sub.]linkedin.com/<segments>[/][?query][#fragment]` → the decoded path segments
 * (trailing slash dropped), or null when the input is not such a URL.
 */
function networkPathSegments(input: string): string[] | null {
  if (/\s/.test(input)) return null;
  const match = /^(?:([a-z][a-z0-9+.-]*):\/\/)?([^/?#]*)([^?#]*)/i.exec(input);
  if (match === null) return null;
  const scheme = match[1]?.toLowerCase();
  const host = match[2]!;
  const path = match[3]!;
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') return null;
  if (!isNetworkHost(host)) return null;
  if (path === '') return [];
  const raw = path.split('/').slice(1);
  if (raw[raw.length - 1] === '') raw.pop();
  const segments: string[] = [];
  for (const segment of raw) {
    const decoded = decodePercent(segment);
    if (decoded === null || decoded === '' || /\s/.test(decoded) || hasUnseenOrRemapped(decoded)) return null;
    segments.push(decoded.normalize('NFC'));
  }
  return segments;
}

/** `<kind>/<ref>[/<subpage>]`: the ref segment when the path has that shape. */
function refAfter(segments: string[], kind: string): string | null {
  if (segments.length < 2 || segments.length > 3) return null;
  if (segments[0]!.toLowerCase() !== kind) return null;
  return segments[1]!;
}

// ---------- company ----------

const NUMERIC_ID = /^[0-9]{1,19}$/;
const SLUG = /^[\p{L}\p{M}0-9._-]+$/u;
const HAS_LETTER = /\p{L}/u;
const COMPANY_URN = /^urn:li:(?:company|organization|fsd_company):([0-9]{1,19})$/i;
/** `/company/<digits>`: the path of a company page given without its host. */
const COMPANY_ID_PATH = /^\/company\/([0-9]{1,19})\/?$/i;

/** Leading zeros carry no meaning: `0042` and `42` are the same company. */
function canonicalId(digits: string): string {
  return digits.replace(/^0+(?=[0-9])/, '');
}

function companyRefFromToken(token: string): CompanyReference | null {
  if (NUMERIC_ID.test(token)) return { kind: 'id', id: canonicalId(token) };
  const normalized = token.normalize('NFC');
  if (charCount(normalized) > SLUG_MAX_CHARS) return null;
  if (!SLUG.test(normalized) || !HAS_LETTER.test(normalized)) return null;
  return { kind: 'slug', slug: normalized.toLowerCase() };
}

export function parseCompanyReference(input: string): CompanyReferenceResult {
  if (hasUnseenOrRemapped(input)) return FAIL;
  const value = input.trim();
  if (value === '') return FAIL;

  const urn = COMPANY_URN.exec(value);
  if (urn !== null) return { ok: true, ref: { kind: 'id', id: canonicalId(urn[1]!) } };

  const idPath = COMPANY_ID_PATH.exec(value);
  if (idPath !== null) return { ok: true, ref: { kind: 'id', id: canonicalId(idPath[1]!) } };

  if (looksLikeUrl(value)) {
    const segments = networkPathSegments(value);
    if (segments === null) return FAIL;
    const token = refAfter(segments, 'company');
    if (token === null) return FAIL;
    const ref = companyRefFromToken(token);
    return ref === null ? FAIL : { ok: true, ref };
  }

  const decoded = decodePercent(value);
  if (decoded === null || hasUnseenOrRemapped(decoded)) return FAIL;
  const ref = companyRefFromToken(decoded);
  return ref === null ? FAIL : { ok: true, ref };
}

// ---------- domain ----------

/** Reserved names (RFC 2606 / RFC 6761 / mDNS) that are never a public website. */
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local']);
const MAX_HOSTNAME_CHARS = 253;

export function parseDomain(input: string): DomainResult {
  if (hasUnseenOrRemapped(input)) return FAIL;
  const value = input.trim();
  if (value === '' || /\s/.test(value)) return FAIL;
  // An e-mail address is not a website, and a URL with user info is not a plain site address.
  if (value.includes('@')) return FAIL;

  let rest = value;
  const scheme = SCHEME.exec(value);
  if (scheme !== null) {
    const name = scheme[1]!.toLowerCase();
    if (name !== 'http' && name !== 'https') return FAIL;
    rest = value.slice(scheme[0].length);
  }
  const authority = /^[^/?#]*/.exec(rest)![0];
  if (authority === '') return FAIL;
  // The URL parser %-decodes a host before IDNA: what it would decode is checked as well.
  const decodedAuthority = decodePercent(authority);
  if (decodedAuthority === null || hasUnseenOrRemapped(decodedAuthority)) return FAIL;

  // WHATWG URL lowercases, applies IDNA (punycode) and normalises IPv4 spellings such as 0x7f.1.
  let hostname: string;
  try {
    hostname = new URL(`http://${authority}`).hostname;
  } catch {
    return FAIL;
  }
  if (hostname.startsWith('[')) return FAIL; // IPv6 literal
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  if (hostname === '' || hostname.length > MAX_HOSTNAME_CHARS) return FAIL;

  const labels = hostname.split('.');
  if (labels.length < 2 || !labels.every((label) => DNS_LABEL.test(label))) return FAIL;
  if (RESERVED_TLDS.has(labels[labels.length - 1]!)) return FAIL;

  const parsed = parseHost(hostname, { allowPrivateDomains: false });
  if (parsed.isIp === true || parsed.isIcann !== true || parsed.domain === null) return FAIL;
  const domain = parsed.domain.toLowerCase();
  if (domain === NETWORK_DOMAIN) return FAIL;
  return { ok: true, domain };
}

// ---------- person ----------

const MEMBER_ID_PREFIX = 'ACoAA';
const PUBLIC_IDENTIFIER = /^[\p{L}\p{M}\p{N}._-]+$/u;
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const NAME = /^[\p{L}\p{M} '.-]+$/u;

export function parsePersonReference(input: string): PersonReferenceResult {
  if (hasUnseenOrRemapped(input)) return FAIL;
  const value = input.trim();
  if (value === '') return FAIL;

  if (looksLikeUrl(value)) {
    const segments = networkPathSegments(value);
    if (segments === null) return FAIL;
    const id = refAfter(segments, 'in');
    if (id === null) return FAIL;
    // Paths are case-insensitive, so a member id is refused in any case.
    if (id.toLowerCase().startsWith(MEMBER_ID_PREFIX.toLowerCase())) return FAIL;
    if (charCount(id) > PUBLIC_IDENTIFIER_MAX_CHARS) return FAIL;
    if (!PUBLIC_IDENTIFIER.test(id) || !HAS_LETTER_OR_DIGIT.test(id)) return FAIL;
    return { ok: true, ref: { kind: 'url', publicIdentifier: id.toLowerCase() } };
  }

  if (value.startsWith(MEMBER_ID_PREFIX)) return FAIL;
  const name = value.normalize('NFC').replace(/ +/g, ' ');
  if (charCount(name) > NAME_MAX_CHARS) return FAIL;
  if (!NAME.test(name) || !HAS_LETTER.test(name)) return FAIL;
  return { ok: true, ref: { kind: 'name', name, normalizedName: name.toLowerCase() } };
}
