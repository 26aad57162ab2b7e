// A low-balance alert end to end on two instances sharing PostgreSQL: the charge that takes the
// balance below the workspace's threshold sends its owner one email (a real SMTP server) and its
// webhook endpoint subscribed to `balance.low` one delivery, signed by the Standard Webhooks rules
// and checked by a real receiver (standardwebhooks' Webhook.verify); the charges after it, still
// below, send neither again.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningServer } from '../../services/api/server';
import { serverUrl } from '../support/servers';
import { startTestSmtpServer, type TestSmtpServer } from '../support/smtp-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { bearer, call } from './support-instances/http';
import { ADMIN_TOKEN, Admin, eventually, startTwoInstances, type TwoInstances } from './support-instances/instances';

const databaseUrl = serverUrl('postgres');
const redisUrl = serverUrl('redis');

describe.skipIf(!databaseUrl || !redisUrl)('a low-balance alert as an email and a webhook, two instances', () => {
  let instances: TwoInstances;
  let a: RunningServer;
  let b: RunningServer;
  let receiver: WebhookReceiver;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    instances = await startTwoInstances(redisUrl!, { SMTP_URL: smtp.url, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '50' });
    ({ a, b } = instances);
    receiver = await startWebhookReceiver();
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await instances?.close();
    await smtp?.close();
  });

  test('one crossing: one email to the owner, one signed balance.low delivery', async () => {
    const { workspaceId, key } = await new Admin(a.url).keyedWorkspace({ credits: 10 });
    const admin = bearer(ADMIN_TOKEN);
    // An owner to email: the operator's invitation, accepted.
    const invited = await call(a.url, `/admin/v1/workspaces/${workspaceId}/invitations`, { headers: admin, body: { email: 'owner@alerts.test', role: 'owner' } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const token = new URL(invited.body.link).searchParams.get('token');
    const accepted = await call(b.url, '/console/v1/invitations/accept', { body: { token, password: 'a long enough password 1357' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);

    const endpoint = await call(a.url, '/v1/webhook-endpoints', { headers: bearer(key), body: { url: receiver.url, event_types: ['balance.low'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    receiver.secrets = [endpoint.body.data.secret];
    const patched = await call(a.url, `/admin/v1/workspaces/${workspaceId}`, { method: 'PATCH', headers: admin, body: { low_balance_threshold: 10 } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    // The first charge crosses (10 → below 10); the next ones stay below. A definitive not-found is charged too.
    for (const [i, instance] of [a, b, a].entries()) {
      const looked = await call(instance.url, '/v1/company', { headers: bearer(key), body: { url: i === 0 ? 'acme-robotics' : `alerts-company-${i}` } });
      expect([200, 404], JSON.stringify(looked.body)).toContain(looked.status);
      expect(Number(looked.headers['x-credits-charged'])).toBeGreaterThan(0);
    }
    const { balance } = await new Admin(b.url).workspace(workspaceId);
    expect(balance).toBeLessThan(10);

    expect(await eventually(async () => receiver.received.length > 0 && smtp.received.some((m) => JSON.stringify(m.to).includes('owner@alerts.test') && /credits left/.test(m.subject ?? '')), 15_000, 100)).toBe(true);
    // Two instances dispatch and deliver every 50 ms: still one of each after many more passes.
    await new Promise((r) => setTimeout(r, 1_500));
    const alertMails = smtp.received.filter((m) => /credits left/.test(m.subject ?? ''));
    expect(alertMails).toHaveLength(1);
    expect(receiver.unverified).toEqual([]);
    expect(receiver.received).toHaveLength(1);
    const webhook = receiver.received[0]!;
    expect(webhook.verifiedBy).toEqual([0]);
    expect(webhook.id).toMatch(/^msg_/);
    expect(webhook.payload).toMatchObject({ type: 'balance.low', data: { workspace_id: workspaceId, low_balance_threshold: 10, request_id: expect.stringMatching(/^req_/) } });
    expect(webhook.payload.data.balance).toBeLessThan(10);
  });
});
