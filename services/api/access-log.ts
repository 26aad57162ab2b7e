import type { FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../contracts/endpoints';
import type { Config } from '../config/config';
import { parsePersonReference } from '../lookup/references';
import { recordHttpRequest } from '../metrics/metrics';

/** The billed operation of each charged route, by its route pattern; the person route bills by what it is given. */
const OPERATION_BY_ROUTE = new Map(
  ENDPOINTS.flatMap((row) => ('priced' in row && row.priced.length === 1 ? [[row.path.replace(/\{(\w+)\}/g, ':$1'), row.priced[0]!] as const] : [])),
);
const PERSON_ROUTE = '/v1/person';

/**
 * After every answer: the HTTP metrics, and one access line, always for a 4xx/5xx and for a
 * share ACCESS_LOG_SAMPLE of the rest (every charged call is in the event log anyway, by request
 * id). The line names who called (workspace, key id) and what it cost, read from the answer's own
 * headers and the error it rendered; never a header of the request, so no key or token.
 */
export function observeResponse(config: Pick<Config, 'accessLogSample'>, req: FastifyRequest, reply: FastifyReply): void {
  const route = req.routeOptions.url;
  const status = reply.statusCode;
  recordHttpRequest(req.method, route, status, reply.elapsedTime / 1000, req.errorAnswer?.code);
  if (status < 400 && (config.accessLogSample === 0 || Math.random() >= config.accessLogSample)) return;
  const charged = reply.getHeader('x-credits-charged');
  req.log.info(
    {
      access: true,
      method: req.method,
      route: route ?? null,
      status,
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      workspace_id: req.apiKey?.workspaceId ?? null,
      key_id: req.apiKey?.keyId ?? null,
      key_mode: req.apiKey?.mode ?? null,
      operation: operationOf(req, route),
      cache: headerText(reply.getHeader('x-cache')),
      credits_charged: charged === undefined ? (req.errorAnswer?.creditsCharged ?? null) : Number(charged),
      error_code: req.errorAnswer?.code ?? null,
    },
    'request',
  );
}

function operationOf(req: FastifyRequest, route: string | undefined): string | null {
  if (route === undefined) return null;
  const single = OPERATION_BY_ROUTE.get(route);
  if (single !== undefined) return single;
  if (route !== PERSON_ROUTE || typeof req.body !== 'string') return null;
  // Only for a logged line: the person route's operation is in its body (a URL or a name).
  try {
    const url = (JSON.parse(req.body) as { url?: unknown }).url;
    const parsed = typeof url === 'string' ? parsePersonReference(url) : undefined;
    return parsed?.ok ? (parsed.ref.kind === 'url' ? 'person_url' : 'person_name') : null;
  } catch {
    return null; // not JSON: answered 400, and the line says so by its status
  }
}

const headerText = (value: ReturnType<FastifyReply['getHeader']>) => (value === undefined ? null : String(value));

