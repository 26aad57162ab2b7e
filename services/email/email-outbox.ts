import { toStorableExcerpt } from '../../contracts/text';
import { claimOneByOne } from '../common/claim-one-by-one';
import { newEmailId } from '../common/ids';
import { startPollLoop, type PollLoop } from '../common/poll-loop';
import type { Logger } from '../common/log';
import type { Sql, SqlExecutor } from '../eventstore/sql';
import { emailsPurged, emailsSent } from '../metrics/metrics';
import type { Mailer } from './mailer';
import { DEFAULT_OUTBOX_RETENTION_MS, PURGE_EVERY_MS, purgeCutoff } from './retention';
import { afterFailedSend } from './retry';

export type EmailKind = 'invitation' | 'password_reset' | 'balance_low';

export interface OutgoingEmail {
  kind: EmailKind;
  to: string;
  subject: string;
  text: string;
}

/**
 * Puts a message in the outbox, on `executor`: inside a transaction, the mail exists exactly when
 * what caused it committed. The request does not wait for any mail server.
 */
export async function enqueueEmail(executor: SqlExecutor, email: OutgoingEmail, now: Date = new Date()): Promise<string> {
  const id = newEmailId();
  await executor.query(
    'INSERT INTO email_outbox (id, kind, recipient, subject, body, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $6)',
    [id, email.kind, email.to, email.subject, email.text, now],
  );
  return id;
}

/**
 * How long a claimed message is this instance's: past it (the instance died mid-send), another
 * claims it. It covers one send, so a message is claimed only when it is the next to go.
 */
const CLAIM_LEASE_MS = 120_000;
const POLL_EVERY_MS = 1000;
/** `last_error` keeps this many UTF-16 code units of a failed send's error. */
const ERROR_MAX_CHARS = 500;

interface Claimed {
  id: string;
  kind: EmailKind;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
}

/**
 * Sends what the outbox holds, on every instance at once: each claims one due message with
 * `FOR UPDATE SKIP LOCKED` (no two instances take the same one) and a lease, sends it through
 * the Mailer, marks it sent or schedules a retry, then claims the next (one lease per message:
 * services/common/claim-one-by-one.ts). At least once: an instance that dies
 * between sending and marking leaves a message sent again after the lease (same Message-ID).
 */
export class EmailSender {
  private loop: PollLoop | undefined;
  private stopped = false;
  private lastPurgeAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly sql: Sql,
    private readonly mailer: Mailer,
    private readonly options: {
      from: string;
      logger: Logger;
      clock?: () => Date;
      pollEveryMs?: number;
      /** How long a sent or given-up message is kept (EMAIL_OUTBOX_RETENTION_MS); default 30 days. */
      retentionMs?: number;
    },
  ) {}

  start(): void {
    this.loop = startPollLoop({
      // The purge runs after every pass, sent or failed (it logs its own failure).
      pass: () => this.sendDue().finally(() => this.purgeWhenDue()),
      everyMs: this.options.pollEveryMs ?? POLL_EVERY_MS,
      logger: this.options.logger,
      failed: 'sending the email outbox failed; next poll retries',
    });
  }

  /** Sends every message due now; resolves with how many were sent (tests and the loop). */
  async sendDue(): Promise<number> {
    let sent = 0;
    await claimOneByOne({
      claim: () => this.claim(),
      process: async (message) => {
        if (await this.sendOne(message)) sent++;
      },
      stopped: () => this.stopped,
    });
    return sent;
  }

  /**
   * Deletes the messages sent or given up longer ago than the retention (their bodies are already
   * gone): the loop does it once an hour. Resolves with how many were deleted.
   */
  async purgeExpired(): Promise<number> {
    const retentionMs = this.options.retentionMs ?? DEFAULT_OUTBOX_RETENTION_MS;
    const { rowCount } = await this.sql.query('DELETE FROM email_outbox WHERE sent_at < $1 OR failed_at < $1', [purgeCutoff(this.now(), retentionMs)]);
    if (rowCount > 0) {
      emailsPurged.inc(rowCount);
      this.options.logger.info({ purged: rowCount, retention_ms: retentionMs }, 'email outbox: sent and given-up messages past their retention deleted');
    }
    return rowCount;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop?.stop();
  }

  /** A purge at most every PURGE_EVERY_MS; a failed one is tried again at the next poll. */
  private async purgeWhenDue(): Promise<void> {
    const now = this.now().getTime();
    if (this.stopped || now - this.lastPurgeAt < PURGE_EVERY_MS) return;
    try {
      await this.purgeExpired();
      this.lastPurgeAt = now;
    } catch (err) {
      this.options.logger.warn({ err }, 'purging the email outbox failed; the next poll retries');
    }
  }

  private now() {
    return this.options.clock?.() ?? new Date();
  }

  /** The earliest due message no instance holds, now this instance's until its lease ends. */
  private async claim(): Promise<Claimed | undefined> {
    const now = this.now();
    const { rows } = await this.sql.query<Claimed>(
      `UPDATE email_outbox SET claimed_until = $2, attempts = attempts + 1
        WHERE id IN (SELECT id FROM email_outbox
                      WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
                      ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, kind, recipient, subject, body, attempts`,
      [now, new Date(now.getTime() + CLAIM_LEASE_MS)],
    );
    const row = rows[0];
    return row && { ...row, attempts: Number(row.attempts) };
  }

  private async sendOne(m: Claimed): Promise<boolean> {
    const log = this.options.logger;
    try {
      await this.mailer.send({ id: m.id, to: m.recipient, subject: m.subject, text: m.body }, this.options.from);
    } catch (err) {
      const next = afterFailedSend(m.attempts, this.now());
      // The server's refusal, quoted in the message, is a peer's text: cut and cleaned before it is stored.
      const error = toStorableExcerpt(err instanceof Error ? err.message : String(err), ERROR_MAX_CHARS);
      if (next.kind === 'retry') {
        await this.sql.query('UPDATE email_outbox SET claimed_until = NULL, next_attempt_at = $2, last_error = $3 WHERE id = $1', [m.id, next.at, error]);
        emailsSent.inc({ kind: m.kind, outcome: 'retry' });
        log.warn({ err, email_id: m.id, kind: m.kind, attempts: m.attempts, next_attempt_at: next.at.toISOString() }, 'sending an email failed; retried later');
      } else {
        await this.sql.query('UPDATE email_outbox SET claimed_until = NULL, failed_at = $2, body = NULL, last_error = $3 WHERE id = $1', [m.id, this.now(), error]);
        emailsSent.inc({ kind: m.kind, outcome: 'given_up' });
        log.error({ err, email_id: m.id, kind: m.kind, attempts: m.attempts }, 'sending an email failed too many times; given up');
      }
      return false;
    }
    // The body (one-time links) is not kept once it went out.
    await this.sql.query('UPDATE email_outbox SET sent_at = $2, claimed_until = NULL, body = NULL, last_error = NULL WHERE id = $1', [m.id, this.now()]);
    emailsSent.inc({ kind: m.kind, outcome: 'sent' });
    log.info({ email_id: m.id, kind: m.kind, attempts: m.attempts }, 'email sent');
    return true;
  }
}
