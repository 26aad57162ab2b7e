// The console's emails through app.inject, by answer status: invitations go to the invited
// address, and the password reset (ask by email, a one-time link, expiring, every session ended).
// The outbox is sent through a real SMTP server started here, and read from what it received.
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailSender } from '../../services/email/email-outbox';
import { createSmtpMailer } from '../../services/email/smtp-mailer';
import { migrate } from '../../services/eventstore/migrate';
import type { Sql } from '../../services/eventstore/sql';
import { createPgliteSql } from '../../services/eventstore/sql-pglite';
import { PASSWORD_RESET_ASKS_PER_MINUTE, PASSWORD_RESETS_PER_HOUR } from '../../services/members/password-reset-rules';
import { sha256Hex } from '../../services/members/rules';
import { startTestSmtpServer, type TestSmtpServer } from '../support/smtp-server';
import { ADMIN_TOKEN, startRouteApp, type Answer, type RouteApp } from './support';

let t: RouteApp;
let sql: Sql;
let smtp: TestSmtpServer;
let sender: EmailSender;
beforeAll(async () => {
  sql = await createPgliteSql();
  await migrate(sql);
  t = await startRouteApp({ sql });
  smtp = await startTestSmtpServer();
  sender = new EmailSender(sql, createSmtpMailer(smtp.url), { from: 'no-reply@lookup.test', logger: { info() {}, warn() {}, error() {} } });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const PASSWORD = 'the first password 2468';
let addressCounter = 0;
/** A client address of its own per use: the reset asks are bucketed per address. */
const newAddress = () => `10.9.${Math.floor(++addressCounter / 250)}.${addressCounter % 250}`;

/** Sends the outbox, then the messages received for `to`. */
async function mailsTo(to: string): Promise<ParsedMail[]> {
  await sender.sendDue();
  return smtp.received.filter((m) => (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === to)));
}
const linkIn = (mail: ParsedMail, path: string) => {
  const link = /https?:\/\/\S+/.exec(mail.text ?? '')?.[0];
  expect(link).toContain(path);
  return new URL(link!);
};

async function post(url: string, body: unknown, options: { cookie?: string; address?: string; csrf?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.csrf) headers['x-csrf-token'] = options.csrf;
  return (await t.app.inject({ method: 'POST', url, headers, payload: JSON.stringify(body), remoteAddress: options.address ?? newAddress() })) as Answer;
}
const ask = (workspace_id: string, email: string, address?: string) => post('/console/v1/password-reset', { workspace_id, email }, { address });
const complete = (token: string | null, new_password: string) => post('/console/v1/password-reset/complete', { token, new_password });
const signIn = (workspace_id: string, email: string, password: string) => post('/console/v1/session', { workspace_id, email, password });
const cookieOf = (a: Answer) => String(a.headers['set-cookie']).split(';')[0]!;

/** A workspace with an owner signed in (invited by the operator, link from the admin answer). */
async function owner(email: string) {
  const ws = await t.workspaces.create({ name: `ws of ${email}`, credits: 10 });
  const invitation = await t.call('POST', `/admin/v1/workspaces/${ws.id}/invitations`, { headers: admin, body: { email, role: 'owner' } });
  expect(invitation.statusCode, invitation.body).toBe(201);
  const accepted = await post('/console/v1/invitations/accept', { token: new URL(invitation.json().link).searchParams.get('token'), password: PASSWORD });
  expect(accepted.statusCode, accepted.body).toBe(200);
  return { workspaceId: ws.id, email, cookie: cookieOf(accepted), csrf: accepted.json().csrf_token as string };
}

const eventsOf = async (type: string) => (await sql.query<{ data: Record<string, unknown> }>('SELECT data FROM events WHERE type = $1 ORDER BY position', [type])).rows.map((r) => r.data);

describe('201', () => {
  it("an owner's invitation is emailed to the invited address, and the answer does not hold the link", async () => {
    const o = await owner('inviting-owner@example.com');
    const answer = await post('/console/v1/invitations', { email: 'Invited@Example.com', role: 'member' }, { cookie: o.cookie, csrf: o.csrf });
    expect(answer.statusCode, answer.body).toBe(201);
    expect(answer.json()).not.toHaveProperty('link');
    expect(JSON.stringify(answer.json())).not.toMatch(/token/);
    const [mail, ...more] = await mailsTo('invited@example.com');
    expect(more).toHaveLength(0);
    expect(mail!.subject).toContain(`ws of ${o.email}`);
    const link = linkIn(mail!, '/console/accept');
    expect(link.searchParams.get('workspace')).toBe(o.workspaceId);
    expect(await mailsTo(o.email)).toHaveLength(1); // only the owner's own invitation, from the operator
    const accepted = await post('/console/v1/invitations/accept', { token: link.searchParams.get('token'), password: 'the invited one 13579' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().member).toMatchObject({ email: 'invited@example.com', role: 'member' });
  });

  it("the operator's invitation is emailed too, with the same link the admin answer gives the operator", async () => {
    const ws = await t.workspaces.create({ name: 'operator invites', credits: 1 });
    const answer = await t.call('POST', `/admin/v1/workspaces/${ws.id}/invitations`, { headers: admin, body: { email: 'first@example.com' } });
    expect(answer.statusCode, answer.body).toBe(201);
    const [mail] = await mailsTo('first@example.com');
    expect(linkIn(mail!, '/console/accept').toString()).toBe(answer.json().link);
  });
});

describe('202', () => {
  it('a member who asks gets one email with a reset link; the log keeps only its hash', async () => {
    const o = await owner('forgetful@example.com');
    const answer = await ask(o.workspaceId, 'Forgetful@Example.com');
    expect(answer.statusCode, answer.body).toBe(202);
    expect(answer.body).toBe('');
    const resets = (await mailsTo(o.email)).filter((m) => m.subject?.startsWith('Reset'));
    expect(resets).toHaveLength(1);
    const link = linkIn(resets[0]!, '/console/reset');
    const token = link.searchParams.get('token')!;
    expect(link.searchParams.get('workspace')).toBe(o.workspaceId);
    const requested = (await eventsOf('PasswordResetRequested')).filter((d) => d.workspace_id === o.workspaceId);
    expect(requested).toEqual([expect.objectContaining({ token_hash: sha256Hex(token) })]);
    const { rows } = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE data::text LIKE '%' || $1 || '%'", [token]);
    expect(rows[0]!.n).toBe(0);
  });

  it('an address that is not a member, or a workspace that does not exist, gets the same answer and no email', async () => {
    const o = await owner('real-member@example.com');
    const member = await ask(o.workspaceId, o.email);
    for (const [ws, email] of [[o.workspaceId, 'stranger@example.com'], ['ws_00000000000000000000000000', o.email]] as const) {
      const answer = await ask(ws, email);
      expect(answer.statusCode).toBe(202);
      expect(answer.body).toBe(member.body);
      expect(Object.keys(answer.headers).sort()).toEqual(Object.keys(member.headers).sort());
    }
    expect(await mailsTo('stranger@example.com')).toHaveLength(0);
  });

  it(`past ${PASSWORD_RESETS_PER_HOUR} asks an hour for one member, the answer stays 202 and no more email goes out`, async () => {
    const o = await owner('asks-a-lot@example.com');
    for (let i = 0; i < PASSWORD_RESETS_PER_HOUR + 2; i++) expect((await ask(o.workspaceId, o.email)).statusCode).toBe(202);
    expect((await mailsTo(o.email)).filter((m) => m.subject?.startsWith('Reset'))).toHaveLength(PASSWORD_RESETS_PER_HOUR);
  });
});

describe('204', () => {
  it('the link sets a new password: the old one and every session end, the other open links die', async () => {
    const o = await owner('resets@example.com');
    const otherSession = cookieOf(await signIn(o.workspaceId, o.email, PASSWORD));
    await ask(o.workspaceId, o.email);
    await ask(o.workspaceId, o.email);
    const [first, second] = (await mailsTo(o.email)).filter((m) => m.subject?.startsWith('Reset')).map((m) => linkIn(m, '/console/reset').searchParams.get('token'));
    const done = await complete(second!, 'a brand new password 97531');
    expect(done.statusCode, done.body).toBe(204);
    for (const cookie of [o.cookie, otherSession]) expect((await t.app.inject({ method: 'GET', url: '/console/v1/session', headers: { cookie } })).statusCode).toBe(401);
    expect((await signIn(o.workspaceId, o.email, PASSWORD)).statusCode).toBe(401);
    expect((await signIn(o.workspaceId, o.email, 'a brand new password 97531')).statusCode).toBe(200);
    expect((await complete(first!, 'yet another password 8642')).json().error.reason).toBe('password_reset_used');
    const completed = (await eventsOf('PasswordResetCompleted')).filter((d) => d.workspace_id === o.workspaceId);
    expect(completed).toEqual([expect.objectContaining({ token_hash: sha256Hex(second!), actor: completed[0]!.member_id })]);
  });
});

describe('400', () => {
  async function tokenFor(email: string) {
    const o = await owner(email);
    await ask(o.workspaceId, o.email);
    const [mail] = (await mailsTo(o.email)).filter((m) => m.subject?.startsWith('Reset'));
    return { o, token: linkIn(mail!, '/console/reset').searchParams.get('token')! };
  }

  it('a link used once is refused the second time (password_reset_used)', async () => {
    const { token } = await tokenFor('twice@example.com');
    expect((await complete(token, 'the reset password 11111')).statusCode).toBe(204);
    const again = await complete(token, 'the reset password 22222');
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toMatchObject({ code: 'invalid_request', reason: 'password_reset_used' });
  });

  it('a link past its hour is refused (password_reset_expired), and the password stays', async () => {
    const { o, token } = await tokenFor('late@example.com');
    await sql.query("UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [sha256Hex(token)]);
    const late = await complete(token, 'too late a password 3333');
    expect(late.statusCode).toBe(400);
    expect(late.json().error.reason).toBe('password_reset_expired');
    expect((await signIn(o.workspaceId, o.email, PASSWORD)).statusCode).toBe(200);
  });

  it('a common or short new password is refused with details, and the link still works after', async () => {
    const { token } = await tokenFor('weak@example.com');
    const common = await complete(token, 'password1234');
    expect(common.statusCode).toBe(400);
    expect(common.json().error).toMatchObject({ reason: 'common_password', details: [expect.objectContaining({ field: 'new_password' })] });
    expect((await complete(token, 'short')).statusCode).toBe(400);
    expect((await complete(token, 'a strong enough password 4444')).statusCode).toBe(204);
  });

  it('a malformed ask or token is a 400, not a 500', async () => {
    expect((await ask('ws_1', 'not an email')).statusCode).toBe(400);
    expect((await complete(null, 'whatever password 5555')).statusCode).toBe(400);
  });
});

describe('404', () => {
  it('a made-up token is refused (no_password_reset)', async () => {
    const answer = await complete('A'.repeat(43), 'some new password 6666');
    expect(answer.statusCode).toBe(404);
    expect(answer.json().error).toMatchObject({ code: 'not_found', reason: 'no_password_reset' });
  });
});

describe('429', () => {
  it(`past ${PASSWORD_RESET_ASKS_PER_MINUTE} asks a minute from one address, members or not`, async () => {
    const address = newAddress();
    for (let i = 0; i < PASSWORD_RESET_ASKS_PER_MINUTE; i++) expect((await ask('ws_00000000000000000000000000', `n${i}@example.com`, address)).statusCode).toBe(202);
    const refused = await ask('ws_00000000000000000000000000', 'one-more@example.com', address);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});
