// A real webhook receiver for tests: an HTTP server on loopback that checks every request with
// standardwebhooks' Webhook.verify against the secrets it is given, and can go down and come back
// on the same port.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signatures: string[];
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, any> };
  /** Which of the secrets given verify it (by index); empty: none did, and it was answered 401. */
  verifiedBy: number[];
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Requests that no secret verified. */
  readonly unverified: ReceivedWebhook[];
  /** The secrets requests are verified with (an endpoint's, its previous one during a rotation). */
  secrets: string[];
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hook'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const unverified: ReceivedWebhook[] = [];
  let server: Server | undefined;
  let port = 0;
  const receiver = {
    secrets: [] as string[],
    received,
    unverified,
    get url() {
      return `http://127.0.0.1:${port}${path}`;
    },
    async up() {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
          const verifiedBy = receiver.secrets.flatMap((secret, i) => {
            try {
              new Webhook(secret).verify(body, headers);
              return [i];
            } catch {
              return [];
            }
          });
          const webhook = { id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signatures: headers['webhook-signature'].split(' '), body, payload: JSON.parse(body), verifiedBy };
          if (verifiedBy.length === 0) {
            unverified.push(webhook);
            return void res.writeHead(401).end();
          }
          received.push(webhook);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    },
    async down() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    },
    async close() {
      await receiver.down();
    },
  };
  await receiver.up();
  return receiver;
}
