import { ulid } from 'ulid';
import { newEvent, streams } from '../../contracts/events';
import type { EventStore } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import { WrongExpectedVersionError, type NewEvent } from '../eventstore/types';
import { UnknownKeyError, UnknownWorkspaceError, type Ledger } from '../ledger/ledger';
import { loadCommonPasswords } from './common-passwords';
import { consolePasswordChecks } from '../metrics/metrics';
import { HashingBusyError, HashingQueue } from './hashing';
import { decoyHash, hashPassword, verifyPassword } from './passwords';
import {
  actorName,
  decideAccept,
  decideCancelInvitation,
  decideInvite,
  decideRemove,
  decideRoleChange,
  endAttempt,
  newSecret,
  newSessionTimes,
  normalizeEmail,
  passwordProblem,
  sessionNeedsTouch,
  sessionState,
  sha256Hex,
  startAttempt,
  type ActiveMember,
  type Actor,
  type AttemptRecord,
  type Decision,
  type Invitation,
  type PasswordProblem,
  type Refusal,
  type Role,
} from './rules';

/** Membership commands and sign-in for the console. Every membership change is an event. */

export const membersStream = (workspaceId: string) => `members-${workspaceId}`;

export class MembershipRefusedError extends Error {
  constructor(readonly refusal: Refusal) {
    super(`membership change refused: ${refusal}`);
  }
}
/** Workspace, email and password do not match an active member (which of them is not said). */
export class WrongCredentialsError extends Error {}
/** Too many attempts at a password: a sign-in's (`sign_in`) or a password change's current one (`password`). */
export class PasswordAttemptsThrottledError extends Error {
  constructor(
    readonly check: 'sign_in' | 'password',
    readonly retryAfterSeconds: number,
    readonly locked: boolean,
  ) {
    super(`${check} ${locked ? 'locked' : 'slowed'}`);
  }
}
export class PasswordRuleError extends Error {
  constructor(
    readonly problem: PasswordProblem,
    /** The body field that carried the password. */
    readonly field: 'password' | 'new_password',
  ) {
    super(problem.message);
  }
}

/** The signed-in member a session belongs to. */
export interface SessionMember {
  memberId: string;
  workspaceId: string;
  email: string;
  role: Role;
}

export interface RevocationNotifier {
  revoked(keyId: string): Promise<void>;
}

function unwrap<T>(decision: Decision<T>): T {
  if (!decision.ok) throw new MembershipRefusedError(decision.refusal);
  return decision.value;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Whose password is being checked: the throttle's key (`console_password_attempts.subject`). */
const signInSubject = (workspaceId: string, email: string, ip: string) => `sign_in:${workspaceId}:${email}:${ip}`;
const passwordSubject = (memberId: string) => `password:${memberId}`;

export class Members {
  private readonly hashing = new HashingQueue();
  private readonly commonPasswords = loadCommonPasswords();

  constructor(
    private readonly store: EventStore,
    private readonly ledger: Ledger,
    private readonly authenticator: RevocationNotifier,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  // ---------- membership ----------

  /**
   * A new invitation; the token is returned here only (its SHA-256 is what the log keeps).
   * `inTransaction` runs in the invitation's own transaction (the email carrying the link is queued there).
   */
  async invite(workspaceId: string, actor: Actor, input: { email: string; role: Role }, inTransaction?: (tx: SqlExecutor, invitation: { email: string; token: string; expiresAt: Date }) => Promise<void>) {
    await this.requireWorkspace(workspaceId);
    const token = newSecret();
    const invitationId = `inv_${ulid()}`;
    const { email, expiresAt } = await this.onMembers(workspaceId, async (tx, members) => {
      const decided = unwrap(decideInvite(members, actor, input, this.clock()));
      const event = newEvent('MemberInvited', {
        workspace_id: workspaceId,
        invitation_id: invitationId,
        email: decided.email,
        role: input.role,
        token_hash: sha256Hex(token),
        expires_at: decided.expiresAt.toISOString(),
        actor: actorName(actor),
      });
      await inTransaction?.(tx, { email: decided.email, token, expiresAt: decided.expiresAt });
      return { events: [event], result: decided };
    });
    return { invitation_id: invitationId, email, role: input.role, expires_at: expiresAt.toISOString(), token };
  }

  async cancelInvitation(workspaceId: string, actor: Actor, invitationId: string): Promise<void> {
    await this.onMembers(workspaceId, async (tx) => {
      const invitation = await invitationWhere(tx, 'invitation_id = $1 AND workspace_id = $2', [invitationId, workspaceId]);
      unwrap(decideCancelInvitation(invitation, actor));
      return { events: [newEvent('InvitationCancelled', { workspace_id: workspaceId, invitation_id: invitationId, actor: actorName(actor) })], result: undefined };
    });
  }

  /** What an invitation link offers, before a password is chosen; refused like an acceptance would be. */
  async describeInvitation(token: string) {
    const invitation = await invitationWhere(this.store.sql, 'token_hash = $1', [sha256Hex(token)]);
    const members = invitation ? await activeMembers(this.store.sql, invitation.workspaceId) : [];
    const valid = unwrap(decideAccept(invitation, members, this.clock()));
    const ws = await this.ledger.getWorkspace(valid.workspaceId);
    return {
      email: valid.email,
      role: valid.role,
      workspace_id: valid.workspaceId,
      workspace_name: ws?.name ?? valid.workspaceId,
      expires_at: valid.expiresAt.toISOString(),
    };
  }

  /** The link followed with a password: the member exists from here on and is signed in. */
  async acceptInvitation(token: string, password: string, ip: string): Promise<{ sessionId: string; member: SessionMember }> {
    this.requireGoodPassword(password, 'password');
    const invitation = await invitationWhere(this.store.sql, 'token_hash = $1', [sha256Hex(token)]);
    if (!invitation) throw new MembershipRefusedError('invitation_unknown');
    const passwordHash = await this.hashing.admit(ip).run(() => hashPassword(password));
    const memberId = `mem_${ulid()}`;
    const member = await this.onMembers(invitation.workspaceId, async (tx, members) => {
      // Read again under the stream's version: a second use of the same link loses here.
      const current = await invitationWhere(tx, 'invitation_id = $1', [invitation.invitationId]);
      const valid = unwrap(decideAccept(current, members, this.clock()));
      await tx.query('INSERT INTO member_credentials (member_id, password_hash, changed_at, version) VALUES ($1, $2, $3, 1)', [memberId, passwordHash, this.clock()]);
      const event = newEvent('InvitationAccepted', {
        workspace_id: valid.workspaceId,
        invitation_id: valid.invitationId,
        member_id: memberId,
        email: valid.email,
        role: valid.role,
        actor: memberId,
      });
      return { events: [event], result: { memberId, workspaceId: valid.workspaceId, email: valid.email, role: valid.role } };
    });
    return { sessionId: await this.createSession(memberId, 1), member };
  }

  async changeRole(workspaceId: string, actor: Actor, memberId: string, role: Role): Promise<void> {
    await this.onMembers(workspaceId, async (_tx, members) => {
      const { changed } = unwrap(decideRoleChange(members, actor, memberId, role));
      const events = changed ? [newEvent('MemberRoleChanged', { workspace_id: workspaceId, member_id: memberId, role, actor: actorName(actor) })] : [];
      return { events, result: undefined };
    });
  }

  /** Removes a member; every session of theirs ends in the same transaction. */
  async remove(workspaceId: string, actor: Actor, memberId: string): Promise<void> {
    await this.onMembers(workspaceId, async (tx, members) => {
      unwrap(decideRemove(members, actor, memberId));
      await tx.query('DELETE FROM console_sessions WHERE member_id = $1', [memberId]);
      return { events: [newEvent('MemberRemoved', { workspace_id: workspaceId, member_id: memberId, actor: actorName(actor) })], result: undefined };
    });
  }

  /**
   * A new password ends every session of the member (their credential version moves on, so even a
   * sign-in with the old password still in flight makes a dead session); the caller gets a fresh
   * one. The current password is checked under the member's own throttle, as a sign-in is.
   */
  async changePassword(member: SessionMember, currentPassword: string, newPassword: string, ip: string): Promise<string> {
    const stored = await credentialsOf(this.store.sql, member.memberId);
    const matches = await this.checkPassword('password', passwordSubject(member.memberId), ip, currentPassword, stored?.hash);
    if (!stored || !matches) throw new WrongCredentialsError('the current password is wrong');
    this.requireGoodPassword(newPassword, 'new_password');
    const hash = await this.hashing.admit(ip).run(() => hashPassword(newPassword));
    const version = await this.store.transaction(async (tx) => {
      // Only over the credentials just checked: of two changes at once, the second finds the version moved.
      const { rows } = await tx.sql.query<{ version: number }>(
        'UPDATE member_credentials SET password_hash = $2, changed_at = $3, version = version + 1 WHERE member_id = $1 AND version = $4 RETURNING version',
        [member.memberId, hash, this.clock(), stored.version],
      );
      if (rows.length === 0) throw new WrongCredentialsError('the current password is wrong');
      await tx.sql.query('DELETE FROM console_sessions WHERE member_id = $1', [member.memberId]);
      await tx.append(membersStream(member.workspaceId), [
        newEvent('PasswordChanged', { workspace_id: member.workspaceId, member_id: member.memberId, actor: member.memberId }),
      ]);
      return Number(rows[0]!.version);
    });
    return this.createSession(member.memberId, version);
  }

  private requireGoodPassword(password: string, field: 'password' | 'new_password') {
    const problem = passwordProblem(password, this.commonPasswords);
    if (problem) throw new PasswordRuleError(problem, field);
  }

  // ---------- sign-in and sessions ----------

  /**
   * Workspace, email and password, throttled per workspace, email and client address. The counts
   * live in PostgreSQL (or PGlite), beside the members: every instance sees the same counts, they
   * survive a restart, and the embedded default needs no Redis.
   */
  async signIn(workspaceId: string, emailInput: string, password: string, ip: string): Promise<{ sessionId: string; member: SessionMember }> {
    const email = normalizeEmail(emailInput);
    const { rows } = await this.store.sql.query<{ member_id: string; role: Role; password_hash: string; version: number }>(
      `SELECT m.member_id, m.role, c.password_hash, c.version FROM members m JOIN member_credentials c ON c.member_id = m.member_id
        WHERE m.workspace_id = $1 AND m.email = $2 AND m.removed_at IS NULL`,
      [workspaceId, email],
    );
    const found = rows[0];
    const matches = await this.checkPassword('sign_in', signInSubject(workspaceId, email, ip), ip, password, found?.password_hash);
    if (!found || !matches) throw new WrongCredentialsError('wrong email or password');
    const member = { memberId: found.member_id, workspaceId, email, role: found.role };
    // The version read before the check: a password change committed meanwhile makes this session dead.
    return { sessionId: await this.createSession(member.memberId, Number(found.version)), member };
  }

  /**
   * One attempt at a password, counted before the hash runs (startAttempt) and settled after it
   * (endAttempt). Without a stored hash, a decoy is checked, so the timing tells nothing.
   */
  private async checkPassword(check: 'sign_in' | 'password', subject: string, ip: string, password: string, storedHash: string | undefined): Promise<boolean> {
    const start = await this.changeAttempts(subject, true, (record) => {
      const decided = startAttempt(record, this.clock());
      return { next: decided.allowed ? decided.next : record, result: decided };
    });
    if (!start.allowed) {
      consolePasswordChecks.inc({ check, outcome: start.locked ? 'locked' : 'slowed' });
      throw new PasswordAttemptsThrottledError(check, start.retryAfterSeconds, start.locked);
    }
    let outcome: 'wrong' | 'right' | 'not_run' = 'not_run';
    try {
      const ticket = this.hashing.admit(ip);
      const matches = await ticket.run(async () => verifyPassword(password, storedHash ?? (await decoyHash())));
      outcome = matches && storedHash !== undefined ? 'right' : 'wrong';
      return outcome === 'right';
    } catch (err) {
      if (err instanceof HashingBusyError) consolePasswordChecks.inc({ check, outcome: 'busy' });
      throw err;
    } finally {
      if (outcome !== 'not_run') consolePasswordChecks.inc({ check, outcome });
      await this.changeAttempts(subject, false, (record) => ({ next: record && endAttempt(record, outcome, this.clock()), result: undefined }));
    }
  }

  /** Reads a subject's record under a row lock, decides, and writes (or deletes) it, in one transaction. */
  private async changeAttempts<T>(subject: string, create: boolean, change: (record: AttemptRecord | undefined) => { next: AttemptRecord | null | undefined; result: T }): Promise<T> {
    return this.store.sql.transaction(async (tx) => {
      // `create`: a row to lock even for the first attempt (concurrent first attempts then queue on
      // it too), inserted or locked and read in one statement.
      const { rows } = await tx.query<{ failures: number; in_flight: number; last_failure_at: Date; locked_until: Date | null }>(
        create
          ? `INSERT INTO console_password_attempts (subject, failures, in_flight, last_failure_at) VALUES ($1, 0, 0, $2)
             ON CONFLICT (subject) DO UPDATE SET subject = EXCLUDED.subject RETURNING failures, in_flight, last_failure_at, locked_until`
          : 'SELECT failures, in_flight, last_failure_at, locked_until FROM console_password_attempts WHERE subject = $1 FOR UPDATE',
        create ? [subject, this.clock()] : [subject],
      );
      const r = rows[0];
      const record = r && { failures: Number(r.failures), inFlight: Number(r.in_flight), lastFailureAt: new Date(r.last_failure_at), lockedUntil: r.locked_until && new Date(r.locked_until) };
      const { next, result } = change(record);
      if (next === null || (next && next.failures === 0 && next.inFlight === 0)) {
        await tx.query('DELETE FROM console_password_attempts WHERE subject = $1', [subject]);
      } else if (next && next !== record) {
        await tx.query('UPDATE console_password_attempts SET failures = $2, in_flight = $3, last_failure_at = $4, locked_until = $5 WHERE subject = $1', [
          subject, next.failures, next.inFlight, next.lastFailureAt, next.lockedUntil,
        ]);
      }
      return result;
    });
  }

  private async createSession(memberId: string, credentialVersion: number): Promise<string> {
    const id = newSecret();
    const t = newSessionTimes(this.clock());
    await this.store.sql.query(
      'INSERT INTO console_sessions (id_hash, member_id, created_at, last_seen_at, expires_at, credential_version) VALUES ($1, $2, $3, $4, $5, $6)',
      [sha256Hex(id), memberId, t.createdAt, t.lastSeenAt, t.expiresAt, credentialVersion],
    );
    return id;
  }

  /** The member behind a session id, or null (unknown, ended, expired, idle, member removed). */
  async session(sessionId: string): Promise<SessionMember | null> {
    const hash = sha256Hex(sessionId);
    const { rows } = await this.store.sql.query<{
      member_id: string; workspace_id: string; email: string; role: Role; created_at: Date; last_seen_at: Date; expires_at: Date; credential_version: number; version: number;
    }>(
      `SELECT s.member_id, m.workspace_id, m.email, m.role, s.created_at, s.last_seen_at, s.expires_at, s.credential_version, c.version
         FROM console_sessions s JOIN members m ON m.member_id = s.member_id AND m.removed_at IS NULL
         JOIN member_credentials c ON c.member_id = s.member_id
        WHERE s.id_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row) return null;
    const times = { createdAt: new Date(row.created_at), lastSeenAt: new Date(row.last_seen_at), expiresAt: new Date(row.expires_at) };
    const now = this.clock();
    if (sessionState({ ...times, credentialVersion: Number(row.credential_version) }, now, Number(row.version)) !== 'valid') {
      await this.store.sql.query('DELETE FROM console_sessions WHERE id_hash = $1', [hash]);
      return null;
    }
    if (sessionNeedsTouch(times, now)) await this.store.sql.query('UPDATE console_sessions SET last_seen_at = $2 WHERE id_hash = $1', [hash, now]);
    return { memberId: row.member_id, workspaceId: row.workspace_id, email: row.email, role: row.role };
  }

  /** Sign-out: this member's sessions, every one of them, end. */
  async signOut(member: SessionMember): Promise<void> {
    await this.store.sql.query('DELETE FROM console_sessions WHERE member_id = $1', [member.memberId]);
  }

  // ---------- keys, through the Ledger: the same events as the admin API ----------

  async createKey(member: SessionMember, name: string | undefined) {
    const key = await this.ledger.createKey(member.workspaceId, { name });
    await this.store.append(streams.apiKey(key.id), [newEvent('ApiKeyCreatedBy', { key_id: key.id, workspace_id: member.workspaceId, actor: member.memberId })], 1);
    return { ...key, created_by: member.email };
  }

  async renameKey(member: SessionMember, keyId: string, name: string | null) {
    await this.requireKeyOf(member.workspaceId, keyId);
    await this.store.append(streams.apiKey(keyId), [newEvent('ApiKeyRenamed', { key_id: keyId, workspace_id: member.workspaceId, name, actor: member.memberId })]);
  }

  /** Revoked in the log, then marked for every instance (the authenticator's revocation marks). */
  async revokeKey(member: SessionMember, keyId: string) {
    await this.requireKeyOf(member.workspaceId, keyId);
    const revoked = await this.ledger.revokeKey(keyId);
    await this.authenticator.revoked(keyId);
    return revoked;
  }

  async requireKeyOf(workspaceId: string, keyId: string): Promise<void> {
    const { rows } = await this.store.sql.query('SELECT 1 FROM api_keys WHERE id = $1 AND workspace_id = $2', [keyId, workspaceId]);
    if (rows.length === 0) throw new UnknownKeyError(keyId);
  }

  // ---------- reads ----------

  async listMembers(workspaceId: string) {
    const { rows: members } = await this.store.sql.query<{ member_id: string; email: string; role: Role; joined_at: Date }>(
      'SELECT member_id, email, role, joined_at FROM members WHERE workspace_id = $1 AND removed_at IS NULL ORDER BY joined_at, member_id',
      [workspaceId],
    );
    const { rows: invitations } = await this.store.sql.query<{ invitation_id: string; email: string; role: Role; invited_by: string; created_at: Date; expires_at: Date }>(
      `SELECT invitation_id, email, role, invited_by, created_at, expires_at FROM invitations
        WHERE workspace_id = $1 AND accepted_at IS NULL AND cancelled_at IS NULL AND expires_at > $2 ORDER BY created_at, invitation_id`,
      [workspaceId, this.clock()],
    );
    return {
      members: members.map((m) => ({ id: m.member_id, email: m.email, role: m.role, joined_at: iso(m.joined_at)! })),
      invitations: invitations.map((i) => ({ id: i.invitation_id, email: i.email, role: i.role, invited_by: i.invited_by, created_at: iso(i.created_at)!, expires_at: iso(i.expires_at)! })),
    };
  }

  /** Who created each console-made key: key id → email (removed members included). */
  async keyCreators(workspaceId: string): Promise<Map<string, string>> {
    const { rows } = await this.store.sql.query<{ key_id: string; email: string }>(
      'SELECT c.key_id, m.email FROM api_key_creators c JOIN members m ON m.member_id = c.member_id WHERE c.workspace_id = $1',
      [workspaceId],
    );
    return new Map(rows.map((r) => [r.key_id, r.email]));
  }

  async recentErrors(workspaceId: string, limit = 10) {
    const { rows } = await this.store.sql.query<{ request_id: string; key_id: string; operation: string; error_code: string; recorded_at: Date }>(
      'SELECT request_id, key_id, operation, error_code, recorded_at FROM console_errors WHERE workspace_id = $1 ORDER BY position DESC LIMIT $2',
      [workspaceId, limit],
    );
    return rows.map((r) => ({ ...r, recorded_at: iso(r.recorded_at)! }));
  }

  /** Ledger lines recorded in [from, to), oldest first, for the CSV download. */
  async ledgerBetween(workspaceId: string, from: Date, to: Date) {
    await this.requireWorkspace(workspaceId);
    const { rows } = await this.store.sql.query<{ position: number; type: string; request_id: string | null; key_id: string | null; credits: number; balance_after: number; recorded_at: Date }>(
      `SELECT position, type, request_id, key_id, credits, balance_after, recorded_at FROM ledger_entries
        WHERE workspace_id = $1 AND recorded_at >= $2 AND recorded_at < $3 ORDER BY position`,
      [workspaceId, from, to],
    );
    return rows.map((r) => ({ ...r, position: Number(r.position), credits: Number(r.credits), balance_after: Number(r.balance_after), recorded_at: iso(r.recorded_at)! }));
  }

  private async requireWorkspace(id: string) {
    if (!(await this.ledger.getWorkspace(id))) throw new UnknownWorkspaceError(id);
  }

  /**
   * Reads the workspace's members at the stream's current version, decides, and appends at that
   * version: two concurrent changes cannot both pass a rule such as "one owner stays". The loser
   * decides again on the new state.
   */
  private async onMembers<T>(workspaceId: string, decide: (tx: SqlExecutor, members: ActiveMember[]) => Promise<{ events: NewEvent[]; result: T }>): Promise<T> {
    const stream = membersStream(workspaceId);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.transaction(async (tx) => {
          const { rows } = await tx.sql.query<{ version: number }>('SELECT version FROM streams WHERE stream = $1', [stream]);
          const version = rows[0] ? Number(rows[0].version) : 'no_stream';
          const { events, result } = await decide(tx.sql, await activeMembers(tx.sql, workspaceId));
          if (events.length > 0) await tx.append(stream, events, version);
          return result;
        });
      } catch (err) {
        if (!(err instanceof WrongExpectedVersionError) || attempt >= 5) throw err;
      }
    }
  }
}

async function activeMembers(executor: SqlExecutor, workspaceId: string): Promise<ActiveMember[]> {
  const { rows } = await executor.query<{ member_id: string; email: string; role: Role }>(
    'SELECT member_id, email, role FROM members WHERE workspace_id = $1 AND removed_at IS NULL',
    [workspaceId],
  );
  return rows.map((r) => ({ memberId: r.member_id, email: r.email, role: r.role }));
}

async function invitationWhere(executor: SqlExecutor, where: string, params: unknown[]): Promise<Invitation | undefined> {
  const { rows } = await executor.query<{ invitation_id: string; workspace_id: string; email: string; role: Role; expires_at: Date; accepted_at: Date | null; cancelled_at: Date | null }>(
    `SELECT invitation_id, workspace_id, email, role, expires_at, accepted_at, cancelled_at FROM invitations WHERE ${where}`,
    params,
  );
  const r = rows[0];
  return (
    r && {
      invitationId: r.invitation_id,
      workspaceId: r.workspace_id,
      email: r.email,
      role: r.role,
      expiresAt: new Date(r.expires_at),
      acceptedAt: r.accepted_at && new Date(r.accepted_at),
      cancelledAt: r.cancelled_at && new Date(r.cancelled_at),
    }
  );
}

async function credentialsOf(executor: SqlExecutor, memberId: string): Promise<{ hash: string; version: number } | undefined> {
  const { rows } = await executor.query<{ password_hash: string; version: number }>('SELECT password_hash, version FROM member_credentials WHERE member_id = $1', [memberId]);
  return rows[0] && { hash: rows[0].password_hash, version: Number(rows[0].version) };
}
