import { describe, expect, it } from 'vitest';
import { isHostNameAllowed, judgeAddress, parseAllowedHosts } from '../../../services/webhooks/address-policy';

/** WEBHOOK_ALLOWED_HOSTS unset: public addresses only. */
const NO_ALLOWED_HOSTS = parseAllowedHosts(undefined);

describe('webhook address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['::', 'unspecified'],
    ['::ffff:10.0.0.1', 'private'],
    ['[::ffff:127.0.0.1]', 'loopback'],
  ])('given no allowance, when %s is judged, then it is refused as %s', (address, range) => {
    expect(judgeAddress(address, NO_ALLOWED_HOSTS)).toEqual({ allowed: false, range });
  });

  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '[2001:4860:4860::8888]'])('given no allowance, when the public %s is judged, then it is allowed', (address) => {
    expect(judgeAddress(address, NO_ALLOWED_HOSTS)).toEqual({ allowed: true });
  });

  it('given an address that is none, then it is refused', () => {
    expect(judgeAddress('example.com', NO_ALLOWED_HOSTS)).toEqual({ allowed: false, range: 'invalid' });
  });

  it('given WEBHOOK_ALLOWED_HOSTS with an address, a range and a name, then those are allowed and nothing else', () => {
    const allowed = parseAllowedHosts(' 127.0.0.1, 10.0.0.0/8 ,fd00::/8, Receiver.Internal. ,');
    expect(judgeAddress('127.0.0.1', allowed)).toEqual({ allowed: true });
    expect(judgeAddress('127.0.0.2', allowed)).toEqual({ allowed: false, range: 'loopback' });
    expect(judgeAddress('10.200.0.9', allowed)).toEqual({ allowed: true });
    expect(judgeAddress('::ffff:10.0.0.1', allowed)).toEqual({ allowed: true });
    expect(judgeAddress('fd12::1', allowed)).toEqual({ allowed: true });
    expect(judgeAddress('192.168.0.1', allowed)).toEqual({ allowed: false, range: 'private' });
    expect(isHostNameAllowed('receiver.internal', allowed)).toBe(true);
    expect(isHostNameAllowed('RECEIVER.internal.', allowed)).toBe(true);
    expect(isHostNameAllowed('other.internal', allowed)).toBe(false);
  });

  it.each(['10.0.0.0/33', 'not a host', 'http://x'])('given the bad entry %j, then parsing throws', (entry) => {
    expect(() => parseAllowedHosts(entry)).toThrow();
  });
});
