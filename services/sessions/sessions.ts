import type { Sql } from '../eventstore/sql';
import { WrongCredentialsError } from '../members/membership';
import { newSecret, normalizeEmail, sha256Hex, type Role } from '../members/rules';
import type { PasswordAttempts } from '../sign-in-throttle/password-attempts';
import { newSessionTimes, sessionNeedsTouch, sessionState } from './rules';

/** The signed-in member a session belongs to. */
export interface SessionMember {
  memberId: string;
  workspaceId: string;
  email: string;
  role: Role;
}

/** Console sessions: sign-in, the member behind a session id, sign-out. Only the id's SHA-256 is stored. */
export class Sessions {
  constructor(
    private readonly sql: Sql,
    private readonly passwords: Pick<PasswordAttempts, 'check'>,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Workspace, email and password, throttled per workspace, email and client address. */
  async signIn(workspaceId: string, emailInput: string, password: string, ip: string): Promise<{ sessionId: string; member: SessionMember }> {
    const email = normalizeEmail(emailInput);
    const { rows } = await this.sql.query<{ member_id: string; role: Role; password_hash: string; version: number }>(
      `SELECT m.member_id, m.role, c.password_hash, c.version FROM members m JOIN member_credentials c ON c.member_id = m.member_id
        WHERE m.workspace_id = $1 AND m.email = $2 AND m.removed_at IS NULL`,
      [workspaceId, email],
    );
    const found = rows[0];
    const matches = await this.passwords.check({ check: 'sign_in', workspaceId, email }, ip, password, found?.password_hash);
    if (!found || !matches) throw new WrongCredentialsError('wrong email or password');
    const member = { memberId: found.member_id, workspaceId, email, role: found.role };
    // The version read before the check: a password change committed meanwhile makes this session dead.
    return { sessionId: await this.create(member.memberId, Number(found.version)), member };
  }

  /** A new session of a member, made with their credentials at `credentialVersion`; returns its id. */
  async create(memberId: string, credentialVersion: number): Promise<string> {
    const id = newSecret();
    const t = newSessionTimes(this.clock());
    await this.sql.query(
      'INSERT INTO console_sessions (id_hash, member_id, created_at, last_seen_at, expires_at, credential_version) VALUES ($1, $2, $3, $4, $5, $6)',
      [sha256Hex(id), memberId, t.createdAt, t.lastSeenAt, t.expiresAt, credentialVersion],
    );
    return id;
  }

  /** The member behind a session id, or null (unknown, ended, expired, idle, member removed). */
  async session(sessionId: string): Promise<SessionMember | null> {
    const hash = sha256Hex(sessionId);
    const { rows } = await this.sql.query<{
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
      await this.sql.query('DELETE FROM console_sessions WHERE id_hash = $1', [hash]);
      return null;
    }
    if (sessionNeedsTouch(times, now)) await this.sql.query('UPDATE console_sessions SET last_seen_at = $2 WHERE id_hash = $1', [hash, now]);
    return { memberId: row.member_id, workspaceId: row.workspace_id, email: row.email, role: row.role };
  }

  /** Sign-out: this member's sessions, every one of them, end. */
  async signOut(member: SessionMember): Promise<void> {
    await this.sql.query('DELETE FROM console_sessions WHERE member_id = $1', [member.memberId]);
  }
}
