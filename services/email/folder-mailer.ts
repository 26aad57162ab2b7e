import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Logger } from '../common/log';
import { linksIn, messageIdOf, type EmailMessage, type Mailer } from './mailer';

/**
 * The embedded default (no SMTP_URL): each message is written as an RFC 5322 `.eml` file to `dir`
 * and its links are logged, so a first run needs no mail server to follow an invitation.
 */
export function createFolderMailer(dir: string, log: Logger): Mailer {
  return {
    async send(message: EmailMessage, from: string) {
      const raw = await new MailComposer({ from, to: message.to, subject: message.subject, text: message.text, messageId: messageIdOf(message.id) }).compile().build();
      await mkdir(dir, { recursive: true });
      const file = join(dir, `${message.id}.eml`);
      // Written whole, then renamed: a reader never sees half a message.
      await writeFile(`${file}.tmp`, raw, { mode: 0o600 });
      await rename(`${file}.tmp`, file);
      log.info({ to: message.to, subject: message.subject, file, links: linksIn(message.text) }, 'email written to the outbox folder (no SMTP_URL)');
    },
    async close() {},
  };
}
