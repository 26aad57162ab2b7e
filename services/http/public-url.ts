import { BlockList, isIP, type AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/config';

/**
 * Whether a peer may speak for the client through X-Forwarded-*: the one reading of TRUST_PROXY,
 * given to Fastify (req.ip, req.protocol) and used for the public base URL below.
 */
export function proxyTrust(setting: Config['trustProxy']): (address: string | undefined) => boolean {
  if (setting === false) return () => false;
  if (setting === true) return () => true;
  const trusted = new BlockList();
  for (const entry of setting) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  // BlockList matches IPv4-mapped IPv6 peers (`::ffff:10.0.0.1`) against IPv4 rules as well.
  return (address) => address !== undefined && isIP(address) !== 0 && trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** What the base URL is derived from: settings and facts of the connection, never the Host header. */
export interface Arrival {
  /** X-Forwarded-Host and X-Forwarded-Proto as received (Node joins repeated ones with ", "). */
  forwardedHost?: string;
  forwardedProto?: string;
  /** The peer, and whether TRUST_PROXY trusts it. */
  peerTrusted: boolean;
  /** This server's address the connection reached, and the port actually bound. */
  localAddress?: string;
  boundPort?: number;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);
/** A DNS name or bracketed IPv6 literal, with an optional port: nothing that could break out of a URL. */
const HOST_PATTERN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * `{base_url}`: the origin of DOCS_URL when set; else, from a peer TRUST_PROXY trusts, the
 * X-Forwarded-Proto/-Host it sends; else this server's own address (HOST, or the local address
 * the connection reached when HOST is a wildcard, and the bound port). The caller's Host header
 * never counts: anyone can send any Host, and the URL lands in answers to other callers' links.
 */
export function baseUrlOf(config: Pick<Config, 'docsUrl' | 'host' | 'port'>, arrival: Arrival): string {
  const configured = configuredBaseUrl(config);
  if (configured) return configured;
  const forwarded = arrival.peerTrusted ? forwardedOrigin(arrival) : undefined;
  if (forwarded) return forwarded;
  let host = config.host;
  if (WILDCARD_HOSTS.has(host)) host = unmapped(arrival.localAddress) ?? '127.0.0.1';
  if (isIP(host) === 6) host = `[${host}]`;
  return `http://${host.toLowerCase()}:${arrival.boundPort ?? config.port}`;
}

/**
 * `{base_url}` for what no request asked for (a low-balance email): the origin of DOCS_URL when
 * set, else the address this server listens on (`listening`, app.listen's answer).
 */
export function backgroundBaseUrl(config: Pick<Config, 'docsUrl'>, listening: string): string {
  return configuredBaseUrl(config) ?? listening;
}

function configuredBaseUrl(config: Pick<Config, 'docsUrl'>): string | undefined {
  return config.docsUrl ? new URL(config.docsUrl).origin : undefined;
}

/** `{docs_url}`: DOCS_URL, else `{base_url}/docs`. */
export function docsUrlOf(config: Pick<Config, 'docsUrl' | 'host' | 'port'>, arrival: Arrival): string {
  return config.docsUrl ?? `${baseUrlOf(config, arrival)}/docs`;
}

function forwardedOrigin(arrival: Arrival): string | undefined {
  // The nearest proxy's value is the last one, as Fastify reads them.
  const host = lastEntry(arrival.forwardedHost);
  if (!host || !HOST_PATTERN.test(host)) return undefined;
  const proto = (lastEntry(arrival.forwardedProto) ?? 'http').toLowerCase();
  if (proto !== 'http' && proto !== 'https') return undefined;
  return `${proto}://${host.toLowerCase()}`;
}

function lastEntry(value: string | undefined): string | undefined {
  const last = value?.split(',').pop()?.trim();
  return last === '' ? undefined : last;
}

function unmapped(address: string | undefined): string | undefined {
  return address?.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

const trustByConfig = new WeakMap<Config, (address: string | undefined) => boolean>();

function arrivalOf(config: Config, req: FastifyRequest): Arrival {
  let trusts = trustByConfig.get(config);
  if (!trusts) trustByConfig.set(config, (trusts = proxyTrust(config.trustProxy)));
  const socket = req.raw.socket as { remoteAddress?: string; localAddress?: string } | undefined;
  const address = req.server.server.address() as AddressInfo | string | null;
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(',') : v;
  };
  return {
    forwardedHost: header('x-forwarded-host'),
    forwardedProto: header('x-forwarded-proto'),
    peerTrusted: trusts(socket?.remoteAddress),
    localAddress: socket?.localAddress,
    boundPort: address !== null && typeof address === 'object' ? address.port : undefined,
  };
}

/** `{base_url}` for this request (see baseUrlOf). */
export function publicBaseUrl(config: Config, req: FastifyRequest): string {
  return baseUrlOf(config, arrivalOf(config, req));
}

/** `{docs_url}` for this request: the base of every `error.doc_url`. */
export function docsUrlFor(config: Config, req: FastifyRequest): string {
  return docsUrlOf(config, arrivalOf(config, req));
}
