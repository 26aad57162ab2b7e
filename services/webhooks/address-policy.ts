import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook request may reach (docs/api.md "Webhooks"): public unicast only, so a
 * webhook URL cannot reach the service's own network, unless WEBHOOK_ALLOWED_HOSTS allows it.
 * Pure: the resolver hands every resolved address here before a connection is opened.
 */
export interface AllowedHosts {
  /** Host names allowed whatever they resolve to, lower case, without a trailing dot. */
  names: ReadonlySet<string>;
  /** Addresses and CIDR ranges allowed even though they are not public. */
  ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

/** WEBHOOK_ALLOWED_HOSTS: a comma list of host names, addresses or CIDR ranges. Throws on a bad entry. */
export function parseAllowedHosts(list: string | undefined): AllowedHosts {
  const names = new Set<string>();
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const raw of (list ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (!ipaddr.isValidCIDR(entry)) throw new Error(`"${entry}" is not a CIDR range`);
      ranges.push(ipaddr.parseCIDR(entry));
    } else if (ipaddr.isValid(bare(entry))) {
      const address = ipaddr.parse(bare(entry));
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)) {
      names.add(entry.replace(/\.$/, ''));
    } else {
      throw new Error(`"${entry}" is neither a host name, an address nor a CIDR range`);
    }
  }
  return { names, ranges };
}

/** True when WEBHOOK_ALLOWED_HOSTS names the host itself. */
export function isHostNameAllowed(host: string, allowed: AllowedHosts): boolean {
  return allowed.names.has(host.toLowerCase().replace(/\.$/, ''));
}

export type AddressVerdict = { allowed: true } | { allowed: false; range: string };

/**
 * An address is reachable when it is public unicast, or inside an allowed range. An IPv4-mapped
 * IPv6 address (`::ffff:10.0.0.1`) is judged as the IPv4 address it is.
 */
export function judgeAddress(address: string, allowed: AllowedHosts): AddressVerdict {
  if (!ipaddr.isValid(bare(address))) return { allowed: false, range: 'invalid' };
  let parsed = ipaddr.parse(bare(address));
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  for (const [network, bits] of allowed.ranges) {
    if (network.kind() === parsed.kind() && parsed.match(network, bits)) return { allowed: true };
  }
  const range = parsed.range();
  return range === 'unicast' ? { allowed: true } : { allowed: false, range };
}

/** `[::1]` → `::1`: URL hosts keep IPv6 literals in brackets. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
