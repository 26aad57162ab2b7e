import { z } from 'zod';
import { KeyMode } from './events';
import { CACHE_STATUSES, ERRORS_MEANING, idString, isoDateTime, KeyRevokeResponse, LedgerEntry, LowBalanceThreshold, LedgerResponse, ModeFilter, OperationName, queryInt, RATE_LIMIT_PER_MINUTE_DEFAULT, UsageRow } from './http';
import { text } from './text';
import { Watch, WatchCreateRequest, WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecretResponse } from './webhooks';

/**
 * The workspace console's JSON API (`/console/v1`, session cookie) and the admin endpoint that
 * invites a workspace's first member: the schemas of their rows in the endpoint table
 * (endpoints.ts), documented in the OpenAPI document under the tag `Console`.
 */

export const SESSION_COOKIE = 'lookup_console_session';
export const CSRF_HEADER = 'X-CSRF-Token';

const Role = z.enum(['owner', 'member']).meta({ description: '`owner`: everything, members included; `member`: keys and all numbers.' });
const email = () => z.email().max(254);
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
const pathId = (description: string) => z.strictObject({ id: idString().meta({ description }) });
export const KeyPathParams = pathId('The key id (`key_…`).');
export const MemberPathParams = pathId('The member id (`mem_…`).');
export const InvitationPathParams = pathId('The invitation id (`inv_…`).');
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
/** The operator's answer: the link too, to bootstrap a workspace whatever the mail setup (docs/api.md, "Invitations"). */
export const AdminInvitationCreatedResponse = InvitationCreatedResponse.extend({
  link: z.string().meta({ description: 'The one-time link (`/console/accept?token=…&workspace=ws_…`): it works once, for 7 days. Emailed to the invited address as well.' }),
});

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

const KeyModeField = KeyMode.meta({ description: '`live`, or `test`: a test key (`lk_test_…`), answered from the sandbox network and never charged (docs/api.md, "Test keys").' });
export const ConsoleKeyCreateRequest = z.strictObject({
  name: keyName().optional().meta({ description: 'A name to tell the key by (one line of text); without it, the key has none.' }),
  mode: KeyMode.default('live').meta({ description: '`test` for a test key (`lk_test_…`: sandbox answers, never charged); default `live`.' }),
});
export const ConsoleKeyRenameRequest = z.strictObject({ name: keyName().nullable().meta({ description: 'The new name (one line of text), or null to remove the name.' }) });
export const ConsoleKey = z.strictObject({
  id: KeyId,
  prefix: KeyPrefix,
  name: KeyNameOrNull,
  mode: KeyModeField,
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
  mode: KeyModeField,
  created_at: KeyCreatedAt,
  created_by: z.string().meta({ description: 'Email of the member who created it: the signed-in member.' }),
});
export const ConsoleKeyRevoked = z.strictObject({
  id: KeyId,
  revoked_at: isoDateTime().meta({ description: 'When the key was revoked (ISO 8601, UTC); revoking it again answers with the first revocation.' }),
  deleted_watches: KeyRevokeResponse.shape.deleted_watches,
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
    .meta({ description: `The last 10 calls that ended in an error, newest first. ${ERRORS_MEANING}` }),
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
  failing_webhook_endpoints: z
    .array(
      z.strictObject({
        id: z.string().meta({ description: 'The endpoint id (`whep_…`).' }),
        url: z.string().meta({ description: 'Its URL.' }),
        failing_since: isoDateTime().meta({ description: 'Since when a delivery to it was given up (ISO 8601, UTC).' }),
      }),
    )
    .meta({ description: "The workspace's webhook endpoints in state `failing`, oldest first (shown as a banner)." }),
  paused_watches: z
    .array(
      z.strictObject({
        id: z.string().meta({ description: 'The watch id (`wat_…`).' }),
        paused_reason: Watch.shape.paused_reason.unwrap().meta({ description: '`insufficient_credits`: the balance is below the price of a refresh; resumed by itself once it is not.' }),
      }),
    )
    .meta({ description: "The workspace's paused watches, oldest first (shown as a banner)." }),
});
export const ConsoleAlertSettings = z.strictObject({
  low_balance_threshold: LowBalanceThreshold.meta({
    description: 'Credits: a charge that takes the balance below it emails the owners once (re-armed when the balance is back at it or above); null removes the alert.',
  }),
});

const queryDay = () => z.iso.date();
// Metadata rather than described schemas: an optional parameter takes its description from its outer schema only.
// Every console period is half-open, [from, to), as the statement's.
const FIRST_DAY = { description: 'The first UTC day (`YYYY-MM-DD`), included.' };
const END_DAY = { description: 'The UTC day (`YYYY-MM-DD`) the period ends at, excluded: `[from, to)`.' };
export const ConsoleUsageQuery = z.strictObject({
  key_id: idString().optional().meta({ description: "Only this key's rows: a key id of the workspace (another is 404 `not_found`)." }),
  operation: text({ max: 50, kind: 'id' }).optional().meta({ description: "Only this operation's rows." }),
  from: queryDay().optional().meta(FIRST_DAY),
  to: queryDay().optional().meta(END_DAY),
  mode: ModeFilter,
});
export const ConsoleUsageResponse = z.strictObject({
  data: z.array(UsageRow).meta({ description: 'One row per UTC day, key and operation used, oldest day first.' }),
});

export const ConsoleLedgerQuery = z.strictObject({
  request_id: idString().optional().meta({ description: "Only this request id's entries: a call's charge and its refund." }),
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional().meta({ description: 'Entries after this log position: the `next` of the page before.' }),
  limit: queryInt(1, 500).default(50).meta({ description: 'Entries per page, 1–500. Default 50.' }),
  mode: ModeFilter,
});
export const ConsoleLedgerCsvQuery = z.strictObject({
  from: queryDay().meta(FIRST_DAY),
  to: queryDay().meta({ description: 'The UTC day (`YYYY-MM-DD`) the period ends at, excluded: `[from, to)`; not before `from`.' }),
});
const ConsoleLedgerEntry = LedgerEntry.extend({ operation: OperationName.nullable().meta({ description: "The charged call's operation; null for a grant." }) });
/** The columns of `GET /console/v1/ledger.csv`, one line per ledger entry of the period. */
export const CONSOLE_LEDGER_CSV_COLUMNS = ['position', 'recorded_at', 'type', 'request_id', 'key_id', 'credits', 'balance_after'] as const;
export const ConsoleLedgerResponse = z.strictObject({
  data: z
    .array(ConsoleLedgerEntry)
    .meta({ description: 'The entries, oldest first (by log position).' }),
  next: LedgerResponse.shape.next,
});

export const RequestPathParams = pathId("The call's request id (its `X-Request-Id`, `req_…`).");
export const ConsoleRequestStory = z.strictObject({
  request_id: z.string().meta({ description: "The call's request id." }),
  call: z
    .strictObject({
      operation: OperationName,
      key_id: KeyId,
      recorded_at: isoDateTime().meta({ description: 'When the call ended (ISO 8601, UTC).' }),
      outcome: z.enum(['success', 'not_found', 'error']).meta({ description: `\`error\`: ${ERRORS_MEANING}` }),
      status: z.int().meta({ description: 'The HTTP status the call was answered with.' }),
      cache_status: z.enum(CACHE_STATUSES).nullable().meta({ description: 'The answer\'s `X-Cache`; null when no profile was read.' }),
      credits_charged: z.int().meta({ description: 'Credits charged for the call, before any refund.' }),
      error_code: z.string().nullable().meta({ description: 'The `error.code` of the answer; null for a 200.' }),
    })
    .nullable()
    .meta({ description: 'The call as it ended; null while it has not (or if it ended before it ran).' }),
  refund: z
    .strictObject({
      credits: z.int().meta({ description: 'Credits given back.' }),
      cause: z.string().meta({ description: 'Why: the error code refunded, or `not_found_price`.' }),
      recorded_at: isoDateTime().meta({ description: 'When the refund was recorded (ISO 8601, UTC).' }),
    })
    .nullable()
    .meta({ description: 'The refund of the call, if any.' }),
  content_hash: z.string().nullable().meta({ description: 'The `content_hash` (`sha256:…`) of the profile the call fetched; null when it fetched none (a cache hit, a not-found, an error).' }),
  ledger: z.array(ConsoleLedgerEntry).meta({ description: "The call's ledger entries (its charge and its refund), with balance_after." }),
  events: z
    .array(
      z.strictObject({
        position: z.int().meta({ description: "The event's position in the log." }),
        stream: z.string().meta({ description: 'The stream it was appended to.' }),
        type: z.string().meta({ description: 'The event type.' }),
        recorded_at: isoDateTime().meta({ description: 'When it was recorded (ISO 8601, UTC).' }),
      }),
    )
    .meta({ description: 'Every event the call appended to the log, in log order.' }),
});

// ---------- webhooks and watches (the public API's schemas, without its `meta`) ----------

export const ConsoleWebhookEndpoint = WebhookEndpoint.extend({
  failing_reason: z
    .strictObject({
      delivery_id: z.string().meta({ description: 'The delivery given up (`msg_…`).' }),
      attempts: z.int().nonnegative().meta({ description: 'How many attempts it made.' }),
      last_attempt_at: isoDateTime().nullable().meta({ description: 'When its last attempt began (ISO 8601, UTC).' }),
      response_status: z.int().nullable().meta({ description: 'The HTTP status its last attempt got; null when none came.' }),
      error: z.string().nullable().meta({ description: 'Why its last attempt failed.' }),
    })
    .nullable()
    .meta({ description: 'Why the endpoint is `failing`: its newest delivery given up after the retry horizon, and that delivery\'s last attempt; null unless failing.' }),
});
export const ConsoleWebhookEndpointList = z.strictObject({ data: z.array(ConsoleWebhookEndpoint).meta({ description: "The workspace's endpoints, oldest first." }) });
export const ConsoleWebhookEndpointWithSecret = WebhookEndpointWithSecretResponse.shape.data;
export const ConsoleWebhookDeliveryList = z.strictObject({ data: z.array(WebhookDelivery).meta({ description: 'The deliveries, newest first, each with its attempts.' }) });
/** A watch made in the console names the key it refreshes under, as the API's caller is that key. */
const WatchKeyId = () =>
  idString().meta({ description: 'A live key of the workspace: the watch refreshes under it (its usage and rate limit), and is deleted when it is revoked.' });
const [companyWatch, domainWatch, personWatch] = WatchCreateRequest.options;
export const ConsoleWatchCreateRequest = z.discriminatedUnion('operation', [
  companyWatch.extend({ key_id: WatchKeyId() }),
  domainWatch.extend({ key_id: WatchKeyId() }),
  personWatch.extend({ key_id: WatchKeyId() }),
]);
export const ConsoleWatchList = z.strictObject({ data: z.array(Watch).meta({ description: "The workspace's watches, oldest first." }) });
export const ConsoleWatchRun = z.strictObject({
  watch: Watch,
  refresh_request_id: z.string().meta({ description: 'The request id the refresh was charged under (its ledger and usage rows carry it).' }),
  changed: z.boolean().meta({ description: 'True when the content_hash changed (a `profile.changed` webhook follows).' }),
  credits_charged: z.int().nonnegative().meta({ description: 'What the refresh cost.' }),
  credits_remaining: z.int().nonnegative().meta({ description: 'The workspace balance after it.' }),
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
