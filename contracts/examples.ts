import { CONSOLE_LEDGER_CSV_COLUMNS } from './console';
import type { EndpointId } from './endpoints';
import { ApiError, ERROR_CATALOGUE, errorBody, errorCatalogueList } from './errors';
import { STATEMENT_CSV_COLUMNS } from './http';

/**
 * One example request and answer per public operation, shown in the OpenAPI document.
 * test/unit/contracts/openapi-examples.test.ts parses each against its endpoint's schemas, so an
 * example cannot drift from what the service accepts and sends.
 */

const REQUEST_ID = 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD';
const FETCHED_AT = '2025-01-15T09:30:00.000Z';
const HASH = 'sha256:5f1c0e6b2a9d4c3e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const endpoint = {
  id: 'whep_01J9Z8Q4V6Y3M2K7T5R1N0B8CE',
  url: 'https://example.com/webhooks/lookup',
  event_types: ['profile.changed'],
  description: 'CRM sync',
  state: 'active',
  failing_since: null,
  previous_secret_expires_at: null,
  created_at: FETCHED_AT,
};
const delivery = {
  id: 'msg_01J9Z8Q4V6Y3M2K7T5R1N0B8CF',
  endpoint_id: endpoint.id,
  event_type: 'profile.changed',
  state: 'delivered',
  created_at: FETCHED_AT,
  next_attempt_at: null,
  payload: {
    type: 'profile.changed',
    timestamp: FETCHED_AT,
    data: { entity: 'company:1337', kind: 'company', before_hash: HASH, after_hash: 'sha256:0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e5f1c0e6b2a9d4c3e8f7a6b5c4d3e2f1a', changed_fields: ['follower_count'] },
  },
  attempts: [
    { attempt: 1, started_at: FETCHED_AT, status: 'failed', response_status: 503, latency_ms: 84, error: 'answered 503' },
    { attempt: 2, started_at: '2025-01-15T09:30:05.000Z', status: 'succeeded', response_status: 204, latency_ms: 61, error: null },
  ],
};
const watch = {
  id: 'wat_01J9Z8Q4V6Y3M2K7T5R1N0B8CG',
  operation: 'company',
  body: { url: 'acme-robotics' },
  every: '7d',
  webhook_endpoint_id: endpoint.id,
  state: 'active',
  paused_reason: null,
  next_run_at: '2025-01-22T09:30:00.000Z',
  last_run_at: null,
  last_request_id: null,
  content_hash: HASH,
  created_at: FETCHED_AT,
};

const company = {
  company_size: { max: 200, min: 51 },
  description: 'Industrial robots for small factories.',
  employee_count: 130,
  follower_count: 48210,
  founded_year: 2009,
  headquarters: { city: 'Pittsburgh', country: 'US', region: 'Pennsylvania' },
  id: '1337',
  industry: 'Automation Machinery Manufacturing',
  name: 'Acme Robotics',
  slug: 'acme-robotics',
  specialties: ['robotics', 'automation'],
  tagline: 'Robots that ship on time.',
  type: 'Privately Held',
  url: 'https://www.linkedin.com/company/acme-robotics/',
  urn: 'urn:li:company:1337',
  website: 'https://www.acmerobotics.com',
};

const person = {
  about: 'Engineer building robots.',
  employers: [
    { company_id: '1337', company_name: 'Acme Robotics', end_date: null, is_current: true, start_date: '2021-03', title: 'Staff Engineer' },
    { company_id: null, company_name: 'Tinker Labs', end_date: '2021-02', is_current: false, start_date: '2017-06', title: 'Engineer' },
  ],
  first_name: 'Jane',
  follower_count: 812,
  full_name: 'Jane Doe',
  headline: 'Staff Engineer at Acme Robotics',
  last_name: 'Doe',
  location: { city: 'Pittsburgh', country: 'US', region: 'Pennsylvania' },
  public_identifier: 'jane-doe-42',
  schools: [{ degree: 'BSc', end_year: 2017, field_of_study: 'Mechanical Engineering', name: 'Carnegie Mellon University', start_year: 2013 }],
  url: 'https://www.linkedin.com/in/jane-doe-42',
};

const lookupMeta = (charged: number, remaining: number) => ({
  request_id: REQUEST_ID,
  cache: { status: 'MISS', age_seconds: 0, fetched_at: FETCHED_AT },
  content_hash: HASH,
  credits_charged: charged,
  credits_remaining: remaining,
});

const accountMeta = { request_id: REQUEST_ID, credits_charged: 0, credits_remaining: 96 };

export interface OperationExample {
  /** The path's `{name}` values, filled into the curl sample. */
  params?: Record<string, string>;
  /** The query string of the curl sample. */
  query?: Record<string, string>;
  request?: unknown;
  /** The JSON answer; absent for a row answered with CSV only. */
  answer?: unknown;
  /** The answer as CSV, for a row answered with CSV (or offering it with `format=csv`). */
  csv?: string;
  /** The answer of each of the row's `otherAnswers`, by status. */
  otherAnswers?: Record<number, unknown>;
}

// ---------- the console's and the admin API's: one workspace, its key, a refunded call ----------

const WORKSPACE_ID = 'ws_01J9Z8Q4V6Y3M2K7T5R1N0B8CA';
const KEY_ID = 'key_01J9Z8Q4V6Y3M2K7T5R1N0B8CB';
const MEMBER_ID = 'mem_01J9Z8Q4V6Y3M2K7T5R1N0B8CH';
const INVITATION_ID = 'inv_01J9Z8Q4V6Y3M2K7T5R1N0B8CJ';
const TOKEN = 'Yq3vN8sX2kR7mB4tW9pL6cF1hJ5dG0aZ';
const DAY = '2025-01-15';
const LATER = '2025-01-15T10:12:44.000Z';
const EXPIRES = '2025-01-22T09:30:00.000Z';
const PERIOD = { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' };
const DAYS = { from: '2025-01-01', to: '2025-02-01' };
const member = { id: MEMBER_ID, email: 'jane@acmerobotics.com', role: 'owner' };
const session = { member, workspace: { id: WORKSPACE_ID, name: 'Acme Robotics' }, csrf_token: 'c3J0Zl9leGFtcGxlX3Rva2VuXzAx' };
const keySummary = { id: KEY_ID, prefix: 'lk_live_Qm7t', name: 'CRM sync', mode: 'live', created_at: FETCHED_AT, last_used_at: LATER, revoked_at: null };
const FULL_KEY = 'lk_live_Qm7tR2xV9kP4nB8sW3jL6cF1hD5gA0zY';
const invitation = { invitation_id: INVITATION_ID, email: 'sam@acmerobotics.com', role: 'member', expires_at: EXPIRES };

/** A grant, then a domain lookup that timed out: its charge and its refund (docs/api.md, "Refunds and their causes"). */
const timedOut = { operation: 'domain', price: 4, code: 'timeout' } as const;
const ledger = [
  { position: 101, type: 'CreditsGranted', request_id: null, key_id: null, credits: 100, balance_after: 100, recorded_at: FETCHED_AT, mode: 'live' },
  { position: 102, type: 'LookupCharged', request_id: REQUEST_ID, key_id: KEY_ID, credits: -timedOut.price, balance_after: 96, recorded_at: LATER, mode: 'live' },
  { position: 104, type: 'LookupRefunded', request_id: REQUEST_ID, key_id: KEY_ID, credits: timedOut.price, balance_after: 100, recorded_at: LATER, mode: 'live' },
];
const operationOf = (entry: { request_id: string | null }) => (entry.request_id === null ? null : timedOut.operation);
const consoleLedger = ledger.map((entry) => ({ ...entry, operation: operationOf(entry) }));
const usageRow = { day: DAY, key_id: KEY_ID, operation: timedOut.operation, calls: 1, credits_charged: timedOut.price, credits_refunded: timedOut.price, errors: 1, mode: 'live' };
const statementTotals = {
  workspace_id: WORKSPACE_ID,
  ...PERIOD,
  opening_balance: 0,
  credits_granted: 100,
  charged: timedOut.price,
  refunded: timedOut.price,
  closing_balance: 100,
  calls: 1,
  by_operation: [{ operation: timedOut.operation, calls: 1, charged: timedOut.price, refunded: timedOut.price }],
  entries: ledger.length,
  first_position: ledger[0]!.position,
  last_position: ledger.at(-1)!.position,
};
const eventHash = (position: number) => `sha256:${position.toString(16).padStart(64, '0')}`;
/** CSV as the service writes it (header line, CRLF); the example's fields need no quoting. */
const csvOf = (columns: readonly string[], rows: readonly Record<string, unknown>[]) =>
  `${[columns.join(','), ...rows.map((row) => columns.map((c) => (row[c] === null || row[c] === undefined ? '' : String(row[c]))).join(','))].join('\r\n')}\r\n`;
// The finance export has no `mode`: it holds live keys' entries only.
const exportLines = ledger.map(({ mode: _live, ...entry }) => ({ workspace_id: WORKSPACE_ID, ...entry, operation: operationOf(entry), event_hash: eventHash(entry.position) }));
const report = { ok: true, events: 1843, workspaces: 12, mismatches: [], chains: { checked: 12, broken: [] } };
const auditJob = {
  id: 'aud_01J9Z8Q4V6Y3M2K7T5R1N0B8CK',
  state: 'running',
  phase: 'replaying',
  started_at: LATER,
  finished_at: null,
  elapsed_ms: 840,
  events_read: 900,
  position: 900,
  head_position: 1843,
  percent: 48.8,
  events_per_second: 1071,
  report: null,
  error: null,
};

/**
 * The Meta documents themselves (OpenAPI, AsyncAPI) are shown by their opening keys. `docsUrl`:
 * the `{docs_url}` of the document they are shown in.
 */
export function operationExamples(docsUrl: string): Partial<Record<EndpointId, OperationExample>> {
  return {
    lookupCompany: { request: { url: 'https://www.linkedin.com/company/acme-robotics/' }, answer: { data: company, meta: lookupMeta(1, 99) } },
    lookupDomain: {
      request: { domain: 'shop.acmerobotics.com', max_age: 86400 },
      answer: { data: company, meta: { ...lookupMeta(4, 95), resolved: { domain: 'acmerobotics.com', confirmed: true } } },
    },
    lookupPerson: { request: { url: 'Jane Doe' }, answer: { data: person, meta: lookupMeta(3, 96) } },
    search: {
      request: { query: 'acme robotics', limit: 2 },
      answer: {
        data: {
          query: 'acme robotics',
          results: [
            { position: 1, title: 'Acme Robotics', url: 'https://www.acmerobotics.com/', snippet: 'Industrial robots for small factories.' },
            { position: 2, title: 'Acme Robotics | Company page', url: 'https://www.linkedin.com/company/acme-robotics/', snippet: 'Acme Robotics: 48,210 followers.' },
          ],
        },
        meta: lookupMeta(1, 95),
      },
    },
    batch: {
      request: {
        items: [
          { operation: 'company', body: { url: 'acme-robotics' }, id: 'row-1' },
          { operation: 'domain', body: { domain: 'no-company-here.com' }, id: 'row-2' },
          { operation: 'person', body: { url: 'ACoAAB1234' }, id: 'row-3' },
        ],
      },
      answer: {
        data: [
          {
            id: 'row-1',
            operation: 'company',
            status: 200,
            request_id: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CE',
            data: company,
            cache: { status: 'HIT', age_seconds: 3600, fetched_at: FETCHED_AT },
            content_hash: HASH,
            credits_charged: 1,
          },
          {
            id: 'row-2',
            operation: 'domain',
            status: 404,
            request_id: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CF',
            error: errorBody(new ApiError('not_found', { reason: 'no_company_for_domain' }), docsUrl),
            credits_charged: 4,
          },
          {
            id: 'row-3',
            operation: 'person',
            status: 400,
            request_id: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CG',
            error: errorBody(new ApiError('invalid_person_reference'), docsUrl),
            credits_charged: 0,
          },
        ],
        meta: { request_id: REQUEST_ID, credits_charged: 5, credits_remaining: 95 },
      },
    },
    cacheCompany: {
      request: { url: 'acme-robotics' },
      answer: { data: { cached: true, found: true, fetched_at: FETCHED_AT, age_seconds: 3600, content_hash: HASH }, meta: accountMeta },
    },
    cacheDomain: {
      request: { domain: 'acmerobotics.com' },
      answer: { data: { cached: false, found: false, fetched_at: null, age_seconds: null, content_hash: null }, meta: accountMeta },
    },
    cachePerson: {
      request: { url: 'https://www.linkedin.com/in/nobody-here-000' },
      answer: { data: { cached: true, found: false, fetched_at: FETCHED_AT, age_seconds: 120, content_hash: null }, meta: accountMeta },
    },
    cacheStats: { answer: { data: { entries: 42, company: 20, domain: 8, person: 12, search: 2 }, meta: accountMeta } },
    createWebhookEndpoint: {
      request: { url: 'https://example.com/webhooks/lookup', event_types: ['profile.changed'], description: 'CRM sync' },
      answer: { data: { ...endpoint, secret: SECRET }, meta: { request_id: REQUEST_ID } },
    },
    listWebhookEndpoints: { answer: { data: [endpoint], meta: { request_id: REQUEST_ID } } },
    getWebhookEndpoint: { params: { id: endpoint.id }, answer: { data: endpoint, meta: { request_id: REQUEST_ID } } },
    updateWebhookEndpoint: { params: { id: endpoint.id }, request: { enabled: false }, answer: { data: { ...endpoint, state: 'disabled' }, meta: { request_id: REQUEST_ID } } },
    deleteWebhookEndpoint: { params: { id: endpoint.id }, answer: { data: { id: endpoint.id, deleted: true, deleted_watches: [watch.id] }, meta: { request_id: REQUEST_ID } } },
    rotateWebhookSecret: {
      params: { id: endpoint.id },
      answer: { data: { ...endpoint, previous_secret_expires_at: '2025-01-16T09:30:00.000Z', secret: SECRET }, meta: { request_id: REQUEST_ID } },
    },
    listWebhookDeliveries: { params: { id: endpoint.id }, answer: { data: [delivery], meta: { request_id: REQUEST_ID } } },
    resendWebhookDelivery: { params: { id: endpoint.id, delivery_id: delivery.id }, answer: { data: { ...delivery, state: 'pending', next_attempt_at: '2025-01-15T10:00:00.000Z' }, meta: { request_id: REQUEST_ID } } },
    createWatch: {
      request: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpoint.id },
      answer: { data: watch, meta: { request_id: REQUEST_ID } },
    },
    listWatches: { answer: { data: [watch], meta: { request_id: REQUEST_ID } } },
    getWatch: { params: { id: watch.id }, answer: { data: watch, meta: { request_id: REQUEST_ID } } },
    deleteWatch: { params: { id: watch.id }, answer: { data: { id: watch.id, deleted: true }, meta: { request_id: REQUEST_ID } } },
    runWatch: {
      params: { id: watch.id },
      answer: {
        data: { ...watch, last_run_at: FETCHED_AT, last_request_id: REQUEST_ID },
        meta: { request_id: REQUEST_ID, refresh_request_id: REQUEST_ID, changed: true, credits_charged: 1, credits_remaining: 99 },
      },
    },
    ready: {
      answer: { status: 'ok', version: '1.0.0', checks: { started: 'ok', migrated: 'ok', not_draining: 'ok' }, failures: [] },
      otherAnswers: {
        503: {
          status: 'draining',
          version: '1.0.0',
          checks: { started: 'ok', migrated: 'ok', not_draining: 'fail' },
          failures: [{ check: 'not_draining', message: 'the instance is draining after SIGTERM: it finishes the requests it accepted and takes no new ones' }],
        },
      },
    },
    pricing: {
      answer: {
        unit: 'credit',
        operations: [
          { operation: 'company', method: 'POST', endpoint: '/v1/company', description: 'Company lookup by any company reference.', success_price: 1, not_found_price: 1, not_found_free_from_cache: true },
          { operation: 'search', method: 'POST', endpoint: '/v1/search', description: 'Web search results as JSON.', success_price: 1, not_found_price: null, not_found_free_from_cache: false },
        ],
        batch: { method: 'POST', endpoint: '/v1/batch', max_items: 100, price: 'sum_of_items' },
        free: [{ area: 'cache', price: 0, endpoints: ['POST /v1/cache/company', 'GET /v1/cache/stats'] }],
        notes: ['A cache HIT of a profile is charged like a live fetch.'],
      },
    },
    openapi: { answer: { openapi: '3.1.0', info: { title: 'Company and Person Lookup API', version: '1.0.0' } } },
    // The catalogue's own first entry, its doc_url on the document's docs address.
    errors: { answer: { data: errorCatalogueList(docsUrl).data.slice(0, 1) } },
    asyncapi: { answer: { asyncapi: '3.0.0', info: { title: 'Lookup API events', version: '1.0.0' } } },
    health: {
      answer: { status: 'ok', version: '1.0.0', checks: { database: 'ok' } },
      otherAnswers: { 503: { status: 'degraded', version: '1.0.0', checks: { database: 'fail' } } },
    },
    ...consoleExamples(),
    ...adminExamples(docsUrl),
  };
}

/** The console's calls (tag `Console`): a signed-in owner of the example workspace. */
function consoleExamples(): Partial<Record<EndpointId, OperationExample>> {
  return {
    consoleSession: { answer: session },
    consoleSignIn: { request: { workspace_id: WORKSPACE_ID, email: member.email, password: 'correct horse battery staple' }, answer: session },
    consoleSignOut: {},
    consoleInvitationPreview: {
      query: { token: TOKEN },
      answer: { email: invitation.email, role: invitation.role, workspace_id: WORKSPACE_ID, workspace_name: session.workspace.name, expires_at: EXPIRES },
    },
    consoleAcceptInvitation: {
      request: { token: TOKEN, password: 'a long passphrase of my own' },
      answer: { ...session, member: { id: 'mem_01J9Z8Q4V6Y3M2K7T5R1N0B8CM', email: invitation.email, role: invitation.role } },
    },
    consoleChangePassword: { request: { current_password: 'correct horse battery staple', new_password: 'a longer passphrase of my own' }, answer: session },
    consoleAskPasswordReset: { request: { workspace_id: WORKSPACE_ID, email: member.email } },
    consoleCompletePasswordReset: { request: { token: TOKEN, new_password: 'a fresh passphrase of my own' } },
    consoleOverview: {
      answer: {
        balance: 100,
        spent_today: 0,
        spent_this_month: 0,
        days: [
          { day: '2025-01-14', operations: [] },
          { day: DAY, operations: [{ operation: timedOut.operation, calls: 1, credits: 0 }] },
        ],
        recent_errors: [{ request_id: REQUEST_ID, key_id: KEY_ID, operation: timedOut.operation, error_code: timedOut.code, recorded_at: LATER }],
        last_insufficient_credits: null,
        low_balance_threshold: 50,
        failing_webhook_endpoints: [{ id: endpoint.id, url: endpoint.url, failing_since: LATER }],
        paused_watches: [{ id: watch.id, paused_reason: 'insufficient_credits' }],
      },
    },
    consoleSetAlerts: { request: { low_balance_threshold: 50 }, answer: { low_balance_threshold: 50 } },
    consoleListKeys: { answer: { data: [{ ...keySummary, created_by: member.email }] } },
    consoleCreateKey: {
      request: { name: 'CRM sync', mode: 'live' },
      answer: { id: KEY_ID, key: FULL_KEY, prefix: keySummary.prefix, name: 'CRM sync', rate_limit_per_minute: 600, mode: 'live', created_at: FETCHED_AT, created_by: member.email },
    },
    consoleRenameKey: { params: { id: KEY_ID }, request: { name: 'CRM sync (production)' }, answer: { ...keySummary, name: 'CRM sync (production)', created_by: member.email } },
    consoleRevokeKey: { params: { id: KEY_ID }, answer: { id: KEY_ID, revoked_at: LATER, deleted_watches: [watch.id] } },
    consoleUsage: { query: DAYS, answer: { data: [usageRow] } },
    consoleLedger: { query: { limit: '50' }, answer: { data: consoleLedger, next: null } },
    consoleRequestStory: {
      params: { id: REQUEST_ID },
      answer: {
        request_id: REQUEST_ID,
        call: {
          operation: timedOut.operation,
          key_id: KEY_ID,
          recorded_at: LATER,
          outcome: 'error',
          status: ERROR_CATALOGUE[timedOut.code].status,
          cache_status: 'MISS',
          credits_charged: timedOut.price,
          error_code: timedOut.code,
        },
        refund: { credits: timedOut.price, cause: timedOut.code, recorded_at: LATER },
        content_hash: null,
        ledger: consoleLedger.slice(1),
        events: [
          { position: 102, stream: `workspace-${WORKSPACE_ID}`, type: 'LookupCharged', recorded_at: LATER },
          { position: 103, stream: `workspace-${WORKSPACE_ID}`, type: 'LookupCompleted', recorded_at: LATER },
          { position: 104, stream: `workspace-${WORKSPACE_ID}`, type: 'LookupRefunded', recorded_at: LATER },
        ],
      },
    },
    consoleLedgerCsv: { query: DAYS, csv: csvOf(CONSOLE_LEDGER_CSV_COLUMNS, ledger) },
    consoleStatement: { query: PERIOD, answer: statementTotals, csv: csvOf(STATEMENT_CSV_COLUMNS, exportLines) },
    consoleMembers: {
      answer: {
        members: [{ ...member, joined_at: FETCHED_AT }],
        invitations: [{ id: INVITATION_ID, email: invitation.email, role: invitation.role, invited_by: MEMBER_ID, created_at: LATER, expires_at: EXPIRES }],
      },
    },
    consoleChangeRole: { params: { id: 'mem_01J9Z8Q4V6Y3M2K7T5R1N0B8CM' }, request: { role: 'owner' } },
    consoleRemoveMember: { params: { id: 'mem_01J9Z8Q4V6Y3M2K7T5R1N0B8CM' } },
    consoleInvite: { request: { email: invitation.email, role: invitation.role }, answer: invitation },
    consoleCancelInvitation: { params: { id: INVITATION_ID } },
    consoleListWebhookEndpoints: {
      answer: {
        data: [
          {
            ...endpoint,
            state: 'failing',
            failing_since: LATER,
            failing_reason: { delivery_id: delivery.id, attempts: 18, last_attempt_at: LATER, response_status: 500, error: 'the receiver answered 500' },
          },
        ],
      },
    },
    consoleCreateWebhookEndpoint: { request: { url: endpoint.url, event_types: endpoint.event_types, description: endpoint.description }, answer: { ...endpoint, secret: SECRET } },
    consoleDeleteWebhookEndpoint: { params: { id: endpoint.id } },
    consoleUpdateWebhookEndpoint: { params: { id: endpoint.id }, request: { enabled: false }, answer: { ...endpoint, state: 'disabled', failing_reason: null } },
    consoleRotateWebhookSecret: { params: { id: endpoint.id }, answer: { ...endpoint, previous_secret_expires_at: '2025-01-16T09:30:00.000Z', secret: SECRET } },
    consoleListWebhookDeliveries: { params: { id: endpoint.id }, answer: { data: [delivery] } },
    consoleResendWebhookDelivery: { params: { id: endpoint.id, delivery_id: delivery.id }, answer: { ...delivery, state: 'pending', next_attempt_at: '2025-01-15T10:00:00.000Z' } },
    consoleListWatches: { answer: { data: [watch] } },
    consoleCreateWatch: {
      request: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpoint.id, key_id: KEY_ID },
      answer: watch,
    },
    consoleDeleteWatch: { params: { id: watch.id } },
    consoleRunWatch: {
      params: { id: watch.id },
      answer: { watch: { ...watch, last_run_at: FETCHED_AT, last_request_id: REQUEST_ID }, refresh_request_id: REQUEST_ID, changed: true, credits_charged: 1, credits_remaining: 99 },
    },
  };
}

/** The operator's calls (the admin API's own document). */
function adminExamples(docsUrl: string): Partial<Record<EndpointId, OperationExample>> {
  const workspace = { id: WORKSPACE_ID, name: 'Acme Robotics', balance: 100, max_concurrency: 8 };
  const ws = { id: WORKSPACE_ID };
  return {
    adminCreateWorkspace: { request: { name: workspace.name, credits: 100, max_concurrency: 8 }, answer: workspace },
    adminGetWorkspace: { params: ws, answer: { ...workspace, created_at: FETCHED_AT, low_balance_threshold: 50 } },
    adminPatchWorkspace: { params: ws, request: { max_concurrency: 16 }, answer: { ...workspace, max_concurrency: 16, created_at: FETCHED_AT, low_balance_threshold: 50 } },
    adminGrantCredits: { params: ws, request: { amount: 1000, reason: 'January top-up' }, answer: { balance: 1100 } },
    adminCreateKey: {
      params: ws,
      request: { name: 'CRM sync', rate_limit_per_minute: 600, mode: 'live' },
      answer: { id: KEY_ID, key: FULL_KEY, prefix: keySummary.prefix, name: 'CRM sync', rate_limit_per_minute: 600, mode: 'live', created_at: FETCHED_AT },
    },
    adminListKeys: { params: ws, answer: { data: [keySummary] } },
    adminRevokeKey: { params: { id: KEY_ID }, answer: { id: KEY_ID, revoked_at: LATER, deleted_watches: [watch.id] } },
    adminUsage: { params: ws, query: DAYS, answer: { data: [usageRow] } },
    adminLedger: { params: ws, query: { limit: '100' }, answer: { data: ledger, next: null } },
    adminStatement: { params: ws, query: PERIOD, answer: statementTotals, csv: csvOf(STATEMENT_CSV_COLUMNS, exportLines) },
    adminLedgerExport: { query: PERIOD, answer: { data: exportLines, next: null } },
    adminUsageExport: {
      query: PERIOD,
      answer: { data: [{ workspace_id: WORKSPACE_ID, day: DAY, key_id: KEY_ID, operation: timedOut.operation, calls: 1, credits_charged: timedOut.price, credits_refunded: timedOut.price, errors: 1 }] },
    },
    adminAudit: { answer: report },
    adminStartAudit: { answer: auditJob, otherAnswers: { 200: auditJob } },
    adminGetAudit: {
      params: { id: auditJob.id },
      answer: { ...auditJob, state: 'done', phase: null, finished_at: '2025-01-15T10:12:45.720Z', elapsed_ms: 1720, events_read: 1843, position: 1843, percent: 100, report },
    },
    adminRelay: {
      answer: {
        enabled: true,
        events: 0,
        oldestAgeMs: null,
        checkpoint: { transactionId: '48213', position: 1843 },
        connected: true,
        lastError: null,
        publishedSinceStart: 1843,
        lastPublishedAt: LATER,
      },
    },
    adminInviteMember: {
      params: ws,
      request: { email: member.email, role: 'owner' },
      answer: { ...invitation, email: member.email, role: 'owner', link: `${docsUrl.replace(/\/docs\/?$/, '')}/console/accept?token=${TOKEN}&workspace=${WORKSPACE_ID}` },
    },
    adminOpenApi: { answer: { openapi: '3.1.0', info: { title: 'Company and Person Lookup API: admin API', version: '1.0.0' } } },
  };
}
