// Admission `session` alone (services/http/admission/session.ts): the console's bucket first, then
// the signed-in member; a POST, PATCH or DELETE also from this origin with the session's CSRF token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_HEADER, SESSION_COOKIE } from '../../../contracts/console';
import { CONSOLE_RATE_PER_MINUTE } from '../../../contracts/endpoints';
import { csrfTokenOf } from '../../../services/members/rules';
import { errorOf } from '../support';
import { startAdmissionApp, whileUnreachable, type AdmissionApp } from './support';

let t: AdmissionApp;
beforeAll(async () => {
  t = await startAdmissionApp(['consoleSession', 'consoleSignOut']);
}, 120_000);
afterAll(async () => t?.close());

let lastAddress = 0;
const freshAddress = () => `10.50.${Math.floor(++lastAddress / 250)}.${(lastAddress % 250) + 1}`;

/** A member signed in through an accepted invitation: their session id and member id. */
async function signedIn() {
  const ws = await t.workspaces.create({ name: 'admission', credits: 0 });
  const invitation = await t.accounts.membership.invite(ws.id, { kind: 'operator' }, { email: `owner-${lastAddress++}@example.org`, role: 'owner' });
  const accepted = await t.accounts.membership.acceptInvitation(invitation.token, 'a long enough password 1', '127.0.0.1');
  return { sessionId: accepted.sessionId, memberId: accepted.member.memberId, member: accepted.member };
}

const cookie = (sessionId: string) => ({ cookie: `${SESSION_COOKIE}=${sessionId}` });
const host = { host: 'localhost:3000' };

describe('200', () => {
  it('a GET with the session cookie, no CSRF token needed, on the console bucket', async () => {
    const { sessionId, memberId } = await signedIn();
    const answer = await t.call({ method: 'GET', url: '/console/v1/session', headers: cookie(sessionId), remoteAddress: freshAddress() });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().member).toBe(memberId);
    expect(answer.headers['ratelimit-limit']).toBe(String(CONSOLE_RATE_PER_MINUTE));
  });
});

describe('204', () => {
  it('a DELETE from this origin with the CSRF token', async () => {
    const { sessionId } = await signedIn();
    const headers = { ...host, ...cookie(sessionId), origin: 'http://localhost:3000', [CSRF_HEADER]: csrfTokenOf(sessionId) };
    expect((await t.call({ method: 'DELETE', url: '/console/v1/session', headers })).statusCode).toBe(204);
  });
});

describe('401 unauthorized', () => {
  it('no cookie, a cookie that is no session, a session that ended; before any CSRF check', async () => {
    const ended = await signedIn();
    await t.accounts.sessions.signOut(ended.member);
    for (const headers of [{}, cookie('not-a-session'), cookie(ended.sessionId)]) {
      const answer = await t.call({ method: 'DELETE', url: '/console/v1/session', headers: { ...host, ...headers, origin: 'https://elsewhere.example' } });
      expect(errorOf(answer)).toMatchObject({ status: 401, code: 'unauthorized', remaining: null });
      expect(answer.headers['ratelimit-limit']).toBe(String(CONSOLE_RATE_PER_MINUTE));
    }
  });
});

describe('403 forbidden', () => {
  it('a change without the CSRF token, with another session\'s, or from another origin (reason csrf)', async () => {
    const { sessionId } = await signedIn();
    const other = await signedIn();
    for (const headers of [
      { origin: 'http://localhost:3000' },
      { origin: 'http://localhost:3000', [CSRF_HEADER]: csrfTokenOf(other.sessionId) },
      { origin: 'https://elsewhere.example', [CSRF_HEADER]: csrfTokenOf(sessionId) },
    ]) {
      const answer = await t.call({ method: 'DELETE', url: '/console/v1/session', headers: { ...host, ...cookie(sessionId), ...headers } });
      expect(errorOf(answer)).toMatchObject({ status: 403, code: 'forbidden' });
      expect(answer.json().error.reason).toBe('csrf');
    }
  });
});

describe('429 rate_limited', () => {
  it("the console's bucket of the address ran dry, before the session is looked at", async () => {
    const remoteAddress = freshAddress();
    let refused: Awaited<ReturnType<AdmissionApp['call']>> | undefined;
    for (let i = 0; i < 2 * CONSOLE_RATE_PER_MINUTE && !refused; i++) {
      const answer = await t.call({ method: 'GET', url: '/console/v1/session', remoteAddress });
      if (answer.statusCode === 429) refused = answer;
    }
    expect(errorOf(refused!)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refused!.json().error.message).toMatch(/client address/);
  });
});

describe('503 service_unavailable', () => {
  it("the console's bucket cannot be read: refused with its RateLimit headers", async () => {
    const answer = await whileUnreachable(t.limiter, () => t.call({ method: 'GET', url: '/console/v1/session' }));
    expect(errorOf(answer)).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(answer.headers['ratelimit-limit']).toBe(String(CONSOLE_RATE_PER_MINUTE));
    expect(answer.headers['ratelimit-remaining']).toBe('0');
  });
});
