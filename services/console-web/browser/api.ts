import type { z } from 'zod';
import type {
  ConsoleKeyCreated,
  ConsoleKeyList,
  ConsoleKeyRevoked,
  ConsoleLedgerResponse,
  ConsoleRequestStory,
  ConsoleUsageResponse,
  ConsoleWatchList,
  ConsoleWatchRun,
  ConsoleWebhookDeliveryList,
  ConsoleWebhookEndpointList,
  ConsoleWebhookEndpointWithSecret,
  InvitationCreatedResponse,
  InvitationPreview,
  MembersResponse,
  OverviewResponse,
  SessionResponse,
} from '../../../contracts/console';
import type { StatementResponse } from '../../../contracts/http';
import { contract } from './contract';

/** The answers of the console API, typed from the contract's schemas (type imports only: nothing of zod reaches the bundle). */
export type Session = z.infer<typeof SessionResponse>;
export type Overview = z.infer<typeof OverviewResponse>;
export type Key = z.infer<typeof ConsoleKeyList>['data'][number];
export type KeyCreated = z.infer<typeof ConsoleKeyCreated>;
export type KeyRevoked = z.infer<typeof ConsoleKeyRevoked>;
export type UsageRow = z.infer<typeof ConsoleUsageResponse>['data'][number];
export type LedgerPage = z.infer<typeof ConsoleLedgerResponse>;
export type RequestStory = z.infer<typeof ConsoleRequestStory>;
export type Statement = z.infer<typeof StatementResponse>;
export type Members = z.infer<typeof MembersResponse>;
export type InvitationCreated = z.infer<typeof InvitationCreatedResponse>;
export type Preview = z.infer<typeof InvitationPreview>;
export type WebhookEndpoint = z.infer<typeof ConsoleWebhookEndpointList>['data'][number];
export type WebhookEndpointWithSecret = z.infer<typeof ConsoleWebhookEndpointWithSecret>;
export type WebhookDelivery = z.infer<typeof ConsoleWebhookDeliveryList>['data'][number];
export type Watch = z.infer<typeof ConsoleWatchList>['data'][number];
export type WatchRun = z.infer<typeof ConsoleWatchRun>;

interface ErrorBody {
  error?: { message?: string; retry_after_seconds?: number; details?: { message: string }[] };
}

export class ApiFailure extends Error {
  readonly retryAfter: number | undefined;
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
  ) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.retryAfter = body?.error?.retry_after_seconds;
  }
  get details(): string[] {
    return (this.body?.error?.details ?? []).map((d) => d.message);
  }
}

const session: { csrf: string | null; signedIn: boolean } = { csrf: null, signedIn: false };

/** The session's CSRF token, sent back on every change (from sign-in, session or password change). */
export function useSession(csrf: string | null, signedIn: boolean) {
  session.csrf = csrf;
  session.signedIn = signedIn;
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session.csrf) headers[contract.csrfHeader] = session.csrf;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    // The session ended (signed out elsewhere, removed, expired): back to sign-in.
    if (res.status === 401 && session.signedIn) location.assign('/console');
    throw new ApiFailure(res.status, parsed as ErrorBody | undefined);
  }
  return parsed as T;
}
