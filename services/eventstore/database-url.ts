/**
 * DATABASE_URL as libpq writes it, host lists included:
 * `postgres://[user[:password]@]host[:port][,host[:port]...]/database[?target_session_attrs=read-write|any&...]`.
 * node-postgres takes one host per connection string, so the list becomes one string per host, in
 * the order given; the adapter picks among them (sql-pg.ts, docs/adr/0009-multi-host-database-url.md).
 */

/** `read-write`: only a server that takes writes (not in recovery, not read-only by default). `any`: the first that answers. */
export type TargetSessionAttrs = 'read-write' | 'any';

export interface DatabaseHost {
  /** `host:port` as written (port 5432 when left out), for logs and messages: never the password. */
  label: string;
  /** The URL with this host alone and without `target_session_attrs`, as `pg` takes it. */
  connectionString: string;
}

export interface DatabaseTarget {
  hosts: DatabaseHost[];
  targetSessionAttrs: TargetSessionAttrs;
}

export type ParsedDatabaseUrl = { ok: true; target: DatabaseTarget } | { ok: false; reason: string };

const SHAPE = /^(postgres(?:ql)?):\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/i;
/** A bracketed IPv6 address or a name/IPv4 address, then an optional port. */
const HOST_AND_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^:[\],]+)(?::(\d*))?$/;
const DEFAULT_PORT = 5432;
const SUPPORTED_ATTRS: readonly string[] = ['read-write', 'any'];

const fail = (reason: string): ParsedDatabaseUrl => ({ ok: false, reason });

/** Splits a (possibly multi-host) DATABASE_URL into one connection string per host; a reason when it cannot be used. */
export function parseDatabaseUrl(url: string): ParsedDatabaseUrl {
  const shape = SHAPE.exec(url);
  if (!shape) return fail('expected postgres://[user[:password]@]host[:port][,host[:port]...]/database[?target_session_attrs=read-write]');
  const [, scheme, authority = '', path = '', query = ''] = shape;
  const at = authority.lastIndexOf('@');
  const userinfo = authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);

  const params = new URLSearchParams(query);
  const attrs = params.getAll('target_session_attrs');
  if (attrs.length > 1) return fail('target_session_attrs is given more than once');
  const targetSessionAttrs = attrs[0] ?? 'any';
  if (!SUPPORTED_ATTRS.includes(targetSessionAttrs)) {
    return fail(`target_session_attrs=${targetSessionAttrs} is not supported: use read-write (always the writable primary) or any (the first host that answers)`);
  }
  // The other parameters go to pg exactly as written (re-encoding them could change them).
  const kept = query.slice(1).split('&').filter((pair) => pair !== '' && new URLSearchParams(pair).keys().next().value !== 'target_session_attrs');
  const rest = kept.length > 0 ? `?${kept.join('&')}` : '';

  const entries = hostList === '' ? [''] : hostList.split(',');
  if (entries.length > 1 && (params.has('host') || params.has('hostaddr') || params.has('port'))) {
    return fail('give several hosts either in the host list or in ?host=, not both');
  }
  const hosts: DatabaseHost[] = [];
  for (const entry of entries) {
    let label = 'the default host';
    let hostPart = '';
    if (entry !== '') {
      const m = HOST_AND_PORT.exec(entry);
      if (!m) return fail(`"${entry}" is not a host[:port]${entries.length > 1 ? ' (hosts are separated by commas)' : ''}`);
      const [, host = '', portText = ''] = m;
      const port = portText === '' ? DEFAULT_PORT : Number(portText);
      if (!(port >= 1 && port <= 65535)) return fail(`port ${portText} of ${host} is not from 1 to 65535`);
      label = `${host}:${port}`;
      hostPart = label;
    } else if (entries.length > 1) {
      return fail('an empty host in the host list');
    }
    const connectionString = `${scheme}://${userinfo}${hostPart}${path}${rest}`;
    if (!URL.canParse(connectionString)) return fail(`not a valid URL for host ${label}`);
    hosts.push({ label, connectionString });
  }
  return { ok: true, target: { hosts, targetSessionAttrs: targetSessionAttrs as TargetSessionAttrs } };
}
