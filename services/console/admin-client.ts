import type {
  AuditJobResponse,
  CreditsGrantResponse,
  KeyCreatedResponse,
  KeyListResponse,
  KeyRevokeResponse,
  LedgerEntry,
  LedgerExportLine,
  LedgerExportResponse,
  LedgerResponse,
  StatementResponse,
  UsageExportResponse,
  UsageResponse,
  WorkspaceCreatedResponse,
  WorkspaceResponse,
} from '../../contracts/http';
import type { AuditReport } from '../audit/audit';

/**
 * A small typed client of the admin API (docs/api.md "Admin API (operators)"), used by the console CLI and
 * by end-to-end tests. Every non-2xx answer becomes an AdminApiError carrying the envelope's code.
 */

export class AdminApiError extends Error {
  constructor(
    /** The API's `error.code`, or `connection_failed` / `bad_response` when no envelope came back. */
    readonly code: string,
    message: string,
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    readonly requestId: string | null = null,
    readonly body: unknown = null,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }
}

export interface AdminClientOptions {
  baseUrl: string;
  token: string;
  /** Per request; the audit replays the whole log, so it gets `auditTimeoutMs`. */
  timeoutMs?: number;
  auditTimeoutMs?: number;
  fetch?: typeof fetch;
}

export interface CreateWorkspaceInput {
  name: string;
  credits?: number;
  max_concurrency?: number;
}
export interface CreateKeyInput {
  name?: string;
  rate_limit_per_minute?: number;
  /** `test`: an `lk_test_…` key (docs/api.md, "Test keys"). */
  mode?: 'live' | 'test';
}
export interface UsageFilter {
  key_id?: string;
  from?: string;
  to?: string;
}
export interface LedgerFilter {
  request_id?: string;
  after?: number;
  limit?: number;
  /** The ledger as it stood at this instant, replayed from the log. */
  as_of?: string;
}
/** A half-open period `[from, to)` of instants. */
export interface Period {
  from: string;
  to: string;
}

export type { AuditReport };

export class AdminClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: AdminClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
  }

  createWorkspace(input: CreateWorkspaceInput): Promise<WorkspaceCreatedResponse> {
    return this.request('POST', '/admin/v1/workspaces', { body: input });
  }

  /** As it stands, or as it stood at `asOf`. */
  getWorkspace(id: string, asOf?: string): Promise<WorkspaceResponse> {
    return this.request('GET', `/admin/v1/workspaces/${seg(id)}${queryString({ as_of: asOf })}`);
  }

  statement(workspaceId: string, period: Period): Promise<StatementResponse> {
    return this.request('GET', `/admin/v1/workspaces/${seg(workspaceId)}/statement${queryString(period)}`);
  }

  /** The statement's ledger entries, one CSV line each. */
  statementCsv(workspaceId: string, period: Period): Promise<string> {
    return this.request('GET', `/admin/v1/workspaces/${seg(workspaceId)}/statement${queryString({ ...period, format: 'csv' })}`, { text: true });
  }

  /** Every workspace's ledger entries recorded in the period, all pages. */
  async ledgerExport(period: Period): Promise<LedgerExportLine[]> {
    const lines: LedgerExportLine[] = [];
    for (let after: number | undefined; ; ) {
      const page: LedgerExportResponse = await this.request('GET', `/admin/v1/ledger${queryString({ ...period, after, limit: 10_000 })}`);
      lines.push(...page.data);
      if (page.next === null || page.data.length === 0) return lines;
      after = page.next;
    }
  }

  usageExport(period: Period): Promise<UsageExportResponse> {
    return this.request('GET', `/admin/v1/usage${queryString(period)}`);
  }

  setMaxConcurrency(id: string, maxConcurrency: number): Promise<WorkspaceResponse> {
    return this.request('PATCH', `/admin/v1/workspaces/${seg(id)}`, { body: { max_concurrency: maxConcurrency } });
  }

  setLowBalanceThreshold(id: string, lowBalanceThreshold: number | null): Promise<WorkspaceResponse> {
    return this.request('PATCH', `/admin/v1/workspaces/${seg(id)}`, { body: { low_balance_threshold: lowBalanceThreshold } });
  }

  grantCredits(workspaceId: string, amount: number, reason?: string): Promise<CreditsGrantResponse> {
    return this.request('POST', `/admin/v1/workspaces/${seg(workspaceId)}/credits`, { body: reason === undefined ? { amount } : { amount, reason } });
  }

  createKey(workspaceId: string, input: CreateKeyInput = {}): Promise<KeyCreatedResponse> {
    return this.request('POST', `/admin/v1/workspaces/${seg(workspaceId)}/keys`, { body: input });
  }

  listKeys(workspaceId: string): Promise<KeyListResponse> {
    return this.request('GET', `/admin/v1/workspaces/${seg(workspaceId)}/keys`);
  }

  revokeKey(keyId: string): Promise<KeyRevokeResponse> {
    return this.request('POST', `/admin/v1/keys/${seg(keyId)}/revoke`);
  }

  usage(workspaceId: string, filter: UsageFilter = {}): Promise<UsageResponse> {
    return this.request('GET', `/admin/v1/workspaces/${seg(workspaceId)}/usage${queryString(filter)}`);
  }

  ledger(workspaceId: string, filter: LedgerFilter = {}): Promise<LedgerResponse> {
    return this.request('GET', `/admin/v1/workspaces/${seg(workspaceId)}/ledger${queryString(filter)}`);
  }

  /** Every ledger entry after `filter.after`, following `next` page by page. */
  async ledgerAll(workspaceId: string, filter: LedgerFilter = {}): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    let after = filter.after;
    for (;;) {
      const page = await this.ledger(workspaceId, { ...filter, after });
      entries.push(...page.data);
      if (page.next === null || page.data.length === 0) return entries;
      after = page.next;
    }
  }

  /** A one-time console link for `email` (the answer's `link`). */
  inviteMember(workspaceId: string, input: { email: string; role: 'owner' | 'member' }): Promise<{ invitation_id: string; email: string; role: string; expires_at: string; link: string }> {
    return this.request('POST', `/admin/v1/workspaces/${seg(workspaceId)}/invitations`, { body: input });
  }

  /** Replays the whole log on the server; answers only at the end. */
  audit(): Promise<AuditReport> {
    return this.request('POST', '/admin/v1/audit', { timeoutMs: this.options.auditTimeoutMs ?? 30 * 60_000 });
  }

  /** Starts an audit job on the server, or joins the one running there (`alreadyRunning`). */
  async startAudit(): Promise<{ job: AuditJobResponse; alreadyRunning: boolean }> {
    const { status, body } = await this.send<AuditJobResponse>('POST', '/admin/v1/audits');
    return { job: body, alreadyRunning: status === 200 };
  }

  auditJob(id: string): Promise<AuditJobResponse> {
    return this.request('GET', `/admin/v1/audits/${seg(id)}`);
  }

  /** `text`: a success answer that is not JSON (CSV), returned as it came. */
  private async request<T>(method: string, path: string, opts: { body?: unknown; timeoutMs?: number; text?: boolean } = {}): Promise<T> {
    return (await this.send<T>(method, path, opts)).body;
  }

  private async send<T>(method: string, path: string, opts: { body?: unknown; timeoutMs?: number; text?: boolean } = {}): Promise<{ status: number; body: T }> {
    const url = this.baseUrl + path;
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}`, accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(opts.timeoutMs ?? this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = (err as Error).name === 'TimeoutError' ? 'no answer in time' : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw new AdminApiError('connection_failed', `could not reach ${this.baseUrl}: ${why}`, 0);
    }
    const requestId = response.headers.get('x-request-id');
    const text = await response.text();
    if (opts.text && response.ok) return { status: response.status, body: text as T };
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      throw new AdminApiError('bad_response', `${method} ${path} answered ${response.status} with a body that is not JSON`, response.status, requestId, text);
    }
    if (!response.ok) {
      const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
      if (error && typeof error.code === 'string') {
        throw new AdminApiError(error.code, typeof error.message === 'string' ? error.message : '', response.status, requestId, body);
      }
      throw new AdminApiError('bad_response', `${method} ${path} answered ${response.status} without an error envelope`, response.status, requestId, body);
    }
    return { status: response.status, body: body as T };
  }
}

const seg = (value: string) => encodeURIComponent(value);

function queryString(params: object): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
