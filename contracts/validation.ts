import type { z } from 'zod';
import type { Detail, DetailIssue } from './errors';
import { textIssueParams } from './text';

/**
 * Turns zod's findings into the `error.details` vocabulary of docs/api.md "Errors":
 * `{field, issue, message}`, `field` = the body field, `body` for the body as a whole.
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; details: Detail[] };

const BODY_FIELD = 'body';
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_CHARS = 255;

export function invalidJsonDetail(): Detail {
  return { field: BODY_FIELD, issue: 'invalid_json', message: 'The body is not valid JSON.' };
}

export function unsupportedContentTypeDetail(): Detail {
  return {
    field: BODY_FIELD,
    issue: 'unsupported_content_type',
    message: 'The body must be a JSON object sent with Content-Type: application/json.',
  };
}

/** `application/json`, any case, optionally followed by parameters such as `; charset=utf-8`. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json';
}

/**
 * Validates an already-decoded value (a body, or a query object whose values are strings),
 * reporting each problem field once per kind of issue.
 */
export function parseValue<T>(schema: z.ZodType<T>, input: unknown): ParseResult<T> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  // One detail per field and kind of issue; of two bounds on one field the tighter one speaks
  // (zod reports both the safe-integer range and the schema's own maximum for 1e20).
  const byKey = new Map<string, { detail: Detail; bound: number }>();
  for (const issue of result.error.issues) {
    for (const detail of issueToDetails(issue, input)) {
      const key = `${detail.field}\u0000${detail.issue}`;
      const bound = issueBound(issue);
      const previous = byKey.get(key);
      const tighter =
        previous !== undefined &&
        ((detail.issue === 'too_big' && bound < previous.bound) || (detail.issue === 'too_small' && bound > previous.bound));
      if (previous === undefined || tighter) byKey.set(key, { detail, bound });
    }
  }
  const details = [...byKey.values()].map((entry) => entry.detail);
  return { ok: false, details };
}

type Issue = z.core.$ZodIssue;

function issueBound(issue: Issue): number {
  if (issue.code === 'too_big') return Number(issue.maximum);
  if (issue.code === 'too_small') return Number(issue.minimum);
  return 0;
}

function fieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return BODY_FIELD;
  return path.map((segment) => String(segment)).join('.');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment as string];
  }
  return current;
}

function hasPath(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return input !== undefined;
  const parent = valueAt(input, path.slice(0, -1));
  if (parent === null || typeof parent !== 'object') return false;
  return  Object.hasOwn(parent, path[path.length - 1] as string);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

const EXPECTED_TEXT: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'a JSON object',
  array: 'an array',
};

function issueToDetails(issue: Issue, input: unknown): Detail[] {
  const path = issue.path as readonly PropertyKey[];
  const field = fieldName(path);
  const label = path.length === 0 ? 'The body' : `\`${field}\``;
  const detail = (issueKind: DetailIssue, message: string): Detail => ({ field, issue: issueKind, message });

  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        field: path.length === 0 ? key : `${field}.${key}`,
        issue: 'unknown_field' as const,
        message: `\`${key}\` is not a known field.`,
      }));
    case 'invalid_type': {
      if (path.length > 0 && !hasPath(input, path)) return [detail('required', `${label} is required.`)];
      const value = valueAt(input, path);
      const expected = EXPECTED_TEXT[issue.expected] ?? issue.expected;
      return [detail('invalid_type', `${label} must be ${expected}, not ${describeType(value)}.`)];
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') {
        return [
          detail('too_small', min <= 1 ? `${label} must not be empty.` : `${label} must be at least ${min} characters long.`),
        ];
      }
      if (issue.origin === 'array') return [detail('too_small', `${label} must hold at least ${min} items.`)];
      return [detail('too_small', `${label} must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${min}.`)];
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return [detail('too_big', `${label} must be at most ${max} characters long.`)];
      if (issue.origin === 'array') return [detail('too_big', `${label} must hold at most ${max} items.`)];
      return [detail('too_big', `${label} must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}.`)];
    }
    // The vocabulary has no separate words for a bad format or value: they are the wrong kind of value.
    case 'invalid_format':
      return [detail('invalid_type', `${label} has an invalid format.`)];
    case 'invalid_value':
      return [detail('invalid_type', `${label} must be one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}.`)];
    case 'custom': {
      // The text rule (contracts/text.ts) says which issue it is and what to tell the caller.
      const text = textIssueParams(issue.params);
      if (text !== null) return [detail(text.detailIssue, `${label} ${text.says}`)];
      return [detail('invalid_type', `${label} is invalid.`)];
    }
    default:
      return [detail('invalid_type', `${label} is invalid.`)];
  }
}

/**
 * The `Idempotency-Key` header: absent is fine; otherwise 1–255 printable ASCII characters
 * (0x20–0x7E). Returns the problem as a detail, or null.
 */
export function idempotencyKeyProblem(value: string | undefined): Detail | null {
  if (value === undefined) return null;
  const field = IDEMPOTENCY_KEY_HEADER;
  if (value.length === 0) return { field, issue: 'too_small', message: 'Idempotency-Key must not be empty.' };
  if (value.length > IDEMPOTENCY_KEY_MAX_CHARS) {
    return { field, issue: 'too_big', message: `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX_CHARS} characters long.` };
  }
  if (!/^[\x20-\x7E]+$/.test(value)) {
    return { field, issue: 'invalid_type', message: 'Idempotency-Key must consist of printable ASCII characters.' };
  }
  return null;
}
