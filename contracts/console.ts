import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import type { ErrorCode } from './errors';
import { LedgerResponse, OperationName, RATE_LIMIT_PER_MINUTE_DEFAULT, StatementQuery, StatementResponse, UsageRow } from './http';
import { text } from './text';

/**
 * The workspace console's JSON API (`/console/v1`, session cookie) and the admin endpoint that
 * invites a workspace's first member. Documented in the OpenAPI document under the tag `Console`.
 */

export const SESSION_COOKIE = 'lookup_console_session';
export const CSRF_HEADER = 'X-CSRF-Token';

const isoDateTime = () => z.iso.datetime({ offset: true });
const Role = z.enum(['owner', 'member']).meta({ description: '`owner`: everything, members included; `member`: keys and all numbers.' });
const email = () => z.email().max(254);
const idString = () => text({ max: 200, kind: 'id' });
/** The password rule itself (length in characters) is the domain's: a refusal is a 400 with details. */
const password = () => z.string().max(4096);
const keyName = () => text({ max: 200, kind: 'line' });

// Fields that repeat across answers and paths, described once.
const MemberId = z.string().meta({ description: 'The member id (`mem_…`).' });
const MemberEmail = z.string().meta({ description: 'The email the member signs in with, lower-cased.' });
const WorkspaceId = z.string().meta({ description: 'The workspace id (`ws_…`).' });
const InvitationId = z.string().meta({ description: 'The invitation id (`inv_…`).' });
const InvitedEmail = z.string().meta({ description: 'The invited email, lower-cased: the member will sign in with it.' });
const InvitationExpiresAt = isoDateTime().meta({ description: 'When the link stops working: 7 days after the invitation (ISO 8601, UTC).' });
const InvitationToken = text({ max: 100, kind: 'id' }).meta({ description: 'The `token` of the one-time link (`/console/accept?token=…`).' });
const KeyId = z.string().meta({ description: 'The key id (`key_…`).' });
const KeyPrefix = z.string().meta({ description: 'The first 12 characters of the key (`lk_live_` and 4 more), to recognise it by.' });
const KeyNameOrNull = z.string().nullable().meta({ description: 'The name given to the key; null when it has none.' });
const KeyCreatedAt = isoDateTime().meta({ description: 'When the key was created (ISO 8601, UTC).' });

export const InvitationCreateRequest = z.strictObject({
  email: email().meta({
    description: "The email of the person to invite: they will sign in with it, to this workspace. An email that is already a member's here is 400 `invalid_request` (`already_member`); another workspace's members are no concern of this one.",
  }),
  role: Role.default('member'),
});
export const InvitationCreatedResponse = z.strictObject({
  invitation_id: InvitationId,
  email: InvitedEmail,
  role: Role,
  expires_at: InvitationExpiresAt,
}).meta({ description: 'The one-time link (`/console/accept?token=…&workspace=ws_…`, once, 7 days) is emailed to the invited address only: it is not in this answer.' });

export const SignInRequest = z.strictObject({
  workspace_id: idString().meta({ description: 'The workspace to sign in to (`ws_…`): a member belongs to one workspace, and one email may be a member of several, each with its own password.' }),
  email: email().meta({ description: 'The email the member was invited with (any case).' }),
  password: password().meta({ description: "The member's password." }),
});
export const AcceptInvitationRequest = z.strictObject({
  token: InvitationToken,
  password: password().meta({
    description: 'The password to sign in with from now on. One the password rule refuses (too short, too long, only spaces, or among the most common passwords: `reason` `common_password`) is 400 `invalid_request` with details.',
  }),
});
export const InvitationLookupQuery = z.strictObject({ token: InvitationToken });
export const PasswordChangeRequest = z.strictObject({
  current_password: password().meta({
    description: 'The password the member signs in with now; a wrong one is 401 `unauthorized`. Throttled per member like sign-in: 429 `password_slowed`, then `password_locked` for 15 minutes.',
  }),
  new_password: password().meta({ description: 'The password from now on, under the same rule as when accepting an invitation. Every other session of the member ends.' }),
});

export const PasswordResetAskRequest = z.strictObject({
  workspace_id: idString().meta({ description: 'The workspace whose password is forgotten (`ws_…`).' }),
  email: email().meta({ description: 'The email the member signs in with (any case). The answer is the same whether or not it is a member of the workspace.' }),
});
export const PasswordResetCompleteRequest = z.strictObject({
  token: InvitationToken.meta({ description: 'The `token` of the emailed link (`/console/reset?token=…`).' }),
  new_password: password().meta({ description: 'The password from now on, under the rule of invitations (400 with details otherwise). Every session of the member ends; sign in again.' }),
});

export const SessionResponse = z.strictObject({
  member: z.strictObject({ id: MemberId, email: MemberEmail, role: Role }).meta({ description: 'The signed-in member.' }),
  workspace: z
    .strictObject({ id: WorkspaceId, name: z.string().meta({ description: 'The workspace name.' }) })
    .meta({ description: "The member's workspace: every key and number of the console is this workspace's." }),
  csrf_token: z.string().meta({ description: `Send it back as \`${CSRF_HEADER}\` on every POST, PATCH and DELETE.` }),
});

export const InvitationPreview = z.strictObject({
  email: InvitedEmail,
  role: Role,
  workspace_id: WorkspaceId,
  workspace_name: z.string().meta({ description: 'The name of the workspace the invitation is to.' }),
  expires_at: InvitationExpiresAt,
});

export const ConsoleKeyCreateRequest = z.strictObject({ name: keyName().optional().meta({ description: 'A name to tell the key by (one line of text); without it, the key has none.' }) });
export const ConsoleKeyRenameRequest = z.strictObject({ name: keyName().nullable().meta({ description: 'The new name (one line of text), or null to remove the name.' }) });
export const ConsoleKey = z.strictObject({
  id: KeyId,
  prefix: KeyPrefix,
  name: KeyNameOrNull,
  created_at: KeyCreatedAt,
  created_by: z.string().nullable().meta({ description: 'Email of the member who created it in the console; null for an operator.' }),
  last_used_at: isoDateTime()
    .nullable()
    .meta({ description: "When the key last made an authenticated request of any kind (ISO 8601, UTC; written about once a second); null when it never has." }),
  revoked_at: isoDateTime().nullable().meta({ description: 'When the key was revoked (ISO 8601, UTC); null while it works.' }),
});
export const ConsoleKeyList = z.strictObject({ data: z.array(ConsoleKey).meta({ description: 'Every key of the workspace, revoked ones included, oldest first.' }) });
export const ConsoleKeyCreated = z.strictObject({
  id: KeyId,
  key: z.string().meta({ description: 'The full key: shown only in this answer.' }),
  prefix: KeyPrefix,
  name: KeyNameOrNull,
  rate_limit_per_minute: z.int().meta({ description: `Requests per minute the key may make: ${RATE_LIMIT_PER_MINUTE_DEFAULT} for a key made in the console.` }),
  created_at: KeyCreatedAt,
  created_by: z.string().meta({ description: 'Email of the member who created it: the signed-in member.' }),
});
export const ConsoleKeyRevoked = z.strictObject({
  id: KeyId,
  revoked_at: isoDateTime().meta({ description: 'When the key was revoked (ISO 8601, UTC); revoking it again answers with the first revocation.' }),
});

export const OverviewResponse = z.strictObject({
  balance: z.int().meta({ description: 'The workspace balance now, in credits.' }),
  spent_today: z.int().meta({ description: 'Credits charged minus refunded, this UTC day.' }),
  spent_this_month: z.int().meta({ description: 'Credits charged minus refunded, this UTC calendar month so far.' }),
  days: z
    .array(
      z.strictObject({
        day: z.iso.date().meta({ description: 'The UTC day (`YYYY-MM-DD`).' }),
        operations: z
          .array(
            z.strictObject({
              operation: OperationName,
              calls: z.int().meta({ description: 'Calls of the operation run that day, whatever they ended in.' }),
              credits: z.int().meta({ description: 'Credits charged minus refunded that day.' }),
            }),
          )
          .meta({ description: 'Each operation used that day, by name; empty for a day without any.' }),
      }),
    )
    .meta({ description: 'The last 30 UTC days, oldest first, today included.' }),
  recent_errors: z
    .array(
      z.strictObject({
        request_id: z.string().meta({ description: "The call's request id (its `X-Request-Id`)." }),
        key_id: z.string().meta({ description: 'The key that made the call.' }),
        operation: OperationName,
        error_code: z.string().meta({ description: 'The `error.code` the call was answered with, e.g. `not_found` or `timeout` (GET /v1/errors lists them).' }),
        recorded_at: isoDateTime().meta({ description: 'When the call ended (ISO 8601, UTC).' }),
      }),
    )
    .meta({ description: 'The last 10 calls answered with an error code, not-founds included, newest first.' }),
  last_insufficient_credits: z
    .strictObject({
      request_id: z.string().meta({ description: "The refused call's request id." }),
      key_id: z.string().meta({ description: 'The key that made it.' }),
      path: z.string().meta({ description: 'The endpoint called, e.g. `/v1/company`.' }),
      refused_at: isoDateTime().meta({ description: 'When it was refused (ISO 8601, UTC).' }),
    })
    .nullable()
    .meta({ description: 'The last call of the workspace refused with 402 `insufficient_credits` (shown as a banner), or null when none was.' }),
  low_balance_threshold: z.int().nullable().meta({ description: 'The low-balance alert threshold (credits), or null when none is set.' }),
});
export const ConsoleAlertSettings = z.strictObject({
  low_balance_threshold: z.int().min(0).max(1_000_000_000_000_000).nullable().meta({
    description: 'Credits: a charge that takes the balance below it emails the owners once (re-armed when the balance is back at it or above); null removes the alert.',
  }),
});

const queryDay = () => z.iso.date();
// Metadata rather than described schemas: an optional parameter takes its description from its outer schema only.
const FIRST_DAY = { description: 'The first UTC day (`YYYY-MM-DD`), included.' };
const LAST_DAY = { description: 'The last UTC day (`YYYY-MM-DD`), included.' };
export const ConsoleUsageQuery = z.strictObject({
  key_id: idString().optional().meta({ description: "Only this key's rows: a key id of the workspace (another is 404 `not_found`)." }),
  operation: text({ max: 50, kind: 'id' }).optional().meta({ description: "Only this operation's rows." }),
  from: queryDay().optional().meta(FIRST_DAY),
  to: queryDay().optional().meta(LAST_DAY),
});
export const ConsoleUsageResponse = z.strictObject({
  data: z.array(UsageRow).meta({ description: 'One row per UTC day, key and operation used, oldest day first.' }),
});

const queryInt = (min: number, max: number) => z.string().regex(/^\d{1,16}$/).transform(Number).pipe(z.int().min(min).max(max));
export const ConsoleLedgerQuery = z.strictObject({
  request_id: idString().optional().meta({ description: "Only this request id's entries: a call's charge and its refund." }),
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional().meta({ description: 'Entries after this log position: the `next` of the page before.' }),
  limit: queryInt(1, 500).default(50).meta({ description: 'Entries per page, 1–500. Default 50.' }),
});
export const ConsoleLedgerCsvQuery = z.strictObject({
  from: queryDay().meta(FIRST_DAY),
  to: queryDay().meta({ description: 'The last UTC day (`YYYY-MM-DD`), included; not before `from`.' }),
});

export const MemberPatchRequest = z.strictObject({ role: Role });
export const MembersResponse = z.strictObject({
  members: z
    .array(z.strictObject({ id: MemberId, email: MemberEmail, role: Role, joined_at: isoDateTime().meta({ description: 'When they accepted the invitation (ISO 8601, UTC).' }) }))
    .meta({ description: 'The active members, in the order they joined.' }),
  invitations: z
    .array(
      z.strictObject({
        id: InvitationId,
        email: InvitedEmail,
        role: Role,
        invited_by: z.string().meta({ description: 'Who invited: a member id (`mem_…`), or `operator` when the operator did through the admin API.' }),
        created_at: isoDateTime().meta({ description: 'When the invitation was made (ISO 8601, UTC).' }),
        expires_at: InvitationExpiresAt,
      }),
    )
    .meta({ description: 'Invitations not yet accepted, cancelled or expired, oldest first.' }),
});

// ---------- OpenAPI ----------

export const CONSOLE_TAG = { name: 'Console', description: 'The workspace console: session cookie, CSRF token on every change.' };
export const CONSOLE_SECURITY_SCHEME = {
  type: 'apiKey' as const,
  in: 'cookie' as const,
  name: SESSION_COOKIE,
  description: `Set by sign-in (HttpOnly, SameSite=Lax). POST, PATCH and DELETE also need \`${CSRF_HEADER}\` (from GET /console/v1/session).`,
};

/** The builders of openapi.ts, for the console's per-IP bucket (`'console'`). */
interface AnswerBuilders {
  errorResponses(codes: readonly ErrorCode[], docsUrl: string, options: { replayable: boolean; policy: 'console' }): ZodOpenApiResponsesObject;
  answerHeaders(policy: 'console', status: number): z.ZodObject;
}

/**
 * The errors of every console call beyond its own (`codes`), as the console admits it
 * (services/console-web/plugin.ts): a request it cannot read; its per-IP bucket empty or
 * unreadable (Redis out); no session where one is needed; a POST, PATCH or DELETE from another
 * origin or without the CSRF token; a dependency away; a bug.
 */
function consoleAdmissionErrors(method: 'get' | 'post' | 'patch' | 'delete', open: boolean): ErrorCode[] {
  return ['invalid_request', ...(open ? [] : (['unauthorized'] as const)), ...(method === 'get' ? [] : (['forbidden'] as const)), 'rate_limited', 'internal_error', 'service_unavailable'];
}

/** The `/console/v1` paths, each answer and error from the schemas above and the catalogue. */
export function consoleOpenApiPaths(docsUrl: string, { errorResponses, answerHeaders }: AnswerBuilders): ZodOpenApiPathsObject {
  const op = (
    method: 'get' | 'post' | 'patch' | 'delete',
    operationId: string,
    summary: string,
    success: { status: string; schema?: z.ZodType; description?: string },
    extra: { body?: z.ZodType; query?: z.ZodObject; codes?: ErrorCode[]; open?: boolean; csv?: boolean; path?: z.ZodString } = {},
  ): ZodOpenApiOperationObject => {
    const codes: ErrorCode[] = [...(extra.codes ?? []), ...consoleAdmissionErrors(method, extra.open ?? false)];
    const content = {
      ...(success.schema ? { 'application/json': { schema: success.schema } } : {}),
      ...(extra.csv ? { 'text/csv': { schema: z.string() } } : {}),
    };
    return {
      operationId,
      tags: [CONSOLE_TAG.name],
      summary,
      description: `${summary}. ${extra.open ? 'Open: no session needed.' : `Needs the console session cookie; a POST, PATCH or DELETE also needs \`${CSRF_HEADER}\`.`}`,
      security: extra.open ? [] : [{ consoleSession: [] }],
      ...(extra.query || extra.path ? { requestParams: { ...(extra.query ? { query: extra.query } : {}), ...(extra.path ? { path: z.object({ id: extra.path }) } : {}) } } : {}),
      ...(extra.body ? { requestBody: { required: true, content: { 'application/json': { schema: extra.body } } } } : {}),
      responses: {
        [success.status]: {
          description: success.description ?? summary,
          headers: answerHeaders('console', Number(success.status)),
          ...(Object.keys(content).length > 0 ? { content } : {}),
        },
        ...errorResponses([...new Set(codes)], docsUrl, { replayable: false, policy: 'console' }),
      },
    };
  };
  const none = { status: '204', description: 'Done.' };
  return {
    '/console/v1/session': {
      get: op('get', 'consoleSession', 'The signed-in member, the workspace and the CSRF token', { status: '200', schema: SessionResponse }),
      post: op('post', 'consoleSignIn', 'Sign in to a workspace (sets the session cookie); slowed, then locked (429), after repeated failures', { status: '200', schema: SessionResponse }, { body: SignInRequest, open: true, codes: ['unauthorized'] }),
      delete: op('delete', 'consoleSignOut', 'Sign out: every session of the member ends', none),
    },
    '/console/v1/invitations/preview': {
      get: op('get', 'consoleInvitationPreview', 'What an invitation link offers', { status: '200', schema: InvitationPreview }, { query: InvitationLookupQuery, open: true, codes: ['not_found'] }),
    },
    '/console/v1/invitations/accept': {
      post: op('post', 'consoleAcceptInvitation', 'Set a password with a one-time link (signs in)', { status: '200', schema: SessionResponse }, { body: AcceptInvitationRequest, open: true, codes: ['not_found'] }),
    },
    '/console/v1/password': {
      post: op('post', 'consoleChangePassword', 'Change the password (the current one is throttled per member): every other session ends', { status: '200', schema: SessionResponse }, { body: PasswordChangeRequest }),
    },
    '/console/v1/password-reset': {
      post: op(
        'post',
        'consoleAskPasswordReset',
        'Ask for a password reset link by email (1 hour, works once): the same 202 whether or not the email is a member; at most 3 emails per member and hour, 10 asks per client address and minute',
        { status: '202', description: 'Asked: a member of the workspace with this email gets the link.' },
        { body: PasswordResetAskRequest, open: true },
      ),
    },
    '/console/v1/password-reset/complete': {
      post: op('post', 'consoleCompletePasswordReset', "Set a new password with a reset link's token: every session of the member ends", none, { body: PasswordResetCompleteRequest, open: true, codes: ['not_found'] }),
    },
    '/console/v1/overview': { get: op('get', 'consoleOverview', 'Balance, credits spent today and this month, 30 days of usage, the last 10 errors', { status: '200', schema: OverviewResponse }) },
    '/console/v1/alerts': {
      patch: op('patch', 'consoleSetAlerts', "Set or remove the workspace's low-balance alert threshold (owners only)", { status: '200', schema: ConsoleAlertSettings }, { body: ConsoleAlertSettings, codes: ['forbidden'] }),
    },
    '/console/v1/keys': {
      get: op('get', 'consoleListKeys', 'Every key of the workspace (never the key itself)', { status: '200', schema: ConsoleKeyList }),
      post: op('post', 'consoleCreateKey', 'Create a key: the full key is in this answer only', { status: '201', schema: ConsoleKeyCreated }, { body: ConsoleKeyCreateRequest }),
    },
    '/console/v1/keys/{id}': {
      patch: op('patch', 'consoleRenameKey', 'Rename a key', { status: '200', schema: ConsoleKey }, { body: ConsoleKeyRenameRequest, codes: ['not_found'], path: KeyId }),
    },
    '/console/v1/keys/{id}/revoke': {
      post: op('post', 'consoleRevokeKey', 'Revoke a key: its next call gets 401 on every instance', { status: '200', schema: ConsoleKeyRevoked }, { codes: ['not_found'], path: KeyId }),
    },
    '/console/v1/usage': {
      get: op('get', 'consoleUsage', 'Usage per day, key and operation (the admin API\'s rows)', { status: '200', schema: ConsoleUsageResponse }, { query: ConsoleUsageQuery, codes: ['not_found'] }),
    },
    '/console/v1/ledger': {
      get: op('get', 'consoleLedger', 'Ledger entries with balance_after, paged, by request id', { status: '200', schema: LedgerResponse }, { query: ConsoleLedgerQuery }),
    },
    '/console/v1/ledger.csv': {
      get: op('get', 'consoleLedgerCsv', 'Ledger entries of a date range (UTC days, inclusive) as CSV', { status: '200', description: 'CSV with a header line.' }, { query: ConsoleLedgerCsvQuery, csv: true }),
    },
    '/console/v1/statement': {
      get: op(
        'get',
        'consoleStatement',
        "The workspace's statement of a period [from, to) (the admin API's): opening and closing balance, credits granted, charged and refunded by operation; `format=csv`: its ledger entries",
        { status: '200', schema: StatementResponse, description: 'The statement; with `format=csv`, one CSV line per ledger entry of the period.' },
        { query: StatementQuery, csv: true },
      ),
    },
    '/console/v1/members': {
      get: op('get', 'consoleMembers', 'Members and pending invitations', { status: '200', schema: MembersResponse }, { codes: ['forbidden'] }),
    },
    '/console/v1/members/{id}': {
      patch: op('patch', 'consoleChangeRole', 'Change a member\'s role (owners only; one owner always stays)', none, { body: MemberPatchRequest, codes: ['not_found'], path: MemberId }),
      delete: op('delete', 'consoleRemoveMember', 'Remove a member: their sessions end at once (owners only)', none, { codes: ['not_found'], path: MemberId }),
    },
    '/console/v1/invitations': {
      post: op('post', 'consoleInvite', 'Invite someone (owners only): the one-time link is emailed to the invited address', { status: '201', schema: InvitationCreatedResponse }, { body: InvitationCreateRequest }),
    },
    '/console/v1/invitations/{id}': {
      delete: op('delete', 'consoleCancelInvitation', 'Cancel a pending invitation (owners only)', none, { codes: ['not_found'], path: InvitationId }),
    },
  };
}
