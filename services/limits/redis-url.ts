/**
 * Where the service finds Redis, from `REDIS_URL` (ADR 0015):
 *
 * - `redis://[[user]:password@]host[:port][/db]` and `rediss://…` (TLS): one server, as ioredis reads it;
 * - `redis+sentinel://[[user]:password@]host[:port],host[:port],…/<primary name>`: the sentinels
 *   (default port 26379) are asked which server is the primary named so, and again after a failover;
 *   the credentials are those of the primary and its replicas (the sentinels take none);
 * - `redis+cluster://[[user]:password@]host[:port],host[:port],…`: some nodes of a Redis Cluster
 *   (default port 6379), from which the client learns the others and which node holds which slot.
 */
export interface HostPort {
  host: string;
  port: number;
}

interface Credentials {
  username?: string;
  password?: string;
}

export type RedisTarget =
  | { kind: 'standalone'; url: string }
  | ({ kind: 'sentinel'; sentinels: HostPort[]; primaryName: string } & Credentials)
  | ({ kind: 'cluster'; nodes: HostPort[] } & Credentials);

export type ParsedRedisUrl = { ok: true; target: RedisTarget } | { ok: false; reason: string };

const fail = (reason: string): ParsedRedisUrl => ({ ok: false, reason });

const FORMS = 'redis://, rediss://, redis+sentinel://host:port,…/<primary name> or redis+cluster://host:port,…';
const DEFAULT_PORT = { sentinel: 26379, cluster: 6379 } as const;

/** The target of a REDIS_URL, or a one-line reason it is not one (never quoting a password). */
export function parseRedisUrl(value: string): ParsedRedisUrl {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return parseStandalone(value);
  if (scheme === 'redis+sentinel') return parseMultiHost(value, 'sentinel');
  if (scheme === 'redis+cluster') return parseMultiHost(value, 'cluster');
  return fail(scheme === undefined ? `expected ${FORMS}` : `unknown scheme "${scheme}://": expected ${FORMS}`);
}

function parseStandalone(value: string): ParsedRedisUrl {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('not a valid URL');
  }
  if (url.hostname === '') return fail('no host');
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname)) {
    return fail('the path must be a database number, e.g. redis://127.0.0.1:6379/0');
  }
  return { ok: true, target: { kind: 'standalone', url: value } };
}

function parseMultiHost(value: string, kind: 'sentinel' | 'cluster'): ParsedRedisUrl {
  const rest = value.slice(value.indexOf('://') + 3);
  if (/[?#]/.test(rest)) return fail(`redis+${kind}:// takes no query or fragment`);
  // The credentials end at the last '@' before the path, so a password may hold an encoded '@'.
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '' : rest.slice(slash + 1);
  const at = authority.lastIndexOf('@');
  const credentials = at === -1 ? {} : parseCredentials(authority.slice(0, at));
  if (credentials === undefined) return fail('the credentials are not valid percent-encoding');
  const hostList = at === -1 ? authority : authority.slice(at + 1);
  const hosts: HostPort[] = [];
  for (const entry of hostList.split(',')) {
    const parsed = parseHostPort(entry, DEFAULT_PORT[kind]);
    // A password with an unencoded '/' or '@' would land here: its pieces are never quoted.
    if (parsed === undefined) return fail(entry === '' ? 'an empty host in the host list' : `${value.includes('@') ? 'a host' : `"${entry}"`} is not host or host:port`);
    if (parsed.port < 1 || parsed.port > 65535) return fail(`port ${parsed.port} is not from 1 to 65535`);
    hosts.push(parsed);
  }
  if (kind === 'cluster') {
    if (path !== '') return fail('redis+cluster:// takes no path (a cluster has database 0 only)');
    return { ok: true, target: { kind, nodes: hosts, ...credentials } };
  }
  const primaryName = decoded(path);
  if (!primaryName) return fail('redis+sentinel:// needs the primary name as its path, e.g. redis+sentinel://h1:26379,h2:26379/mymaster');
  if (/[\s/]/.test(primaryName)) return fail('the primary name must have no spaces or slashes');
  return { ok: true, target: { kind, sentinels: hosts, primaryName, ...credentials } };
}

function parseCredentials(userinfo: string): Credentials | undefined {
  const colon = userinfo.indexOf(':');
  const username = decoded(colon === -1 ? userinfo : userinfo.slice(0, colon));
  const password = colon === -1 ? undefined : decoded(userinfo.slice(colon + 1));
  if (username === null || password === null) return undefined;
  // `redis://:password@host`: no username, as in a plain redis URL.
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

/** The decoded text; '' stays ''; null when the encoding is broken. */
function decoded(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** `host`, `host:port`, `[v6]` or `[v6]:port` (the port not yet checked for range). */
function parseHostPort(entry: string, defaultPort: number): HostPort | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+))(?::(\d{1,5}))?$/.exec(entry);
  if (!match) return undefined;
  return { host: match[1] ?? match[2]!, port: match[3] === undefined ? defaultPort : Number(match[3]) };
}
