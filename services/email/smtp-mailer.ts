import nodemailer from 'nodemailer';
import { messageIdOf, type EmailMessage, type Mailer } from './mailer';

/** Connect, greet and send timeouts: a stuck server fails the attempt, which the outbox retries. */
const SMTP_TIMEOUT_MS = 15_000;

/** Sends over SMTP (`smtp://` or `smtps://` URL, credentials in it) with nodemailer. */
export function createSmtpMailer(url: string): Mailer {
  const transport = nodemailer.createTransport({ url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS });
  return {
    async send(message: EmailMessage, from: string) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, messageId: messageIdOf(message.id) });
    },
    async close() {
      transport.close();
    },
  };
}
