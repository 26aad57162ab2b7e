import { describe, expect, it } from 'vitest';
import { backgroundBaseUrl, baseUrlOf, docsUrlOf, proxyTrust, type Arrival } from '../../../services/http/public-url';

const LOCAL = { host: '127.0.0.1', port: 0, docsUrl: undefined };
const direct: Arrival = { peerTrusted: false, boundPort: 41234, localAddress: '127.0.0.1' };

describe('the public base URL', () => {
  it('given no settings, then it is the listening host and the port actually bound', () => {
    expect(baseUrlOf(LOCAL, direct)).toBe('http://127.0.0.1:41234');
    expect(docsUrlOf(LOCAL, direct)).toBe('http://127.0.0.1:41234/docs');
  });

  it('given an untrusted peer sending X-Forwarded-Host, then the header is ignored', () => {
    const arrival = { ...direct, forwardedHost: 'attacker.example:8443', forwardedProto: 'https' };
    expect(baseUrlOf(LOCAL, arrival)).toBe('http://127.0.0.1:41234');
  });

  it('given a trusted proxy, then its X-Forwarded-Proto and -Host make the base URL', () => {
    const arrival = { ...direct, peerTrusted: true, forwardedHost: 'api.example.org', forwardedProto: 'https' };
    expect(baseUrlOf(LOCAL, arrival)).toBe('https://api.example.org');
    expect(docsUrlOf(LOCAL, arrival)).toBe('https://api.example.org/docs');
  });

  it('given repeated forwarded values, then the nearest proxy\'s (the last) counts', () => {
    const arrival = { ...direct, peerTrusted: true, forwardedHost: 'a.example.org, api.example.org:8443', forwardedProto: 'http, HTTPS' };
    expect(baseUrlOf(LOCAL, arrival)).toBe('https://api.example.org:8443');
  });

  it('given a trusted proxy without X-Forwarded-Host, then the own address is used, scheme header or not', () => {
    expect(baseUrlOf(LOCAL, { ...direct, peerTrusted: true, forwardedProto: 'https' })).toBe('http://127.0.0.1:41234');
  });

  it.each([
    ['a host with a path', 'api.example.org/evil'],
    ['a host with markup', 'a"><script>x</script>'],
    ['a host with credentials', 'user@api.example.org'],
    ['an empty host', ''],
  ])('given a trusted proxy sending %s, then the own address is used', (_what, forwardedHost) => {
    expect(baseUrlOf(LOCAL, { ...direct, peerTrusted: true, forwardedHost })).toBe('http://127.0.0.1:41234');
  });

  it('given a trusted proxy sending a scheme other than http(s), then the own address is used', () => {
    expect(baseUrlOf(LOCAL, { ...direct, peerTrusted: true, forwardedHost: 'api.example.org', forwardedProto: 'javascript' })).toBe('http://127.0.0.1:41234');
  });

  it('given DOCS_URL, then the base URL is its origin, whatever the request says', () => {
    const config = { ...LOCAL, docsUrl: 'https://docs.example.org/api' };
    const arrival = { ...direct, peerTrusted: true, forwardedHost: 'proxy.example.org' };
    expect(baseUrlOf(config, arrival)).toBe('https://docs.example.org');
    expect(docsUrlOf(config, arrival)).toBe('https://docs.example.org/api');
  });

  it('given a wildcard HOST, then the local address the connection reached stands in for it', () => {
    expect(baseUrlOf({ ...LOCAL, host: '0.0.0.0' }, { ...direct, localAddress: '10.1.2.3' })).toBe('http://10.1.2.3:41234');
    expect(baseUrlOf({ ...LOCAL, host: '::' }, { ...direct, localAddress: '::ffff:10.1.2.3' })).toBe('http://10.1.2.3:41234');
    expect(baseUrlOf({ ...LOCAL, host: '::' }, { ...direct, localAddress: 'fd00::5' })).toBe('http://[fd00::5]:41234');
  });

  it('given an IPv6 or named HOST, then it is written as a URL host', () => {
    expect(baseUrlOf({ ...LOCAL, host: '::1' }, direct)).toBe('http://[::1]:41234');
    expect(baseUrlOf({ ...LOCAL, host: 'API.internal' }, direct)).toBe('http://api.internal:41234');
  });

  it('given no bound port known (not listening), then the configured PORT', () => {
    expect(baseUrlOf({ ...LOCAL, port: 3000 }, { peerTrusted: false })).toBe('http://127.0.0.1:3000');
  });
});

describe('the base URL outside any request (a low-balance email)', () => {
  it('given DOCS_URL, then its origin, as in answers to requests', () => {
    const config = { ...LOCAL, docsUrl: 'https://api.example.org/reference/errors' };
    expect(backgroundBaseUrl(config, 'http://127.0.0.1:41234')).toBe(baseUrlOf(config, direct));
    expect(backgroundBaseUrl(config, 'http://127.0.0.1:41234')).toBe('https://api.example.org');
  });

  it('given no DOCS_URL, then the address the server listens on', () => {
    expect(backgroundBaseUrl(LOCAL, 'http://127.0.0.1:41234')).toBe('http://127.0.0.1:41234');
  });
});

describe('which peers TRUST_PROXY trusts', () => {
  it('given false, then none; given true, then all', () => {
    expect(proxyTrust(false)('127.0.0.1')).toBe(false);
    expect(proxyTrust(true)('203.0.113.9')).toBe(true);
  });

  it('given addresses and ranges, then exactly those, IPv4-mapped peers included', () => {
    const trusts = proxyTrust(['10.0.0.0/8', '192.0.2.7', 'fd00::/8']);
    expect(trusts('10.20.30.40')).toBe(true);
    expect(trusts('::ffff:10.20.30.40')).toBe(true);
    expect(trusts('192.0.2.7')).toBe(true);
    expect(trusts('192.0.2.8')).toBe(false);
    expect(trusts('fd00::1')).toBe(true);
    expect(trusts('::1')).toBe(false);
    expect(trusts(undefined)).toBe(false);
  });
});
