import { randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompanyEnvelope, NotFoundBody, PersonEnvelope, SearchEnvelope } from '../lookup/source/wire';
import { SEARCH_LIMIT_MAX } from '../lookup/source/wire';
import { SLOW_DELAY_MS, TRIGGERS, type Trigger } from './fixed';
import { getWorld, normalizeName, type World } from './world';

/**
 * The sandbox network over HTTP: the protocol of services/lookup/source/wire.ts, with the failure
 * triggers of services/sandbox/README.md answered the way a real upstream fails (status codes,
 * Retry-After, unreadable bodies, silence).
 */

export type SandboxOptions = { host?: string; port?: number };

export type Sandbox = {
  /** Base URL, e.g. `http://127.0.0.1:41234`, no trailing slash. */
  url: string;
  /** Requests received so far for one path-and-query (as sent, e.g. `/companies/by-slug/globex`), or in total. */
  hits(pathAndQuery?: string): number;
  /** Stops listening and destroys open connections, including requests a trigger never answers. */
  close(): Promise<void>;
};

type Json =
  | CompanyEnvelope
  | PersonEnvelope
  | SearchEnvelope
  | NotFoundBody
  | { error: string; message?: string }
  | { status: 'ok'; companies: number; people: number };
type Answer = { status: number; body: Json; headers?: Record<string, string> };
/** A routed request: an optional failure trigger and, for everything else, how to answer. */
type Routed = { trigger?: Trigger; answer: () => Answer };

export const BLOCKED_RETRY_AFTER_SECONDS = 30;
export const RATE_LIMITED_RETRY_AFTER_SECONDS = 7;

const asTrigger = (key: string): Trigger | undefined =>
  (TRIGGERS as readonly string[]).includes(key) ? (key as Trigger) : undefined;

const notFound = (): Answer => ({ status: 404, body: { error: 'not_found' } });
const badRequest = (message: string): Answer => ({ status: 400, body: { error: 'bad_request', message } });

class SandboxNetwork {
  private fetchesOfChangingCompany = 0;
  /** Per-instance start, so two sandboxes in two processes do not count the same values. */
  private readonly changingBase = 1000 + randomInt(0, 1_000_000);

  constructor(private readonly world: World) {}

  companyAnswer(index: number | undefined, notFoundBody: NotFoundBody = { error: 'not_found' }): Answer {
    if (index === undefined) return { status: 404, body: notFoundBody };
    const company = this.world.companyProfile(index);
    if (this.world.isChangingCompany(index)) {
      company.follower_count = this.changingBase + ++this.fetchesOfChangingCompany;
    }
    return { status: 200, body: { company, aliases: this.world.companyAliases(index) } };
  }

  personAnswer(index: number | undefined): Answer {
    if (index === undefined) return notFound();
    return { status: 200, body: { person: this.world.personProfile(index) } };
  }

  route(method: string, rawUrl: string): Routed {
    if (method !== 'GET') return { answer: () => ({ status: 405, body: { error: 'method_not_allowed' } }) };
    const url = new URL(rawUrl, 'http://sandbox.invalid');
    let segments: string[];
    try {
      segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      return { answer: () => badRequest('malformed percent-escape in the path') };
    }
    const w = this.world;
    const [area, by, key, ...rest] = segments;
    if (rest.length > 0) return { answer: () => ({ status: 404, body: { error: 'route_not_found' } }) };

    if (area === 'companies' && key !== undefined) {
      const k = key.trim().toLowerCase();
      if (by === 'by-slug') {
        return { trigger: asTrigger(k), answer: () => this.companyAnswer(w.companyIndexBySlug(k)) };
      }
      if (by === 'by-id') {
        // An id that no company page carries has no public page: unresolvable, not merely unknown.
        return { answer: () => this.companyAnswer(w.companyIndexById(k), { error: 'unresolvable_id' }) };
      }
      if (by === 'by-domain') {
        const trigger = asTrigger(k.split('.')[0]);
        // `sandbox-slow.<any suffix>` is the slow company, whatever the suffix.
        const index = trigger === 'sandbox-slow' ? w.companyIndexBySlug('sandbox-slow') : w.companyIndexByDomain(k);
        return { trigger, answer: () => this.companyAnswer(index) };
      }
    }
    if (area === 'people' && by === 'by-id' && key !== undefined) {
      const k = key.trim().toLowerCase();
      return { trigger: asTrigger(k), answer: () => this.personAnswer(w.personIndexById(k)) };
    }
    if (area === 'people' && by === 'by-name' && key === undefined) {
      const name = url.searchParams.get('name');
      if (!name?.trim()) return { answer: () => badRequest('name is required') };
      const trigger = asTrigger(normalizeName(name));
      const index = trigger === 'sandbox-slow' ? w.personIndexById('sandbox-slow') : w.personIndexByName(name);
      return { trigger, answer: () => this.personAnswer(index) };
    }
    if (area === 'search' && by === undefined) {
      const q = url.searchParams.get('q');
      const limitText = url.searchParams.get('limit') ?? '10';
      if (!q?.trim()) return { answer: () => badRequest('q is required') };
      if (!/^\d+$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > SEARCH_LIMIT_MAX) {
        return { answer: () => badRequest(`limit must be an integer from 1 to ${SEARCH_LIMIT_MAX}`) };
      }
      return {
        trigger: asTrigger(normalizeName(q)),
        answer: () => ({ status: 200, body: { results: w.search(q, Number(limitText)) } }),
      };
    }
    if (area === 'health' && by === undefined) {
      return { answer: () => ({ status: 200, body: { status: 'ok', companies: w.companies.length, people: w.people.length } }) };
    }
    return { answer: () => ({ status: 404, body: { error: 'route_not_found' } }) };
  }
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed || res.headersSent) return;
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...answer.headers,
  });
  res.end(body);
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const host = opts.host ?? '127.0.0.1';
  const network = new SandboxNetwork(getWorld());
  const hitsByPath = new Map<string, number>();
  let totalHits = 0;
  const slowTimers = new Set<NodeJS.Timeout>();

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const rawUrl = req.url ?? '/';
    totalHits++;
    hitsByPath.set(rawUrl, (hitsByPath.get(rawUrl) ?? 0) + 1);
    let routed: Routed;
    try {
      routed = network.route(req.method ?? 'GET', rawUrl);
    } catch {
      routed = { answer: () => badRequest('malformed request') };
    }
    switch (routed.trigger) {
      case 'sandbox-timeout':
        return; // Never answers; close() destroys the socket.
      case 'sandbox-blocked':
        return send(res, {
          status: 403,
          headers: { 'retry-after': String(BLOCKED_RETRY_AFTER_SECONDS), 'x-sandbox-block': 'automated-traffic' },
          body: { error: 'blocked', message: 'Request denied: automated traffic detected' },
        });
      case 'sandbox-source-rate-limited':
        return send(res, {
          status: 429,
          headers: { 'retry-after': String(RATE_LIMITED_RETRY_AFTER_SECONDS) },
          body: { error: 'rate_limited', message: 'Too many requests' },
        });
      case 'sandbox-upstream-error':
        return send(res, { status: 500, body: { error: 'internal_error', message: 'Something went wrong' } });
      case 'sandbox-parse-error': {
        // A 200 whose JSON breaks off mid-record, as a cut connection or a bad proxy would leave it.
        const body = '{"id":"7003","name":"Sandbox Parse Error","follower_count":12,"specialties":["Trunc';
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      case 'sandbox-slow': {
        const timer = setTimeout(() => {
          slowTimers.delete(timer);
          send(res, routed.answer());
        }, SLOW_DELAY_MS);
        slowTimers.add(timer);
        return;
      }
      default:
        try {
          send(res, routed.answer());
        } catch {
          send(res, { status: 500, body: { error: 'internal_error' } });
        }
    }
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    hits: (pathAndQuery) => (pathAndQuery === undefined ? totalHits : (hitsByPath.get(pathAndQuery) ?? 0)),
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        for (const timer of slowTimers) clearTimeout(timer);
        slowTimers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      })),
  };
}
