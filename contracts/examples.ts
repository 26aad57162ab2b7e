import type { EndpointId } from './endpoints';
import { ApiError, errorBody, errorCatalogueList } from './errors';

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
  request?: unknown;
  answer: unknown;
  /** The answer of each of the row's `otherAnswers`, by status. */
  otherAnswers?: Record<number, unknown>;
}

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
    getWebhookEndpoint: { answer: { data: endpoint, meta: { request_id: REQUEST_ID } } },
    updateWebhookEndpoint: { request: { enabled: false }, answer: { data: { ...endpoint, state: 'disabled' }, meta: { request_id: REQUEST_ID } } },
    deleteWebhookEndpoint: { answer: { data: { id: endpoint.id, deleted: true, deleted_watches: [watch.id] }, meta: { request_id: REQUEST_ID } } },
    rotateWebhookSecret: {
      answer: { data: { ...endpoint, previous_secret_expires_at: '2025-01-16T09:30:00.000Z', secret: SECRET }, meta: { request_id: REQUEST_ID } },
    },
    listWebhookDeliveries: { answer: { data: [delivery], meta: { request_id: REQUEST_ID } } },
    resendWebhookDelivery: { answer: { data: { ...delivery, state: 'pending', next_attempt_at: '2025-01-15T10:00:00.000Z' }, meta: { request_id: REQUEST_ID } } },
    createWatch: {
      request: { operation: 'company', body: { url: 'acme-robotics' }, every: '7d', webhook_endpoint_id: endpoint.id },
      answer: { data: watch, meta: { request_id: REQUEST_ID } },
    },
    listWatches: { answer: { data: [watch], meta: { request_id: REQUEST_ID } } },
    getWatch: { answer: { data: watch, meta: { request_id: REQUEST_ID } } },
    deleteWatch: { answer: { data: { id: watch.id, deleted: true }, meta: { request_id: REQUEST_ID } } },
    runWatch: {
      answer: {
        data: { ...watch, last_run_at: FETCHED_AT, last_request_id: REQUEST_ID },
        meta: { request_id: REQUEST_ID, refresh_request_id: REQUEST_ID, changed: true, credits_charged: 1, credits_remaining: 99 },
      },
    },
    health: { answer: { status: 'ok', version: '1.0.0', checks: { database: 'ok' } } },
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
  };
}
