import { z } from 'zod';
import type { ERROR_CATALOGUE, ErrorCode } from './errors';

/**
 * The events of the log: the contract with projections, the audit and analytics consumers.
 * Bump a type's `schemaVersion` on any change a consumer could notice.
 */
const workspaceId = z.string().startsWith('ws_');
const keyId = z.string().startsWith('key_');
const requestId = z.string().startsWith('req_');
const credits = z.number().int().nonnegative();
const watchId = z.string().startsWith('wat_');
const webhookEndpointId = z.string().startsWith('whep_');
/** What ended a watch (docs/api.md "Watches"): its own DELETE, or its webhook endpoint's. */
export const WatchDeletedReason = z.enum(['watch_deleted', 'webhook_endpoint_deleted', 'key_revoked']);
export type WatchDeletedReason = z.infer<typeof WatchDeletedReason>;

export const Operation = z.enum(['company', 'domain', 'person_url', 'person_name', 'search']);
export type Operation = z.infer<typeof Operation>;

/** A key's mode: `live` keys fetch from the data source and cost credits, `test` keys (`lk_test_…`) neither (docs/api.md, "Test keys"). */
export const KeyMode = z.enum(['live', 'test']);
export type KeyMode = z.infer<typeof KeyMode>;

/**
 * The mode of a key or of a call, on the events they produce. Absent means `live`: the field came
 * after release 1.0.0 and live events are written as before, so it is optional with that default.
 */
const mode = KeyMode.optional().meta({ default: 'live', description: 'The key\'s mode: `test` for a test key (`lk_test_…`) and its calls, which cost nothing and are kept apart; absent means `live`.' });

/** The error codes whose charge is refunded in full (billing rule `refunded` of the error catalogue). */
export type RefundedErrorCode = { [C in ErrorCode]: (typeof ERROR_CATALOGUE)[C]['billing'] extends 'refunded' ? C : never }[ErrorCode];

/**
 * Every `cause` of a `LookupRefunded`, with what it means: the one list docs/api.md ("Refunds")
 * and docs/events.md ("Refund causes") explain, a test keeping both in step. Exactly the
 * not-found price and every refunded error code (the `satisfies` refuses one more or one less).
 */
export const REFUND_CAUSES = {
  not_found_price:
    'A definitive not-found fetched live costs less than the success price charged up front: the difference is refunded (a person by name: 3 charged, 2 refunded, 1 kept).',
  upstream_error: 'The fetch from the source failed in an unexpected way: the whole charge.',
  parse_error: 'The data was fetched but could not be read: the whole charge.',
  blocked: 'The source refused the fetch for now: the whole charge.',
  source_rate_limited: 'The source slowed fetching down: the whole charge.',
  timeout: 'No definitive answer arrived in time: the whole charge.',
  internal_error:
    'A failure on the service\'s side after the charge: the whole charge, in the same answer; or a charge its instance left unsettled (it died mid-call), refunded by the sweeper.',
  service_unavailable:
    'The database became unreachable after the charge: the call was answered 503 with nothing charged, and the charge is voided as soon as the database answers.',
} as const satisfies Record<'not_found_price' | RefundedErrorCode, string>;
export type RefundCause = keyof typeof REFUND_CAUSES;

export const EVENT_SCHEMAS = {
  WorkspaceCreated: z.object({
    workspace_id: workspaceId,
    name: z.string(),
    max_concurrency: z.number().int().positive(),
  }),
  CreditsGranted: z.object({ workspace_id: workspaceId, amount: z.number().int().positive(), reason: z.string().nullable() }),
  LimitsChanged: z.object({ workspace_id: workspaceId, max_concurrency: z.number().int().positive() }),
  ApiKeyCreated: z.object({
    key_id: keyId,
    workspace_id: workspaceId,
    name: z.string().nullable(),
    prefix: z.string(),
    key_hash: z.string().regex(/^[0-9a-f]{64}$/),
    rate_limit_per_minute: z.number().int().positive(),
    mode,
  }),
  ApiKeyRevoked: z.object({ key_id: keyId, workspace_id: workspaceId }),
  LookupCharged: z.object({
    workspace_id: workspaceId,
    request_id: requestId,
    key_id: keyId,
    operation: Operation,
    credits: credits,
    mode,
  }),
  LookupRefunded: z.object({
    workspace_id: workspaceId,
    request_id: requestId,
    key_id: keyId,
    operation: Operation,
    credits: credits,
    // A string on the wire (an enum would narrow the released schema); the producers are typed.
    cause: z.string().meta({ description: `Why: ${Object.keys(REFUND_CAUSES).join(', ')} (the error code refunded, or \`not_found_price\`; docs/events.md, "Refund causes").` }),
    mode,
  }),
  LookupCompleted: z.object({
    workspace_id: workspaceId,
    request_id: requestId,
    key_id: keyId,
    operation: Operation,
    outcome: z.enum(['success', 'not_found', 'error']),
    // STALE: the live fetch failed and a cached copy answered (`error_code` says why). A new enum value: compatible (docs/events.md).
    cache_status: z.enum(['HIT', 'MISS', 'REFRESH', 'STALE']).nullable(),
    credits_charged: credits,
    error_code: z.string().nullable(),
    mode,
  }),
  ProfileFetched: z.object({
    entity: z.string(),
    kind: z.enum(['company', 'person', 'search']),
    data: z.record(z.string(), z.unknown()),
    content_hash: z.string().startsWith('sha256:'),
    fetched_at: z.iso.datetime(),
    aliases: z.array(z.string()),
  }),
  ProfileNotFound: z.object({
    kind: z.enum(['company', 'person']),
    alias: z.string(),
    code: z.enum(['not_found', 'unresolvable_id']),
    reason: z.string(),
    fetched_at: z.iso.datetime(),
  }),
  // The workspace console. Membership events live on `members-<workspace_id>`;
  // `actor` is who did it: a member id, or `operator` (the admin token).
  MemberInvited: z.object({
    workspace_id: workspaceId,
    invitation_id: z.string().startsWith('inv_'),
    email: z.string(),
    role: z.enum(['owner', 'member']),
    /** SHA-256 of the one-time token; the token itself is only in the link. */
    token_hash: z.string().regex(/^[0-9a-f]{64}$/),
    expires_at: z.iso.datetime(),
    actor: z.string(),
  }),
  InvitationCancelled: z.object({ workspace_id: workspaceId, invitation_id: z.string().startsWith('inv_'), actor: z.string() }),
  InvitationAccepted: z.object({
    workspace_id: workspaceId,
    invitation_id: z.string().startsWith('inv_'),
    member_id: z.string().startsWith('mem_'),
    email: z.string(),
    role: z.enum(['owner', 'member']),
    actor: z.string(),
  }),
  MemberRoleChanged: z.object({ workspace_id: workspaceId, member_id: z.string().startsWith('mem_'), role: z.enum(['owner', 'member']), actor: z.string() }),
  MemberRemoved: z.object({ workspace_id: workspaceId, member_id: z.string().startsWith('mem_'), actor: z.string() }),
  /** The hash itself is plain state (member_credentials), never in the log. */
  PasswordChanged: z.object({ workspace_id: workspaceId, member_id: z.string().startsWith('mem_'), actor: z.string() }),
  /**
   * A password reset link was emailed to a member (on `members-<workspace_id>`). Only the SHA-256 of
   * its one-time token; a request for an address that is no member records nothing.
   */
  PasswordResetRequested: z.object({
    workspace_id: workspaceId,
    member_id: z.string().startsWith('mem_'),
    token_hash: z.string().regex(/^[0-9a-f]{64}$/),
    expires_at: z.iso.datetime(),
  }),
  /** The link was used: a new password, every session of the member ended. No hash of the password. */
  PasswordResetCompleted: z.object({
    workspace_id: workspaceId,
    member_id: z.string().startsWith('mem_'),
    token_hash: z.string().regex(/^[0-9a-f]{64}$/),
    actor: z.string(),
  }),
  // Balance alerts, on `balance-alerts-<workspace_id>` (services/alerts): never on the workspace's
  // ledger stream, whose chain and audit they do not touch.
  /** The workspace's low-balance threshold was set (credits) or removed (null); it is armed from here on. */
  LowBalanceThresholdChanged: z.object({ workspace_id: workspaceId, low_balance_threshold: credits.nullable(), actor: z.string() }),
  /**
   * A charge took the balance below the threshold while the alert was armed: once per crossing
   * (a grant or refund back to the threshold or above re-arms it). Emailed to the owners.
   */
  BalanceLow: z.object({
    workspace_id: workspaceId,
    balance: credits,
    low_balance_threshold: credits,
    /** The charge that crossed it. */
    request_id: requestId,
  }),
  /** On the key's stream. */
  ApiKeyRenamed: z.object({ key_id: keyId, workspace_id: workspaceId, name: z.string().nullable(), actor: z.string() }),
  /** On the key's stream, right after its ApiKeyCreated, when a member created it in the console. */
  ApiKeyCreatedBy: z.object({ key_id: keyId, workspace_id: workspaceId, actor: z.string() }),
  // Watches (docs/api.md "Watches"): the schedule lives on `watch-<watch_id>`; the scheduler's
  // table (watches) is written in the same transaction as each of these.
  WatchCreated: z.object({
    watch_id: watchId,
    workspace_id: workspaceId,
    key_id: keyId,
    operation: z.enum(['company', 'domain', 'person']),
    body: z.record(z.string(), z.string()),
    every: z.enum(['1d', '7d', '30d']),
    webhook_endpoint_id: webhookEndpointId,
  }),
  /** Absent `reason` (events before it existed): `watch_deleted`. */
  WatchDeleted: z.object({
    watch_id: watchId,
    workspace_id: workspaceId,
    reason: WatchDeletedReason.optional().meta({
      default: 'watch_deleted',
      description: 'What ended the watch: `watch_deleted` (DELETE /v1/watches/{id}), `webhook_endpoint_deleted` (DELETE of the webhook endpoint it delivered to) or `key_revoked` (the key that created it was revoked); absent means `watch_deleted`.',
    }),
  }),
  /** The workspace's balance is below a refresh's price: its watches wait (WatchResumed once it is not). */
  WatchPaused: z.object({ watch_id: watchId, workspace_id: workspaceId, reason: z.enum(['insufficient_credits']) }),
  WatchResumed: z.object({ watch_id: watchId, workspace_id: workspaceId }),
  /**
   * On the entity's stream (`company-…`, `person-…`), after the ProfileFetched of a watch's refresh
   * whose content_hash differs from the one the watch saw last. Delivered as `profile.changed`.
   */
  ProfileChanged: z.object({
    entity: z.string(),
    kind: z.enum(['company', 'person']),
    before_hash: z.string().startsWith('sha256:'),
    after_hash: z.string().startsWith('sha256:'),
    changed_fields: z.array(z.string()).meta({ description: 'The top-level fields of `data` added, removed or changed, sorted.' }),
    watch_id: watchId,
    workspace_id: workspaceId,
    webhook_endpoint_id: webhookEndpointId,
    request_id: requestId,
  }),
  /** On the endpoint's stream (`webhookendpoint-<id>`): a delivery was given up after the retry horizon; the endpoint is `failing`. */
  WebhookEndpointFailing: z.object({
    workspace_id: workspaceId,
    endpoint_id: webhookEndpointId,
    url: z.string(),
    delivery_id: z.string().startsWith('msg_'),
    attempts: z.number().int().positive(),
    last_error: z.string().nullable(),
  }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export type EventData<T extends EventType> = z.infer<(typeof EVENT_SCHEMAS)[T]>;

export const EVENT_SCHEMA_VERSION: Record<EventType, number> = {
  WorkspaceCreated: 1,
  CreditsGranted: 1,
  LimitsChanged: 1,
  ApiKeyCreated: 1,
  ApiKeyRevoked: 1,
  LookupCharged: 1,
  LookupRefunded: 1,
  LookupCompleted: 1,
  ProfileFetched: 1,
  ProfileNotFound: 1,
  MemberInvited: 1,
  InvitationCancelled: 1,
  InvitationAccepted: 1,
  MemberRoleChanged: 1,
  MemberRemoved: 1,
  PasswordChanged: 1,
  PasswordResetRequested: 1,
  PasswordResetCompleted: 1,
  LowBalanceThresholdChanged: 1,
  BalanceLow: 1,
  ApiKeyRenamed: 1,
  ApiKeyCreatedBy: 1,
  WatchCreated: 1,
  WatchDeleted: 1,
  WatchPaused: 1,
  WatchResumed: 1,
  ProfileChanged: 1,
  WebhookEndpointFailing: 1,
};

/** A new event, its data checked against the contract before it reaches the log. */
export function newEvent<T extends EventType>(type: T, data: EventData<T>, requestId?: string) {
  return {
    type,
    data: EVENT_SCHEMAS[type].parse(data),
    metadata: { schema_version: EVENT_SCHEMA_VERSION[type], ...(requestId ? { request_id: requestId } : {}) },
  };
}

export const streams = {
  workspace: (id: string) => `workspace-${id}`,
  apiKey: (id: string) => `apikey-${id}`,
  company: (id: string) => `company-${id}`,
  person: (publicIdentifier: string) => `person-${publicIdentifier}`,
  search: (limit: number, normalizedQuery: string) => `search-${limit}-${normalizedQuery}`,
  /** Not-found answers have no entity: they live on the stream of the reference that was asked. */
  notFound: (alias: string) => `notfound-${alias}`,
  watch: (id: string) => `watch-${id}`,
  /** Kept off the workspace's stream, whose ledger events are hash-chained. */
  webhookEndpoint: (id: string) => `webhookendpoint-${id}`,
};
