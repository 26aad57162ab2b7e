import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A signing secret as Standard Webhooks writes it: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The three headers of one attempt; during a rotation's overlap, one signature per secret (space separated). */
export function signedHeaders(secrets: readonly string[], messageId: string, timestamp: Date, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' '),
  };
}
