// Console accounts over HTTP, on PostgreSQL, with two instances of the service on one database:
// the parallel requests of each race are fired at the running servers, split between them.
// - password attempts are counted before the hash runs: a burst gets exactly what one attempt
//   after the other would (3, then a wait, the 5th locks), at sign-in and at a password change;
// - a password change kills every session made with the old password, even one whose sign-in
//   was still running when the change committed;
// - an email is a member of each workspace on its own: claiming or probing it in one workspace
//   neither blocks nor reveals another's member;
// - the password hashes one address (and all of them) may ask for at once are bounded: 429;
// - the most common passwords are refused.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../services/api/server';
import { loadConfig } from '../../services/config/config';
import { HASHING_CONCURRENCY, HASHING_PER_ADDRESS, HASHING_QUEUE } from '../../services/members/rules';
import { LOCK_AFTER_FAILURES, SLOW_AFTER_FAILURES } from '../../services/sign-in-throttle/rules';
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/servers';
import { startTestSmtpServer, type TestSmtpServer } from '../support/smtp-server';
import { adminCaller } from '../support/admin-call';

const ADMIN_TOKEN = 'console-accounts-admin-token-'.padEnd(40, 'x');
const PASSWORD = 'the right password 2468';
const databaseAvailable = serverUrl('postgres') !== undefined;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** A distinct client address per use (TRUST_PROXY is on): throttles and buckets are per address. */
let addressCounter = 0;
const newAddress = () => `10.${Math.floor(++addressCounter / 250)}.${addressCounter % 250}.7`;

describe.runIf(databaseAvailable)('console accounts on PostgreSQL, two instances', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let servers: RunningServer[] = [];
  let smtp: TestSmtpServer;
  /** The instance of the i-th request of a burst: every other one. */
  const base = (i = 0) => servers[i % servers.length]!.url;

  beforeAll(async () => {
    database = await createTestDatabase();
    smtp = await startTestSmtpServer();
    const env = {
      SMTP_URL: smtp.url,
      PORT: '0',
      ADMIN_TOKEN,
      DATABASE_URL: database.url,
      SOURCE_URL: 'sandbox',
      DATA_DIR: '/tmp',
      TRUST_PROXY: 'true',
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '60000',
    };
    servers = [await startServer(loadConfig(env)), await startServer(loadConfig(env))];
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
    await smtp?.close();
    await database?.drop();
  });

  async function call(method: string, path: string, options: { body?: unknown; cookie?: string; address?: string; instance?: number; csrf?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'x-forwarded-for': options.address ?? '127.0.0.1' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.cookie) headers.cookie = options.cookie;
    if (options.csrf) headers['x-csrf-token'] = options.csrf;
    const res = await fetch(base(options.instance) + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  const admin = adminCaller(base, ADMIN_TOKEN);

  const newWorkspace = async (name: string): Promise<string> => (await admin('POST', '/admin/v1/workspaces', { name, credits: 10 })).id;
  const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
  const cookieOf = (a: Answer) => a.headers.get('set-cookie')!.split(';')[0]!;

  /** Accepts an invitation: the member's cookie and CSRF token. */
  async function accept(link: string, password: string, address = newAddress()) {
    const accepted = await call('POST', '/console/v1/invitations/accept', { body: { token: tokenOf(link), password }, address });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    return { cookie: cookieOf(accepted), csrf: accepted.body.csrf_token as string, workspaceId: accepted.body.workspace.id as string };
  }

  async function newMember(email: string, role: 'owner' | 'member' = 'owner') {
    const workspaceId = await newWorkspace(`ws of ${email}`);
    const invitation = await admin('POST', `/admin/v1/workspaces/${workspaceId}/invitations`, { email, role });
    return { email, ...(await accept(invitation.link, PASSWORD)) };
  }

  const signIn = (workspaceId: string, email: string, password: string, address: string, instance = 0) =>
    call('POST', '/console/v1/session', { body: { workspace_id: workspaceId, email, password }, address, instance });

  const statuses = (answers: Answer[]) => answers.map((a) => a.status);
  const count = (answers: Answer[], status: number) => answers.filter((a) => a.status === status).length;
  const reasons = (answers: Answer[]) => new Set(answers.filter((a) => a.status === 429).map((a) => a.body.error.reason));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /**
   * How many attempts one after the other may have their password checked within `ms` of the
   * first: 3 at once, the 4th 1 s after the 3rd, the 5th 2 s after that (and it locks). A burst
   * that takes longer than a second on a loaded machine may rightly get the 4th through.
   */
  const checkedWithin = (ms: number) => SLOW_AFTER_FAILURES + (ms >= 1000 ? 1 : 0) + (ms >= 3000 ? 1 : 0);

  /** Fires `burst` until the subject is locked: every answer, burst by burst, and each burst's duration. */
  async function untilLocked(burst: () => Promise<Answer[]>, lockedReason: string) {
    const bursts: { answers: Answer[]; ms: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const started = performance.now();
      const answers = await burst();
      bursts.push({ answers, ms: performance.now() - started });
      if (reasons(answers).has(lockedReason)) break;
      await sleep(1100);
    }
    return bursts;
  }

  describe('sign-in attempts counted before the password is checked', () => {
    it('40 wrong passwords at once, on two instances: no more are checked than one after the other would be (3, then one per wait), and the 5th check locks', async () => {
      const m = await newMember('burst@example.com');
      const address = newAddress();
      const burst = () => Promise.all(Array.from({ length: 40 }, (_, i) => signIn(m.workspaceId, m.email, `wrong password ${i} 123`, address, i)));

      const bursts = await untilLocked(burst, 'sign_in_locked');
      const [first] = bursts;
      console.info(`bursts of 40 until locked: ${bursts.map((b) => `${count(b.answers, 401)} checked in ${Math.round(b.ms)} ms`).join('; ')}`);
      expect(count(first!.answers, 401), statuses(first!.answers).join(',')).toBeGreaterThanOrEqual(SLOW_AFTER_FAILURES);
      expect(count(first!.answers, 401)).toBeLessThanOrEqual(checkedWithin(first!.ms));
      for (const a of first!.answers.filter((x) => x.status === 429 && x.body.error.reason === 'sign_in_slowed')) {
        expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(a.body.error).toMatchObject({ code: 'rate_limited', retry_after_seconds: Number(a.headers.get('retry-after')) });
      }
      // However the attempts fell into bursts, exactly 5 were checked before the lock.
      expect(bursts.reduce((n, b) => n + count(b.answers, 401), 0)).toBe(LOCK_AFTER_FAILURES);
      expect(bursts.every((b) => count(b.answers, 401) + count(b.answers, 429) === 40)).toBe(true);
      // Locked: the right password waits its 15 minutes like any other.
      const right = await signIn(m.workspaceId, m.email, PASSWORD, address);
      expect(right.status).toBe(429);
      expect(right.body.error.reason).toBe('sign_in_locked');
      // Another address is not locked out by this one's failures.
      expect((await signIn(m.workspaceId, m.email, PASSWORD, newAddress())).status).toBe(200);
    });

    it('39 wrong passwords and the right one in one burst: only the first 3 to arrive are checked, so the right one no longer wins by parallelism', async () => {
      const m = await newMember('burst-right@example.com');
      const address = newAddress();
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => signIn(m.workspaceId, m.email, i === 20 ? PASSWORD : `wrong password ${i} 123`, address, i)),
      );
      const checked = answers.filter((a) => a.status !== 429);
      expect(checked.length, statuses(answers).join(',')).toBeGreaterThanOrEqual(SLOW_AFTER_FAILURES);
      expect(checked.length).toBeLessThanOrEqual(checkedWithin(performance.now() - started));
      expect(count(answers, 200)).toBeLessThanOrEqual(1);
      if (answers[20]!.status === 429) expect(count(answers, 200)).toBe(0);
    });
  });

  describe('the current password of a password change', () => {
    it('is throttled per member like sign-in: 40 guesses at once with a stolen cookie check 3, and the 5th locks, from any address', async () => {
      const m = await newMember('stolen-cookie@example.com');
      const guess = (i: number, address = newAddress()) =>
        call('POST', '/console/v1/password', { body: { current_password: `guess number ${i} 1234`, new_password: 'attacker chosen 98765' }, cookie: m.cookie, csrf: m.csrf, address, instance: i });
      const bursts = await untilLocked(() => Promise.all(Array.from({ length: 40 }, (_, i) => guess(i))), 'password_locked');
      const [first] = bursts;
      expect(count(first!.answers, 401), statuses(first!.answers).join(',')).toBeGreaterThanOrEqual(SLOW_AFTER_FAILURES);
      expect(count(first!.answers, 401)).toBeLessThanOrEqual(checkedWithin(first!.ms));
      expect(reasons(first!.answers)).toContain('password_slowed');
      expect(bursts.reduce((n, b) => n + count(b.answers, 401), 0)).toBe(LOCK_AFTER_FAILURES);
      const right = await call('POST', '/console/v1/password', { body: { current_password: PASSWORD, new_password: 'attacker chosen 98765' }, cookie: m.cookie, csrf: m.csrf, address: newAddress() });
      expect(right.status).toBe(429);
      expect(right.body.error).toMatchObject({ code: 'rate_limited', reason: 'password_locked' });
      // Sign-in is another check: the member still signs in with the unchanged password.
      expect((await signIn(m.workspaceId, m.email, PASSWORD, newAddress())).status).toBe(200);
    });
  });

  describe('sessions and password changes', () => {
    it('sign-ins with the old password still running when the change commits make only dead sessions', async () => {
      const m = await newMember('racing-sessions@example.com');
      const NEW = 'a brand new password 1357';
      const signIns: Promise<Answer & { at: number }>[] = [];
      const timed = async (answer: Promise<Answer>) => ({ ...(await answer), at: performance.now() });
      // A steady stream of sign-ins with the old password at one instance (each from its own
      // address, so no throttle refuses them), the change sent to the other early in it.
      let change: Promise<Answer & { at: number }> | undefined;
      for (let i = 0; i < 30; i++) {
        signIns.push(timed(signIn(m.workspaceId, m.email, PASSWORD, newAddress(), 1)));
        if (i === 2) change = timed(call('POST', '/console/v1/password', { body: { current_password: PASSWORD, new_password: NEW }, cookie: m.cookie, csrf: m.csrf, address: newAddress(), instance: 0 }));
        await sleep(15);
      }
      const changed = await change!;
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      const answers = await Promise.all(signIns);
      const made = answers.filter((a) => a.status === 200);
      const madeAfterChange = made.filter((a) => a.at > changed.at);
      console.info(`sign-ins with the old password around the change: ${made.length} signed in (${madeAfterChange.length} answered after the change), ${count(answers, 401)} wrong, ${count(answers, 429)} busy`);
      // The race happened: sign-ins that checked the old password ended after the change committed.
      expect(madeAfterChange.length).toBeGreaterThan(0);
      const alive = [];
      for (const a of made) {
        const session = await call('GET', '/console/v1/session', { cookie: cookieOf(a), address: newAddress() });
        if (session.status === 200) alive.push(a);
        else expect(session.body.error.code).toBe('unauthorized');
      }
      expect(alive).toHaveLength(0);
      // The old cookie is dead too; the one the change gave back works, and so does the new password.
      expect((await call('GET', '/console/v1/session', { cookie: m.cookie })).status).toBe(401);
      expect((await call('GET', '/console/v1/session', { cookie: cookieOf(changed) })).status).toBe(200);
      expect((await signIn(m.workspaceId, m.email, NEW, newAddress())).status).toBe(200);
    });
  });

  describe('one email in several workspaces', () => {
    it("an owner of A who invites an address neither blocks its owner's membership of B nor learns that it is one, and never holds the link (it is emailed to the address)", async () => {
      const victim = 'victim@example.com';
      const b = await newWorkspace('workspace B');
      const bInvitation = await admin('POST', `/admin/v1/workspaces/${b}/invitations`, { email: victim, role: 'member' });
      const real = await accept(bInvitation.link, PASSWORD);
      expect(real.workspaceId).toBe(b);

      const owner = await newMember('owner-of-a@example.com');
      const probe = async (email: string) =>
        call('POST', '/console/v1/invitations', { body: { email, role: 'member' }, cookie: owner.cookie, csrf: owner.csrf, address: newAddress() });
      // The same answer for an address that is B's member and for one that is nobody's.
      const ofB = await probe(victim);
      const ofNobody = await probe('nobody-yet@example.com');
      expect(ofB.status, JSON.stringify(ofB.body)).toBe(201);
      expect(ofNobody.status).toBe(201);
      expect(Object.keys(ofB.body).sort()).toEqual(Object.keys(ofNobody.body).sort());
      // The link went to the address itself, not back to A's owner.
      expect(ofB.body).not.toHaveProperty('link');
      const mailed = async () => {
        const until = Date.now() + 10_000;
        for (;;) {
          const mail = smtp.received.find((m) => m.text?.includes(`workspace=${owner.workspaceId}`) && m.text.includes('/console/accept') && JSON.stringify(m.to).includes(victim));
          if (mail) return /https?:\/\/\S+/.exec(mail.text!)![0];
          if (Date.now() > until) throw new Error('the invitation email did not arrive');
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const link = await mailed();

      // The address's owner accepts A's invitation too, with another password.
      const claimed = await accept(link, 'owner of a chose this 42');
      expect(claimed.workspaceId).toBe(owner.workspaceId);

      // B's member is untouched: signs in to B with their password; A's password opens A only.
      const intoB = await signIn(b, victim, PASSWORD, newAddress());
      expect(intoB.status).toBe(200);
      expect(intoB.body).toMatchObject({ member: { email: victim, role: 'member' }, workspace: { id: b } });
      expect((await signIn(b, victim, 'owner of a chose this 42', newAddress())).status).toBe(401);
      expect((await signIn(owner.workspaceId, victim, PASSWORD, newAddress())).status).toBe(401);
      // And B's owner can still invite the address elsewhere: a new invitation to B of another email works as before.
      const again = await admin('POST', `/admin/v1/workspaces/${b}/invitations`, { email: 'colleague@example.com' });
      expect(again.link).toContain(`workspace=${b}`);
    });

    it('a sign-in to a workspace that does not exist, or without naming one, is refused like a wrong password, or as bad input', async () => {
      const m = await newMember('named-workspace@example.com');
      const unknown = await signIn('ws_00000000000000000000000000', m.email, PASSWORD, newAddress());
      expect(unknown.status).toBe(401);
      expect(unknown.body.error.code).toBe('unauthorized');
      const unnamed = await call('POST', '/console/v1/session', { body: { email: m.email, password: PASSWORD }, address: newAddress() });
      expect(unnamed.status).toBe(400);
      expect(unnamed.body.error.details).toEqual([expect.objectContaining({ field: 'workspace_id', issue: 'required' })]);
    });
  });

  describe('password hashing is bounded', () => {
    it('50 sign-ins for random emails from one address at once: a few are checked, the rest get 429 at once, and a member elsewhere still signs in', async () => {
      const m = await newMember('real-member@example.com');
      const flooder = newAddress();
      const flood = Array.from({ length: 50 }, (_, i) => signIn(m.workspaceId, `random-${randomBytes(6).toString('hex')}@example.com`, 'some password 12345', flooder, i));
      const meanwhile = signIn(m.workspaceId, m.email, PASSWORD, newAddress());
      const answers = await Promise.all(flood);
      // Per instance, at most HASHING_PER_ADDRESS of this address's hashes are admitted at a time:
      // most of the flood is turned away before any hashing.
      expect(count(answers, 401), statuses(answers).join(',')).toBeGreaterThanOrEqual(1);
      expect(count(answers, 429)).toBeGreaterThanOrEqual(25);
      console.info(`flood of 50 from one address: ${count(answers, 401)} checked (at most ${HASHING_PER_ADDRESS} at a time per instance), ${count(answers, 429)} turned away`);
      expect(reasons(answers)).toEqual(new Set(['password_checks_busy']));
      const busy = answers.find((a) => a.status === 429)!;
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(busy.body).toMatchObject({ error: { code: 'rate_limited', type: 'rate_limit_error', retry_after_seconds: 1, reason: 'password_checks_busy' } });
      expect((await meanwhile).status).toBe(200);
    });

    it('and in total: 80 sign-ins for random emails from 80 addresses at once, on one instance: past the queue, 429', async () => {
      const m = await newMember('total-bound@example.com');
      const answers = await Promise.all(
        Array.from({ length: 80 }, () => signIn(m.workspaceId, `random-${randomBytes(6).toString('hex')}@example.com`, 'some password 12345', newAddress(), 0)),
      );
      expect(count(answers, 429), statuses(answers).join(',')).toBeGreaterThanOrEqual(1);
      expect(reasons(answers)).toEqual(new Set(['password_checks_busy']));
      expect(count(answers, 401)).toBeGreaterThanOrEqual(HASHING_CONCURRENCY + HASHING_QUEUE);
    });
  });

  describe('common passwords', () => {
    it('are refused when accepting an invitation and when changing the password, beside the length rule', async () => {
      const ws = await newWorkspace('common passwords');
      const invitation = await admin('POST', `/admin/v1/workspaces/${ws}/invitations`, { email: 'common@example.com' });
      for (const password of ['password1234', 'Qwerty123456', '123456789012']) {
        const refused = await call('POST', '/console/v1/invitations/accept', { body: { token: tokenOf(invitation.link), password }, address: newAddress() });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatchObject({ code: 'invalid_request', reason: 'common_password', details: [expect.objectContaining({ field: 'password' })] });
      }
      const m = await accept(invitation.link, PASSWORD);
      const change = await call('POST', '/console/v1/password', { body: { current_password: PASSWORD, new_password: 'iloveyou1234' }, cookie: m.cookie, csrf: m.csrf, address: newAddress() });
      expect(change.status).toBe(400);
      expect(change.body.error).toMatchObject({ reason: 'common_password', details: [expect.objectContaining({ field: 'new_password' })] });
    });
  });
});
