import { newEvent } from '../../contracts/events';
import { newInvitationId, newMemberId } from '../common/ids';
import type { EventStore } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import { WrongExpectedVersionError, type NewEvent } from '../eventstore/types';
import { getWorkspace, requireWorkspace } from '../read-models/queries';
import { loadCommonPasswords } from './common-passwords';
import type { HashingQueue } from './hashing';
import { hashPassword } from './passwords';
import {
  actorName,
  decideAccept,
  decideCancelInvitation,
  decideInvite,
  decideRemove,
  decideRoleChange,
  newSecret,
  passwordProblem,
  sha256Hex,
  type ActiveMember,
  type Actor,
  type Decision,
  type Invitation,
  type PasswordProblem,
  type Refusal,
  type Role,
} from './rules';

/** Membership commands of the console. Every membership change is an event. */

export const membersStream = (workspaceId: string) => `members-${workspaceId}`;

export class MembershipRefusedError extends Error {
  constructor(readonly refusal: Refusal) {
    super(`membership change refused: ${refusal}`);
  }
}
/** Workspace, email and password do not match an active member (which of them is not said). */
export class WrongCredentialsError extends Error {}
export class PasswordRuleError extends Error {
  constructor(
    readonly problem: PasswordProblem,
    /** The body field that carried the password. */
    readonly field: 'password' | 'new_password',
  ) {
    super(problem.message);
  }
}

/** The one password rule of sign-up (an accepted invitation), change and reset: refused with its problem. */
export function requireGoodPassword(password: string, field: PasswordRuleError['field']): void {
  const problem = passwordProblem(password, loadCommonPasswords());
  if (problem) throw new PasswordRuleError(problem, field);
}

function unwrap<T>(decision: Decision<T>): T {
  if (!decision.ok) throw new MembershipRefusedError(decision.refusal);
  return decision.value;
}

/** A new session for a member who just proved their password (services/sessions). */
export interface SessionStarter {
  create(memberId: string, credentialVersion: number): Promise<string>;
}

/** A throttled check of a member's password (services/sign-in-throttle). */
export interface PasswordCheck {
  check(subject: { check: 'password'; memberId: string }, ip: string, password: string, storedHash: string | undefined): Promise<boolean>;
}

/** Membership: invitations, members' roles, removal and password changes. */
export class Membership {
  constructor(
    private readonly store: EventStore,
    private readonly sessions: SessionStarter,
    private readonly passwords: PasswordCheck,
    private readonly hashing: HashingQueue,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * A new invitation; the token is returned here only (its SHA-256 is what the log keeps).
   * `inTransaction` runs in the invitation's own transaction (the email carrying the link is queued there).
   */
  async invite(workspaceId: string, actor: Actor, input: { email: string; role: Role }, inTransaction?: (tx: SqlExecutor, invitation: { email: string; token: string; expiresAt: Date }) => Promise<void>) {
    await this.requireWorkspace(workspaceId);
    const token = newSecret();
    const invitationId = newInvitationId();
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
    const ws = await getWorkspace(this.store.sql, valid.workspaceId);
    return {
      email: valid.email,
      role: valid.role,
      workspace_id: valid.workspaceId,
      workspace_name: ws?.name ?? valid.workspaceId,
      expires_at: valid.expiresAt.toISOString(),
    };
  }

  /** The link followed with a password: the member exists from here on and is signed in. */
  async acceptInvitation(token: string, password: string, ip: string): Promise<{ sessionId: string; member: { memberId: string; workspaceId: string; email: string; role: Role } }> {
    requireGoodPassword(password, 'password');
    const invitation = await invitationWhere(this.store.sql, 'token_hash = $1', [sha256Hex(token)]);
    if (!invitation) throw new MembershipRefusedError('invitation_unknown');
    const passwordHash = await this.hashing.admit(ip).run(() => hashPassword(password));
    const memberId = newMemberId();
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
    return { sessionId: await this.sessions.create(memberId, 1), member };
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
  async changePassword(member: { memberId: string; workspaceId: string }, currentPassword: string, newPassword: string, ip: string): Promise<string> {
    const stored = await credentialsOf(this.store.sql, member.memberId);
    const matches = await this.passwords.check({ check: 'password', memberId: member.memberId }, ip, currentPassword, stored?.hash);
    if (!stored || !matches) throw new WrongCredentialsError('the current password is wrong');
    requireGoodPassword(newPassword, 'new_password');
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
    return this.sessions.create(member.memberId, version);
  }

  private async requireWorkspace(id: string) {
    await requireWorkspace(this.store.sql, id);
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
