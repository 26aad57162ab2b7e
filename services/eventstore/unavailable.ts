import { STATEMENT_TIMEOUT_MESSAGE } from './statement-watchdog';

/**
 * The database cannot be reached right now: connection refused, reset or terminated, the server
 * shutting down or starting up, no connection to be had in time. Nothing the caller did; the HTTP
 * layer answers 503 `service_unavailable`, and background work retries later. The embedded
 * database (PGlite) never raises it.
 */
export class DatabaseUnavailableError extends Error {
  /**
   * The connection was lost while COMMIT was in flight: the transaction may or may not have
   * committed. Callers that moved money must reconcile once the database answers again.
   */
  readonly commitOutcomeUnknown: boolean;

  constructor(cause: unknown, options: { commitOutcomeUnknown?: boolean } = {}) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
    this.commitOutcomeUnknown = options.commitOutcomeUnknown ?? false;
  }
}

/** Socket errors, and PostgreSQL's: shutdown (57P01-57P03), connection exceptions (class 08), too many clients (53300). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '53300',
]);

/** What node-postgres says when the connection is gone or never came (it sets no code on these). */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'is not queryable',
  'timeout exceeded when trying to connect',
  'timeout expired',
  // A statement unanswered within DATABASE_QUERY_TIMEOUT_MS: a frozen or cut-off server.
  STATEMENT_TIMEOUT_MESSAGE,
  // A statement that met its pool just as a lost host's pool was being closed (pg-primary.ts).
  'Cannot use a pool after calling end on the pool',
];

/** True when `err` says the database is out of reach, not that a statement was wrong. */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  // Connecting to a name with several addresses fails with one error per address.
  if (err instanceof AggregateError && err.errors.some(isDatabaseUnreachable)) return true;
  return UNAVAILABLE_MESSAGES.some((m) => err.message.includes(m));
}

/**
 * SQLSTATE 25006 read_only_sql_transaction: a write reached a server that does not take writes
 * (a standby, a demoted primary): the primary is elsewhere for now, like an outage to the caller.
 */
export function isReadOnlyRefusal(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === '25006';
}
