// The email outbox on PostgreSQL, sent through a real SMTP server: nothing queued is lost (a
// refused send is retried, with the same Message-ID), and two instances sending the same outbox
// at once send each message once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailSender, enqueueEmail } from '../../../services/email/email-outbox';
import { messageIdOf, type Mailer } from '../../../services/email/mailer';
import { createSmtpMailer } from '../../../services/email/smtp-mailer';
import { migrate } from '../../../services/eventstore/migrate';
import type { Sql } from '../../../services/eventstore/sql';
import { createPgSql } from '../../../services/eventstore/sql-pg';
import { emailsPurged } from '../../../services/metrics/metrics';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../support/servers';
import { startTestSmtpServer, type TestSmtpServer } from '../../support/smtp-server';

const silent = { info() {}, warn() {}, error() {} };
const emailsPurgedTotal = async () => (await emailsPurged.get()).values.reduce((sum, v) => sum + v.value, 0);
const FROM = 'no-reply@lookup.test';

describe.runIf(serverUrl('postgres'))('email outbox on PostgreSQL', () => {
  let database: TestDatabase;
  let sql: Sql;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    sql = createPgSql(database.url);
    await migrate(sql);
    smtp = await startTestSmtpServer();
  });
  afterAll(async () => {
    await smtp?.close();
    await sql?.close();
    await database?.drop();
  });

  const row = async (id: string) =>
    (await sql.query<{ attempts: number; sent_at: Date | null; body: string | null; next_attempt_at: Date; last_error: string | null }>('SELECT attempts, sent_at, body, next_attempt_at, last_error FROM email_outbox WHERE id = $1', [id])).rows[0]!;

  it('a message queued in a transaction that rolls back is never sent', async () => {
    await sql
      .transaction(async (tx) => {
        await enqueueEmail(tx, { kind: 'invitation', to: 'ghost@example.com', subject: 'rolled back', text: 'no' });
        throw new Error('the cause failed');
      })
      .catch(() => undefined);
    const sender = new EmailSender(sql, createSmtpMailer(smtp.url), { from: FROM, logger: silent });
    expect(await sender.sendDue()).toBe(0);
    expect(smtp.received.some((m) => m.subject === 'rolled back')).toBe(false);
  });

  it('a refused send stays queued and is retried after its backoff, with the same Message-ID; the body is dropped once sent', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const id = await enqueueEmail(sql, { kind: 'password_reset', to: 'ada@example.com', subject: 'retry me', text: 'https://x.test/console/reset?token=t' }, now);
    const sender = new EmailSender(sql, createSmtpMailer(smtp.url), { from: FROM, logger: silent, clock: () => now });
    smtp.refuseNext(1);
    expect(await sender.sendDue()).toBe(0);
    const failed = await row(id);
    expect(failed).toMatchObject({ attempts: 1, sent_at: null });
    expect(failed.last_error).toMatch(/451/);
    expect(failed.next_attempt_at.getTime()).toBeGreaterThan(now.getTime());
    // Not due yet: nothing is sent.
    expect(await sender.sendDue()).toBe(0);
    now = new Date(failed.next_attempt_at.getTime() + 1);
    expect(await sender.sendDue()).toBe(1);
    const mails = smtp.received.filter((m) => m.subject === 'retry me');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.messageId).toBe(messageIdOf(id));
    expect(await row(id)).toMatchObject({ attempts: 2, body: null, last_error: null });
    expect((await row(id)).sent_at).not.toBeNull();
  });

  it("a refusal with a character across the 500th unit is stored cut before it, not through it, and the message retried", async () => {
    const now = new Date('2030-06-01T00:00:00Z');
    const sender = new EmailSender(sql, createSmtpMailer(smtp.url), { from: FROM, logger: silent, clock: () => now });
    const refuse = async (message: string) => {
      const id = await enqueueEmail(sql, { kind: 'invitation', to: 'hostile@example.com', subject: 'hostile refusal', text: 'x' }, now);
      smtp.refuseNext(1, message);
      expect(await sender.sendDue()).toBe(0);
      const stored = await row(id);
      await sql.query('DELETE FROM email_outbox WHERE id = $1', [id]);
      return stored;
    };
    // Where the server's text starts in the error nodemailer reports: a pair is put across the 500th unit.
    const plain = (await refuse('MARKER')).last_error!;
    const offset = plain.indexOf('MARKER');
    expect(offset).toBeGreaterThan(0);
    const hostile = await refuse(`${'a'.repeat(499 - offset)}\u{1F600} and more`);
    expect(hostile).toMatchObject({ attempts: 1, sent_at: null });
    // Not the first half of the pair (the driver would have sent it as U+FFFD), nor anything after.
    expect(hostile.last_error).toBe(`${plain.slice(0, offset)}${'a'.repeat(499 - offset)}`);
  });

  it('two senders draining one outbox at once send each message exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await enqueueEmail(sql, { kind: 'balance_low', to: `owner${i}@example.com`, subject: `race ${i}`, text: 'low' }));
    const sql2 = createPgSql(database.url);
    try {
      const a = new EmailSender(sql, createSmtpMailer(smtp.url), { from: FROM, logger: silent });
      const b = new EmailSender(sql2, createSmtpMailer(smtp.url), { from: FROM, logger: silent });
      const [sentA, sentB] = await Promise.all([a.sendDue(), b.sendDue()]);
      expect(sentA + sentB).toBe(30);
      const raced = smtp.received.filter((m) => m.subject?.startsWith('race '));
      expect(raced).toHaveLength(30);
      expect(new Set(raced.map((m) => m.messageId))).toEqual(new Set(ids.map(messageIdOf)));
    } finally {
      await sql2.close();
    }
  });

  it('with a slow mail server, more messages than one lease covers are each sent once by two senders', async () => {
    // A message is claimed for CLAIM_LEASE_MS (2 min). Each send by A takes 70 s on the senders'
    // shared clock, during which sender B runs a pass, as another instance polling meanwhile would:
    // a message claimed by A but still waiting behind slow sends would be B's to claim again.
    let now = new Date('2031-01-01T00:00:00Z');
    const clock = () => now;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await enqueueEmail(sql, { kind: 'balance_low', to: `slow${i}@example.com`, subject: `slow ${i}`, text: 'low' }, now));
    const sql2 = createPgSql(database.url);
    try {
      const b = new EmailSender(sql2, createSmtpMailer(smtp.url), { from: FROM, logger: silent, clock });
      let sentByB = 0;
      const smtpMailer = createSmtpMailer(smtp.url);
      const slowMailer: Mailer = {
        async send(message, from) {
          now = new Date(now.getTime() + 70_000);
          sentByB += await b.sendDue();
          await smtpMailer.send(message, from);
        },
        close: () => smtpMailer.close(),
      };
      const a = new EmailSender(sql, slowMailer, { from: FROM, logger: silent, clock });
      const sentByA = await a.sendDue();
      sentByB += await b.sendDue();
      expect(sentByA + sentByB).toBe(5);
      const slow = smtp.received.filter((m) => m.subject?.startsWith('slow '));
      expect(slow.map((m) => m.messageId).sort()).toEqual(ids.map(messageIdOf).sort());
      const { rows } = await sql.query<{ attempts: number }>('SELECT attempts FROM email_outbox WHERE id = ANY($1::text[])', [ids]);
      expect(rows.map((r) => Number(r.attempts))).toEqual([1, 1, 1, 1, 1]);
    } finally {
      await sql2.close();
    }
  });

  it('sent and given-up messages are deleted once past the retention; younger ones and those still queued stay', async () => {
    const DAY = 86_400_000;
    let now = new Date('2032-01-01T00:00:00Z');
    const clock = () => now;
    const sender = new EmailSender(sql, createSmtpMailer(smtp.url), { from: FROM, logger: silent, clock, retentionMs: 30 * DAY });
    // What the tests above sent, all of it earlier than 30 days before this clock, goes first.
    await sender.purgeExpired();
    const old = await enqueueEmail(sql, { kind: 'invitation', to: 'old@example.com', subject: 'purge old', text: 'x' }, now);
    const givenUp = await enqueueEmail(sql, { kind: 'invitation', to: 'gone@example.com', subject: 'purge given up', text: 'x' }, now);
    expect(await sender.sendDue()).toBe(2);
    // Given up (as after its last failed attempt) at the same moment.
    await sql.query('UPDATE email_outbox SET sent_at = NULL, failed_at = $2 WHERE id = $1', [givenUp, now]);
    now = new Date(now.getTime() + 20 * DAY);
    const young = await enqueueEmail(sql, { kind: 'invitation', to: 'young@example.com', subject: 'purge young', text: 'x' }, now);
    expect(await sender.sendDue()).toBe(1);
    // Queued long ago and still not sent (not yet due): never purged, whatever its age.
    const waiting = await enqueueEmail(sql, { kind: 'invitation', to: 'wait@example.com', subject: 'purge waiting', text: 'x' }, new Date(now.getTime() - 60 * DAY));
    await sql.query('UPDATE email_outbox SET next_attempt_at = $2 WHERE id = $1', [waiting, new Date(now.getTime() + DAY)]);
    const left = async () =>
      (await sql.query<{ id: string }>('SELECT id FROM email_outbox WHERE id = ANY($1::text[]) ORDER BY id', [[old, givenUp, young, waiting]])).rows.map((r) => r.id);

    // 20 days after the first two: nothing is past 30 days.
    expect(await sender.purgeExpired()).toBe(0);
    expect(await left()).toEqual([old, givenUp, young, waiting].sort());
    // 31 days after them (11 after the young one): the first two go.
    now = new Date(now.getTime() + 11 * DAY);
    const purged = emailsPurgedTotal();
    expect(await sender.purgeExpired()).toBe(2);
    expect(await emailsPurgedTotal()).toBe((await purged) + 2);
    expect(await left()).toEqual([young, waiting].sort());
  });

  it('the running loop sends what is queued, and deletes what is past the retention, without being asked', async () => {
    // Sent 31 days ago: past the default retention of 30 days.
    const expired = await enqueueEmail(sql, { kind: 'invitation', to: 'expired@example.com', subject: 'long sent', text: 'x' });
    await sql.query('UPDATE email_outbox SET sent_at = now() - interval \'31 days\', body = NULL WHERE id = $1', [expired]);
    const sender = new EmailSender(sql, createSmtpMailer(smtp.url), { from: FROM, logger: silent, pollEveryMs: 50 });
    sender.start();
    try {
      await enqueueEmail(sql, { kind: 'invitation', to: 'loop@example.com', subject: 'by the loop', text: 'hi' });
      const until = Date.now() + 5000;
      const expiredLeft = async () => (await sql.query('SELECT 1 FROM email_outbox WHERE id = $1', [expired])).rows.length;
      while ((!smtp.received.some((m) => m.subject === 'by the loop') || (await expiredLeft()) > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(smtp.received.filter((m) => m.subject === 'by the loop')).toHaveLength(1);
      expect(await expiredLeft()).toBe(0);
    } finally {
      await sender.stop();
    }
  });
});
