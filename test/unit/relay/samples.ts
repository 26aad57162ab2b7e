// One valid event of every type, as the log records it, for the relay's unit tests.
import { EVENT_SCHEMAS, newEvent, streams, type EventData, type EventType } from '../../../contracts/events';
import type { RecordedEvent } from '../../../services/eventstore/types';

const ws = 'ws_01JTESTWORKSPACE0000000000';
const key = 'key_01JTESTKEY000000000000000';
const req = 'req_01JTESTREQUEST00000000000';
const watch = 'wat_01JTESTWATCH0000000000000';
const endpoint = 'whep_01JTESTENDPOINT0000000000';

export const SAMPLE_DATA: { [T in EventType]?: { stream: string; data: EventData<T>; requestId?: string } } = {
  WorkspaceCreated: { stream: streams.workspace(ws), data: { workspace_id: ws, name: 'Acme analytics', max_concurrency: 8 } },
  CreditsGranted: { stream: streams.workspace(ws), data: { workspace_id: ws, amount: 500, reason: null } },
  LimitsChanged: { stream: streams.workspace(ws), data: { workspace_id: ws, max_concurrency: 4 } },
  ApiKeyCreated: {
    stream: streams.apiKey(key),
    data: { key_id: key, workspace_id: ws, name: 'ci', prefix: 'lk_live_abcd', key_hash: 'a'.repeat(64), rate_limit_per_minute: 600 },
  },
  ApiKeyRevoked: { stream: streams.apiKey(key), data: { key_id: key, workspace_id: ws } },
  LookupCharged: {
    stream: streams.workspace(ws),
    data: { workspace_id: ws, request_id: req, key_id: key, operation: 'company', credits: 1 },
    requestId: req,
  },
  LookupRefunded: {
    stream: streams.workspace(ws),
    data: { workspace_id: ws, request_id: req, key_id: key, operation: 'company', credits: 1, cause: 'timeout' },
    requestId: req,
  },
  LookupCompleted: {
    stream: streams.workspace(ws),
    data: {
      workspace_id: ws, request_id: req, key_id: key, operation: 'company',
      outcome: 'success', cache_status: 'MISS', credits_charged: 1, error_code: null,
    },
    requestId: req,
  },
  ProfileFetched: {
    stream: streams.company('1337'),
    data: {
      entity: 'company:1337', kind: 'company', data: { id: '1337', name: 'Acme Robotics' },
      content_hash: `sha256:${'b'.repeat(64)}`, fetched_at: '2025-01-02T03:04:05.000Z', aliases: ['acme-robotics', '1337'],
    },
    requestId: req,
  },
  ProfileNotFound: {
    stream: streams.notFound('company:nobody'),
    data: { kind: 'company', alias: 'company:nobody', code: 'not_found', reason: 'no_company', fetched_at: '2025-01-02T03:04:05.000Z' },
    requestId: req,
  },
  MemberInvited: {
    stream: `members-${ws}`,
    data: {
      workspace_id: ws, invitation_id: 'inv_01JTESTINVITATION000000000', email: 'ada@example.com', role: 'owner',
      token_hash: 'c'.repeat(64), expires_at: '2025-01-09T03:04:05.000Z', actor: 'operator',
    },
  },
  InvitationCancelled: { stream: `members-${ws}`, data: { workspace_id: ws, invitation_id: 'inv_01JTESTINVITATION000000000', actor: 'operator' } },
  InvitationAccepted: {
    stream: `members-${ws}`,
    data: { workspace_id: ws, invitation_id: 'inv_01JTESTINVITATION000000000', member_id: 'mem_01JTESTMEMBER0000000000000', email: 'ada@example.com', role: 'owner', actor: 'mem_01JTESTMEMBER0000000000000' },
  },
  MemberRoleChanged: { stream: `members-${ws}`, data: { workspace_id: ws, member_id: 'mem_01JTESTMEMBER0000000000000', role: 'member', actor: 'operator' } },
  MemberRemoved: { stream: `members-${ws}`, data: { workspace_id: ws, member_id: 'mem_01JTESTMEMBER0000000000000', actor: 'operator' } },
  PasswordChanged: { stream: `members-${ws}`, data: { workspace_id: ws, member_id: 'mem_01JTESTMEMBER0000000000000', actor: 'mem_01JTESTMEMBER0000000000000' } },
  PasswordResetRequested: {
    stream: `members-${ws}`,
    data: { workspace_id: ws, member_id: 'mem_01JTESTMEMBER0000000000000', token_hash: 'd'.repeat(64), expires_at: '2025-01-02T04:04:05.000Z' },
  },
  PasswordResetCompleted: {
    stream: `members-${ws}`,
    data: { workspace_id: ws, member_id: 'mem_01JTESTMEMBER0000000000000', token_hash: 'd'.repeat(64), actor: 'mem_01JTESTMEMBER0000000000000' },
  },
  LowBalanceThresholdChanged: { stream: `balance-alerts-${ws}`, data: { workspace_id: ws, low_balance_threshold: 100, actor: 'operator' } },
  BalanceLow: {
    stream: `balance-alerts-${ws}`,
    data: { workspace_id: ws, balance: 96, low_balance_threshold: 100, request_id: req },
    requestId: req,
  },
  ApiKeyRenamed: { stream: streams.apiKey(key), data: { key_id: key, workspace_id: ws, name: 'production', actor: 'mem_01JTESTMEMBER0000000000000' } },
  ApiKeyCreatedBy: { stream: streams.apiKey(key), data: { key_id: key, workspace_id: ws, actor: 'mem_01JTESTMEMBER0000000000000' } },
  WatchCreated: {
    stream: streams.watch(watch),
    data: { watch_id: watch, workspace_id: ws, key_id: key, operation: 'company', body: { url: 'acme-robotics' }, every: '1d', webhook_endpoint_id: endpoint },
  },
  WatchDeleted: { stream: streams.watch(watch), data: { watch_id: watch, workspace_id: ws } },
  WatchPaused: { stream: streams.watch(watch), data: { watch_id: watch, workspace_id: ws, reason: 'insufficient_credits' } },
  WatchResumed: { stream: streams.watch(watch), data: { watch_id: watch, workspace_id: ws } },
  ProfileChanged: {
    stream: streams.company('1337'),
    data: {
      entity: 'company:1337', kind: 'company', before_hash: `sha256:${'a'.repeat(64)}`, after_hash: `sha256:${'b'.repeat(64)}`,
      changed_fields: ['follower_count'], watch_id: watch, workspace_id: ws, webhook_endpoint_id: endpoint, request_id: req,
    },
    requestId: req,
  },
  WebhookEndpointFailing: {
    stream: streams.webhookEndpoint(endpoint),
    data: { workspace_id: ws, endpoint_id: endpoint, url: 'https://hooks.example.com/h', delivery_id: 'msg_01JTESTMESSAGE00000000000', attempts: 17, last_error: 'answered 503' },
  },
};

let position = 0;

/** A recorded event of `type` built from its sample (validated by the contract's own `newEvent`). */
export function recorded<T extends EventType>(type: T, version = 1, overrides: Partial<RecordedEvent> = {}): RecordedEvent {
  const sample = SAMPLE_DATA[type];
  if (!sample) throw new Error(`no sample for ${type}: add one to test/unit/relay/samples.ts`);
  const event = newEvent(type, sample.data as EventData<T>, sample.requestId);
  position += 1;
  return {
    position,
    stream: sample.stream,
    version,
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    transactionId: String(1000 + position),
    recordedAt: new Date('2025-01-02T03:04:06.789Z'),
    ...overrides,
  };
}

export const ALL_EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];
