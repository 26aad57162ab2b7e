import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { judgeAddress, isHostNameAllowed, type AllowedHosts } from './address-policy';

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowed: AllowedHosts;
}

export interface AttemptOutcome {
  status: 'succeeded' | 'failed' | 'refused';
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
}

class RefusedAddressError extends Error {}

const USER_AGENT = 'lookup-api-webhooks/1';

/**
 * One POST of a webhook. The host is resolved here and every address it resolves to is judged by
 * the address policy before a connection opens (the connection goes to the addresses judged, so
 * a second resolution cannot swap them). Never follows a redirect (a 3xx is a failed attempt);
 * times out after `timeoutMs` in all.
 */
export async function postWebhook(request: OutboundRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { status: 'refused', responseStatus: null, latencyMs: 0, error: 'not a URL' };
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const nameAllowed = isHostNameAllowed(host, request.allowed);
  // An address literal is connected to without a lookup: judged here.
  if (isIP(host) !== 0 && !nameAllowed) {
    const verdict = judgeAddress(host, request.allowed);
    if (!verdict.allowed) return { status: 'refused', responseStatus: null, latencyMs: 0, error: `address ${host} is ${verdict.range}` };
  }
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (!nameAllowed) {
        for (const { address } of addresses) {
          const verdict = judgeAddress(address, request.allowed);
          if (!verdict.allowed) return callback(new RefusedAddressError(`${hostname} resolves to ${address}, a ${verdict.range} address`), '', 0);
        }
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} resolves to no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
  const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
  if (!transport) return { status: 'refused', responseStatus: null, latencyMs: 0, error: `scheme ${url.protocol} is not http(s)` };
  return new Promise<AttemptOutcome>((resolve) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        agent: false,
        lookup,
        signal: AbortSignal.timeout(request.timeoutMs),
        headers: { ...request.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body), 'user-agent': USER_AGENT },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        // The answer's body is not read beyond what arrives: only the status counts.
        res.resume();
        res.on('error', () => {});
        const ok = status >= 200 && status < 300;
        const error = ok ? null : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`;
        resolve({ status: ok ? 'succeeded' : 'failed', responseStatus: status, latencyMs: elapsed(), error });
      },
    );
    req.on('error', (err) => {
      const refused = err instanceof RefusedAddressError;
      const message = err.name === 'AbortError' || err.name === 'TimeoutError' ? `no answer within ${request.timeoutMs} ms` : err.message;
      resolve({ status: refused ? 'refused' : 'failed', responseStatus: null, latencyMs: elapsed(), error: message });
    });
    req.end(request.body);
  });
}
