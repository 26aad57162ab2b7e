import { newEvent } from '../../contracts/events';
import type { EventStore } from '../eventstore/event-store';
import type { SqlExecutor } from '../eventstore/sql';
import { enqueueEmail, type OutgoingEmail } from '../email/email-outbox';
import type { HashingQueue } from './hashing';
import { membersStream, requireGoodPassword } from './membership';
import { hashPassword } from './passwords';
import { decideResetRequest, decideResetUse, type PasswordReset, type ResetRefusal } from './password-reset-rules';
import { newSecret, normalizeEmail, sha256Hex } from './rules';

export class PasswordResetRefusedError extends Error {
  constructor(readonly refusal: ResetRefusal) {
    super(`password reset refused: ${refusal}`);
  }
}

/**
 * What the reset email says, given its token: the caller knows the public URL and the texts. Runs
 * inside the transaction: it must not query (on the embedded database that would wait on itself).
 */
export type ResetEmailOf = (input: { to: string; token: string; expiresAt: Date; workspaceId: string }) => OutgoingEmail;

/**
 * Password resets: a one-time link by email (only its SHA-256 kept, in `password_resets` and the
 * events), an hour to use it, once; using it sets the password and ends every session of the member.
 */
export class PasswordResets {
  constructor(
    private readonly store: EventStore,
    /** The instance's one queue of password hashes, shared with sign-in and membership. */
    private readonly hashing: HashingQueue,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * Emails a reset link when `email` is an active member of the workspace (and not too often);
   * otherwise does nothing. The caller answers the same either way.
   */
  async request(workspaceId: string, emailInput: string, emailOf: ResetEmailOf): Promise<void> {
    const email = normalizeEmail(emailInput);
    const { rows } = await this.store.sql.query<{ member_id: string }>('SELECT member_id FROM members WHERE workspace_id = $1 AND email = $2 AND removed_at IS NULL', [workspaceId, email]);
    const memberId = rows[0]?.member_id;
    if (!memberId) return;
    const token = newSecret();
    const tokenHash = sha256Hex(token);
    await this.store.transaction(async (tx) => {
      const now = this.clock();
      // The member's row, locked: two asks at once count each other.
      await tx.sql.query('SELECT 1 FROM member_credentials WHERE member_id = $1 FOR UPDATE', [memberId]);
      const { rows: recent } = await tx.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM password_resets WHERE member_id = $1 AND created_at > $2', [
        memberId,
        new Date(now.getTime() - 3600_000),
      ]);
      const decided = decideResetRequest(Number(recent[0]?.n ?? 0), now);
      if (!decided.send) return;
      await tx.sql.query('INSERT INTO password_resets (token_hash, member_id, workspace_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        tokenHash, memberId, workspaceId, now, decided.expiresAt,
      ]);
      await enqueueEmail(tx.sql, emailOf({ to: email, token, expiresAt: decided.expiresAt, workspaceId }), now);
      await tx.append(membersStream(workspaceId), [
        newEvent('PasswordResetRequested', { workspace_id: workspaceId, member_id: memberId, token_hash: tokenHash, expires_at: decided.expiresAt.toISOString() }),
      ]);
    });
  }

  /** Sets the password with a link's token: every session of the member ends, every other open link of theirs dies. */
  async complete(token: string, newPassword: string, ip: string): Promise<{ workspaceId: string }> {
    const tokenHash = sha256Hex(token);
    // Checked before the (slow) hash: a made-up token costs no scrypt.
    requireUsable(await resetOf(this.store.sql, tokenHash, false), this.clock());
    requireGoodPassword(newPassword, 'new_password');
    const hash = await this.hashing.admit(ip).run(() => hashPassword(newPassword));
    return this.store.transaction(async (tx) => {
      const now = this.clock();
      // Read again under a row lock: of two uses of one link at once, the second finds it used.
      const reset = requireUsable(await resetOf(tx.sql, tokenHash, true), now);
      await tx.sql.query('UPDATE password_resets SET used_at = $2 WHERE member_id = $1 AND used_at IS NULL', [reset.memberId, now]);
      await tx.sql.query('UPDATE member_credentials SET password_hash = $2, changed_at = $3, version = version + 1 WHERE member_id = $1', [reset.memberId, hash, now]);
      await tx.sql.query('DELETE FROM console_sessions WHERE member_id = $1', [reset.memberId]);
      await tx.append(membersStream(reset.workspaceId), [
        newEvent('PasswordResetCompleted', { workspace_id: reset.workspaceId, member_id: reset.memberId, token_hash: tokenHash, actor: reset.memberId }),
      ]);
      return { workspaceId: reset.workspaceId };
    });
  }
}

function requireUsable(reset: PasswordReset | undefined, now: Date): PasswordReset {
  const decided = decideResetUse(reset, now);
  if (!decided.ok) throw new PasswordResetRefusedError(decided.refusal);
  return decided.reset;
}

async function resetOf(executor: SqlExecutor, tokenHash: string, lock: boolean): Promise<PasswordReset | undefined> {
  const { rows } = await executor.query<{ member_id: string; workspace_id: string; expires_at: Date; used_at: Date | null; active: boolean }>(
    `SELECT r.member_id, r.workspace_id, r.expires_at, r.used_at, (m.removed_at IS NULL) AS active
       FROM password_resets r JOIN members m ON m.member_id = r.member_id WHERE r.token_hash = $1${lock ? ' FOR UPDATE OF r' : ''}`,
    [tokenHash],
  );
  const r = rows[0];
  return r && { memberId: r.member_id, workspaceId: r.workspace_id, expiresAt: new Date(r.expires_at), usedAt: r.used_at && new Date(r.used_at), memberActive: r.active };
}
