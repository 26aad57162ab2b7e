import type { Sql } from '../eventstore/sql';
import type { HashingQueue } from '../members/hashing';
import { HashingBusyError } from '../members/hashing';
import { decoyHash, verifyPassword } from '../members/passwords';
import { consolePasswordChecks } from '../metrics/metrics';
import { endAttempt, startAttempt, type AttemptRecord } from './rules';

/** Too many attempts at a password of one subject: slowed, or locked. */
export class PasswordAttemptsThrottledError extends Error {
  constructor(
    /** A sign-in's (`sign_in`) or a password change's current one (`password`). */
    readonly check: PasswordSubject['check'],
    readonly retryAfterSeconds: number,
    readonly locked: boolean,
  ) {
    super(`${check} ${locked ? 'locked' : 'slowed'}`);
  }
}

/** Whose password is checked: a sign-in's per workspace, email and client address; a change's per member. */
export type PasswordSubject = { check: 'sign_in'; workspaceId: string; email: string } | { check: 'password'; memberId: string };

/** The throttle's key (`console_password_attempts.subject`). */
const subjectKey = (s: PasswordSubject, ip: string) => (s.check === 'sign_in' ? `sign_in:${s.workspaceId}:${s.email}:${ip}` : `password:${s.memberId}`);

/**
 * Password checks, throttled per subject. The counts live in PostgreSQL (or PGlite), beside the
 * members: every instance sees the same counts, they survive a restart, and the embedded default
 * needs no Redis.
 */
export class PasswordAttempts {
  constructor(
    private readonly sql: Sql,
    private readonly hashing: HashingQueue,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * One attempt at a password, counted before the hash runs (startAttempt) and settled after it
   * (endAttempt). Without a stored hash, a decoy is checked, so the timing tells nothing.
   */
  async check(who: PasswordSubject, ip: string, password: string, storedHash: string | undefined): Promise<boolean> {
    const { check } = who;
    const subject = subjectKey(who, ip);
    const start = await this.changeAttempts(subject, true, (record) => {
      const decided = startAttempt(record, this.clock());
      return { next: decided.allowed ? decided.next : record, result: decided };
    });
    if (!start.allowed) {
      consolePasswordChecks.inc({ check, outcome: start.locked ? 'locked' : 'slowed' });
      throw new PasswordAttemptsThrottledError(check, start.retryAfterSeconds, start.locked);
    }
    let outcome: 'wrong' | 'right' | 'not_run' = 'not_run';
    try {
      const ticket = this.hashing.admit(ip);
      const matches = await ticket.run(async () => verifyPassword(password, storedHash ?? (await decoyHash())));
      outcome = matches && storedHash !== undefined ? 'right' : 'wrong';
      return outcome === 'right';
    } catch (err) {
      if (err instanceof HashingBusyError) consolePasswordChecks.inc({ check, outcome: 'busy' });
      throw err;
    } finally {
      if (outcome !== 'not_run') consolePasswordChecks.inc({ check, outcome });
      await this.changeAttempts(subject, false, (record) => ({ next: record && endAttempt(record, outcome, this.clock()), result: undefined }));
    }
  }

  /** Reads a subject's record under a row lock, decides, and writes (or deletes) it, in one transaction. */
  private async changeAttempts<T>(subject: string, create: boolean, change: (record: AttemptRecord | undefined) => { next: AttemptRecord | null | undefined; result: T }): Promise<T> {
    return this.sql.transaction(async (tx) => {
      // `create`: a row to lock even for the first attempt (concurrent first attempts then queue on
      // it too), inserted or locked and read in one statement.
      const { rows } = await tx.query<{ failures: number; in_flight: number; last_failure_at: Date; locked_until: Date | null }>(
        create
          ? `INSERT INTO console_password_attempts (subject, failures, in_flight, last_failure_at) VALUES ($1, 0, 0, $2)
             ON CONFLICT (subject) DO UPDATE SET subject = EXCLUDED.subject RETURNING failures, in_flight, last_failure_at, locked_until`
          : 'SELECT failures, in_flight, last_failure_at, locked_until FROM console_password_attempts WHERE subject = $1 FOR UPDATE',
        create ? [subject, this.clock()] : [subject],
      );
      const r = rows[0];
      const record = r && { failures: Number(r.failures), inFlight: Number(r.in_flight), lastFailureAt: new Date(r.last_failure_at), lockedUntil: r.locked_until && new Date(r.locked_until) };
      const { next, result } = change(record);
      if (next === null || (next && next.failures === 0 && next.inFlight === 0)) {
        await tx.query('DELETE FROM console_password_attempts WHERE subject = $1', [subject]);
      } else if (next && next !== record) {
        await tx.query('UPDATE console_password_attempts SET failures = $2, in_flight = $3, last_failure_at = $4, locked_until = $5 WHERE subject = $1', [
          subject, next.failures, next.inFlight, next.lastFailureAt, next.lockedUntil,
        ]);
      }
      return result;
    });
  }
}
