import { isIP } from 'node:net';
import { judgeAddress, isHostNameAllowed, type AllowedHosts } from './address-policy';

/**
 * Why a webhook URL is refused at registration, or null. Only what can be judged without DNS:
 * the scheme, credentials, an address literal. Host names are judged at each delivery, on every
 * address they resolve to then (postWebhook).
 */
export function webhookUrlProblem(raw: string, allowed: AllowedHosts): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL.';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL.';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials.';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && !isHostNameAllowed(host, allowed)) {
    const verdict = judgeAddress(host, allowed);
    if (!verdict.allowed) return `names a ${verdict.range} address, which webhooks may not reach.`;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    if (!isHostNameAllowed(host, allowed)) return 'names the loopback host, which webhooks may not reach.';
  }
  return null;
}
