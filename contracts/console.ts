import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import type { ErrorCode } from './errors';
import { LedgerResponse, StatementQuery, StatementResponse, UsageRow } from './http';
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

export const InvitationCreateRequest = z.strictObject({ email: email(), role: Role.default('member') });
export const InvitationCreatedResponse = z.strictObject({
  invitation_id: z.string(),
  email: z.string(),
  role: Role,
  expires_at: isoDateTime(),
  link: z.string().meta({ description: 'The one-time link: it works once, for 7 days. Shown only in this answer.' }),
});

export const SignInRequest = z.strictObject({ email: email(), password: password() });
export const AcceptInvitationRequest = z.strictObject({ token: text({ max: 100, kind: 'id' }), password: password() });
export const InvitationLookupQuery = z.strictObject({ token: text({ max: 100, kind: 'id' }) });
export const PasswordChangeRequest = z.strictObject({ current_password: password(), new_password: password() });

export const SessionResponse = z.strictObject({
  member: z.strictObject({ id: z.string(), email: z.string(), role: Role }),
  workspace: z.strictObject({ id: z.string(), name: z.string() }),
  csrf_token: z.string().meta({ description: `Send it back as \`${CSRF_HEADER}\` on every POST, PATCH and DELETE.` }),
});

export const InvitationPreview = z.strictObject({ email: z.string(), role: Role, workspace_name: z.string(), expires_at: isoDateTime() });

export const ConsoleKeyCreateRequest = z.strictObject({ name: keyName().optional() });
export const ConsoleKeyRenameRequest = z.strictObject({ name: keyName().nullable() });
export const ConsoleKey = z.strictObject({
  id: z.string(),
  prefix: z.string(),
  name: z.string().nullable(),
  created_at: isoDateTime(),
  created_by: z.string().nullable().meta({ description: 'Email of the member who created it in the console; null for an operator.' }),
  last_used_at: isoDateTime().nullable(),
  revoked_at: isoDateTime().nullable(),
});
export const ConsoleKeyList = z.strictObject({ data: z.array(ConsoleKey) });
export const ConsoleKeyCreated = z.strictObject({
  id: z.string(),
  key: z.string().meta({ description: 'The full key: shown only in this answer.' }),
  prefix: z.string(),
  name: z.string().nullable(),
  rate_limit_per_minute: z.int(),
  created_at: isoDateTime(),
  created_by: z.string(),
});
export const ConsoleKeyRevoked = z.strictObject({ id: z.string(), revoked_at: isoDateTime() });

export const OverviewResponse = z.strictObject({
  balance: z.int(),
  spent_today: z.int().meta({ description: 'Credits charged minus refunded, this UTC day.' }),
  spent_this_month: z.int(),
  days: z.array(
    z.strictObject({
      day: z.iso.date(),
      operations: z.array(z.strictObject({ operation: z.string(), calls: z.int(), credits: z.int() })),
    }),
  ),
  recent_errors: z.array(
    z.strictObject({ request_id: z.string(), key_id: z.string(), operation: z.string(), error_code: z.string(), recorded_at: isoDateTime() }),
  ),
});

const queryDay = () => z.iso.date();
export const ConsoleUsageQuery = z.strictObject({
  key_id: idString().optional(),
  operation: text({ max: 50, kind: 'id' }).optional(),
  from: queryDay().optional(),
  to: queryDay().optional(),
});
export const ConsoleUsageResponse = z.strictObject({ data: z.array(UsageRow) });

const queryInt = (min: number, max: number) => z.string().regex(/^\d{1,16}$/).transform(Number).pipe(z.int().min(min).max(max));
export const ConsoleLedgerQuery = z.strictObject({
  request_id: idString().optional(),
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
  limit: queryInt(1, 500).default(50),
});
export const ConsoleLedgerCsvQuery = z.strictObject({ from: queryDay(), to: queryDay() });

export const MemberPatchRequest = z.strictObject({ role: Role });
export const MembersResponse = z.strictObject({
  members: z.array(z.strictObject({ id: z.string(), email: z.string(), role: Role, joined_at: isoDateTime() })),
  invitations: z.array(
    z.strictObject({ id: z.string(), email: z.string(), role: Role, invited_by: z.string(), created_at: isoDateTime(), expires_at: isoDateTime() }),
  ),
});

// ---------- OpenAPI ----------

export const CONSOLE_TAG = { name: 'Console', description: 'The workspace console: session cookie, CSRF token on every change.' };
export const CONSOLE_SECURITY_SCHEME = {
  type: 'apiKey' as const,
  in: 'cookie' as const,
  name: SESSION_COOKIE,
  description: `Set by sign-in (HttpOnly, SameSite=Lax). POST, PATCH and DELETE also need \`${CSRF_HEADER}\` (from GET /console/v1/session).`,
};

type ErrorResponses = (codes: readonly ErrorCode[], docsUrl: string, replayable: boolean) => ZodOpenApiResponsesObject;

/** The `/console/v1` paths, each answer and error from the schemas above and the catalogue. */
export function consoleOpenApiPaths(docsUrl: string, errorResponses: ErrorResponses): ZodOpenApiPathsObject {
  const op = (
    operationId: string,
    summary: string,
    success: { status: string; schema?: z.ZodType; description?: string },
    extra: { body?: z.ZodType; query?: z.ZodObject; codes?: ErrorCode[]; open?: boolean; csv?: boolean; path?: boolean } = {},
  ): ZodOpenApiOperationObject => {
    const codes: ErrorCode[] = ['invalid_request', ...(extra.open ? [] : (['unauthorized', 'forbidden'] as ErrorCode[])), ...(extra.codes ?? []), 'rate_limited', 'internal_error', 'service_unavailable'];
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
      ...(extra.query || extra.path ? { requestParams: { ...(extra.query ? { query: extra.query } : {}), ...(extra.path ? { path: z.object({ id: z.string() }) } : {}) } } : {}),
      ...(extra.body ? { requestBody: { required: true, content: { 'application/json': { schema: extra.body } } } } : {}),
      responses: {
        [success.status]: { description: success.description ?? summary, ...(Object.keys(content).length > 0 ? { content } : {}) },
        ...errorResponses([...new Set(codes)], docsUrl, false),
      },
    };
  };
  const none = { status: '204', description: 'Done.' };
  return {
    '/console/v1/session': {
      get: op('consoleSession', 'The signed-in member, the workspace and the CSRF token', { status: '200', schema: SessionResponse }),
      post: op('consoleSignIn', 'Sign in (sets the session cookie); slowed, then locked (429), after repeated failures', { status: '200', schema: SessionResponse }, { body: SignInRequest, open: true, codes: ['unauthorized', 'forbidden'] }),
      delete: op('consoleSignOut', 'Sign out: every session of the member ends', none),
    },
    '/console/v1/invitations/preview': {
      get: op('consoleInvitationPreview', 'What an invitation link offers', { status: '200', schema: InvitationPreview }, { query: InvitationLookupQuery, open: true }),
    },
    '/console/v1/invitations/accept': {
      post: op('consoleAcceptInvitation', 'Set a password with a one-time link (signs in)', { status: '200', schema: SessionResponse }, { body: AcceptInvitationRequest, open: true, codes: ['forbidden'] }),
    },
    '/console/v1/password': {
      post: op('consoleChangePassword', 'Change the password: every other session ends', { status: '200', schema: SessionResponse }, { body: PasswordChangeRequest }),
    },
    '/console/v1/overview': { get: op('consoleOverview', 'Balance, credits spent today and this month, 30 days of usage, the last 10 errors', { status: '200', schema: OverviewResponse }) },
    '/console/v1/keys': {
      get: op('consoleListKeys', 'Every key of the workspace (never the key itself)', { status: '200', schema: ConsoleKeyList }),
      post: op('consoleCreateKey', 'Create a key: the full key is in this answer only', { status: '201', schema: ConsoleKeyCreated }, { body: ConsoleKeyCreateRequest }),
    },
    '/console/v1/keys/{id}': {
      patch: op('consoleRenameKey', 'Rename a key', { status: '200', schema: ConsoleKey }, { body: ConsoleKeyRenameRequest, codes: ['not_found'], path: true }),
    },
    '/console/v1/keys/{id}/revoke': {
      post: op('consoleRevokeKey', 'Revoke a key: its next call gets 401 on every instance', { status: '200', schema: ConsoleKeyRevoked }, { codes: ['not_found'], path: true }),
    },
    '/console/v1/usage': {
      get: op('consoleUsage', 'Usage per day, key and operation (the admin API\'s rows)', { status: '200', schema: ConsoleUsageResponse }, { query: ConsoleUsageQuery, codes: ['not_found'] }),
    },
    '/console/v1/ledger': {
      get: op('consoleLedger', 'Ledger entries with balance_after, paged, by request id', { status: '200', schema: LedgerResponse }, { query: ConsoleLedgerQuery }),
    },
    '/console/v1/ledger.csv': {
      get: op('consoleLedgerCsv', 'Ledger entries of a date range (UTC days, inclusive) as CSV', { status: '200', description: 'CSV with a header line.' }, { query: ConsoleLedgerCsvQuery, csv: true }),
    },
    '/console/v1/statement': {
      get: op(
        'consoleStatement',
        "The workspace's statement of a period [from, to) (the admin API's): opening and closing balance, credits granted, charged and refunded by operation; `format=csv`: its ledger entries",
        { status: '200', schema: StatementResponse, description: 'The statement; with `format=csv`, one CSV line per ledger entry of the period.' },
        { query: StatementQuery, csv: true },
      ),
    },
    '/console/v1/members': {
      get: op('consoleMembers', 'Members and pending invitations', { status: '200', schema: MembersResponse }),
    },
    '/console/v1/members/{id}': {
      patch: op('consoleChangeRole', 'Change a member\'s role (owners only; one owner always stays)', none, { body: MemberPatchRequest, codes: ['not_found'], path: true }),
      delete: op('consoleRemoveMember', 'Remove a member: their sessions end at once (owners only)', none, { codes: ['not_found'], path: true }),
    },
    '/console/v1/invitations': {
      post: op('consoleInvite', 'Invite someone (owners only): the answer carries the one-time link', { status: '201', schema: InvitationCreatedResponse }, { body: InvitationCreateRequest }),
    },
    '/console/v1/invitations/{id}': {
      delete: op('consoleCancelInvitation', 'Cancel a pending invitation (owners only)', none, { codes: ['not_found'], path: true }),
    },
  };
}
