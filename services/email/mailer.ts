/**
 * The port every email leaves through. Two adapters: SMTP (smtp-mailer.ts, when SMTP_URL is set)
 * and a folder of `.eml` files (folder-mailer.ts, the embedded default). Callers never send
 * directly: they put the message in the outbox (email-outbox.ts), whose sender calls `send`.
 */
export interface EmailMessage {
  /** The outbox id: the message's `Message-ID`, so a retried send is recognisably the same mail. */
  id: string;
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the message is handed over (accepted by the SMTP server, or written); throws otherwise. */
  send(message: EmailMessage, from: string): Promise<void>;
  close(): Promise<void>;
}

/** `<eml_…@lookup>`: stable across retries of one outbox entry. */
export const messageIdOf = (id: string) => `<${id}@lookup>`;

/** Every http(s) link of a text, in order: what the folder adapter prints on the console. */
export const linksIn = (text: string): string[] => text.match(/https?:\/\/[^\s<>"]+/g) ?? [];
