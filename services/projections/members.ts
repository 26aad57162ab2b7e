import type { EventData } from '../../contracts/events';
import type { RecordedEvent } from '../eventstore/types';
import { appendedEvent, writesStatement, type InlineProjection, type WritesWithAppend } from '../eventstore/event-store';
import { projectionOf } from './handlers';
import { endedInError } from './usage';

/**
 * The console's read side, kept in the append transaction: members and invitations (from the
 * membership events), key names and who created a key in the console, and the calls that ended
 * in an error (for the overview). Events of other types cost nothing here.
 */
const membershipProjection = projectionOf('console', {
  async MemberInvited(tx, e: RecordedEvent<EventData<'MemberInvited'>>) {
    const d = e.data;
    await tx.query(
      `INSERT INTO invitations (invitation_id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [d.invitation_id, d.workspace_id, d.email, d.role, d.token_hash, d.actor, e.recordedAt, d.expires_at],
    );
  },
  async InvitationCancelled(tx, e: RecordedEvent<EventData<'InvitationCancelled'>>) {
    await tx.query('UPDATE invitations SET cancelled_at = $2 WHERE invitation_id = $1', [e.data.invitation_id, e.recordedAt]);
  },
  async InvitationAccepted(tx, e: RecordedEvent<EventData<'InvitationAccepted'>>) {
    const d = e.data;
    await tx.query('UPDATE invitations SET accepted_at = $2 WHERE invitation_id = $1', [d.invitation_id, e.recordedAt]);
    await tx.query('INSERT INTO members (member_id, workspace_id, email, role, joined_at) VALUES ($1, $2, $3, $4, $5)', [
      d.member_id, d.workspace_id, d.email, d.role, e.recordedAt,
    ]);
  },
  async MemberRoleChanged(tx, e: RecordedEvent<EventData<'MemberRoleChanged'>>) {
    await tx.query('UPDATE members SET role = $2 WHERE member_id = $1', [e.data.member_id, e.data.role]);
  },
  async MemberRemoved(tx, e: RecordedEvent<EventData<'MemberRemoved'>>) {
    await tx.query('UPDATE members SET removed_at = $2 WHERE member_id = $1', [e.data.member_id, e.recordedAt]);
  },
  async ApiKeyRenamed(tx, e: RecordedEvent<EventData<'ApiKeyRenamed'>>) {
    // The key's row belongs to the api_keys projection, which runs first (INLINE_PROJECTIONS order).
    await tx.query('UPDATE api_keys SET name = $2 WHERE id = $1', [e.data.key_id, e.data.name]);
  },
  async ApiKeyCreatedBy(tx, e: RecordedEvent<EventData<'ApiKeyCreatedBy'>>) {
    await tx.query('INSERT INTO api_key_creators (key_id, workspace_id, member_id) VALUES ($1, $2, $3)', [e.data.key_id, e.data.workspace_id, e.data.actor]);
  },
});

/**
 * Plus the calls that ended in an error, for the overview: one statement for all of a
 * batch's, so a group commit of N lookups costs the same statements as one. With no membership
 * event among them, that statement can go in the append's own (withAppend).
 */
export const membersProjection: InlineProjection = {
  name: membershipProjection.name,
  types: [...membershipProjection.types, 'LookupCompleted'],
  async apply(tx, events) {
    await membershipProjection.apply(tx, events);
    const writes = consoleErrorWrites(events, 'recorded');
    if (!writes) return;
    const statement = writesStatement(writes);
    await tx.query(statement.text, statement.params);
  },
  withAppend(events) {
    if (events.some((e) => membershipProjection.types.includes(e.type))) return undefined;
    return { writes: consoleErrorWrites(events, 'pending'), locked: [] };
  },
};

/** The lookups among `events` that ended in an error; positions and instants as in ledgerWrites (inline.ts). */
function consoleErrorWrites(events: RecordedEvent[], form: 'recorded' | 'pending'): WritesWithAppend | null {
  const errors = events.filter(
    (e): e is RecordedEvent<EventData<'LookupCompleted'>> => e.type === 'LookupCompleted' && endedInError(e.data as EventData<'LookupCompleted'>),
  );
  if (errors.length === 0) return null;
  const completed = appendedEvent(form, 'completed', { position: 'u.position', instant: 'u.recorded_at' });
  return {
    ctes: (p) => `console_errors_written AS (
       INSERT INTO console_errors (position, workspace_id, request_id, key_id, operation, error_code, recorded_at)
       SELECT ${completed.position}, u.workspace_id, u.request_id, u.key_id, u.operation, u.error_code, ${completed.instant}
         FROM unnest(${p(1)}::bigint[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::text[], ${p(5)}::text[], ${p(6)}::text[], ${p(7)}::bigint[])
           AS u(position, workspace_id, request_id, key_id, operation, error_code, recorded_at) ${completed.join})`,
    params: [
      errors.map((e) => e.position),
      errors.map((e) => e.data.workspace_id),
      errors.map((e) => e.data.request_id),
      errors.map((e) => e.data.key_id),
      errors.map((e) => e.data.operation),
      errors.map((e) => e.data.error_code),
      errors.map((e) => e.recordedAt.getTime()),
    ],
  };
}

/** Tables the projection owns (for rebuilds); credentials, sessions and sign-in failures are plain state. */
export const MEMBERS_PROJECTION_TABLES = ['members', 'invitations', 'api_key_creators', 'console_errors'];
