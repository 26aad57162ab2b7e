import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../../services/eventstore/database-url';

const target = (url: string) => {
  const parsed = parseDatabaseUrl(url);
  if (!parsed.ok) throw new Error(`expected ${url} to parse: ${parsed.reason}`);
  return parsed.target;
};
const reason = (url: string) => {
  const parsed = parseDatabaseUrl(url);
  if (parsed.ok) throw new Error(`expected ${url} to be refused`);
  return parsed.reason;
};

describe('parseDatabaseUrl', () => {
  it('given one host and no target_session_attrs, then one connection string, the URL itself, and any', () => {
    expect(target('postgres://postgres@127.0.0.1:5432/test')).toEqual({
      hosts: [{ label: '127.0.0.1:5432', connectionString: 'postgres://postgres@127.0.0.1:5432/test' }],
      targetSessionAttrs: 'any',
    });
  });

  it('given a host list as libpq writes it, then one connection string per host in the given order, without target_session_attrs', () => {
    expect(target('postgres://127.0.0.1:5442,127.0.0.1:5441/db?target_session_attrs=read-write')).toEqual({
      hosts: [
        { label: '127.0.0.1:5442', connectionString: 'postgres://127.0.0.1:5442/db' },
        { label: '127.0.0.1:5441', connectionString: 'postgres://127.0.0.1:5441/db' },
      ],
      targetSessionAttrs: 'read-write',
    });
  });

  it('given credentials and other parameters, then every host keeps them', () => {
    const { hosts } = target('postgresql://app:s%40cret@db-a:6432,db-b/lookup?sslmode=disable&target_session_attrs=any&application_name=api');
    expect(hosts.map((h) => h.connectionString)).toEqual([
      'postgresql://app:s%40cret@db-a:6432/lookup?sslmode=disable&application_name=api',
      'postgresql://app:s%40cret@db-b:5432/lookup?sslmode=disable&application_name=api',
    ]);
    expect(hosts.map((h) => h.label)).toEqual(['db-a:6432', 'db-b:5432']);
  });

  it('given a bracketed IPv6 address with and without a port, then both are hosts', () => {
    expect(target('postgres://[::1]:5441,[fd00::2]/db').hosts.map((h) => h.connectionString)).toEqual(['postgres://[::1]:5441/db', 'postgres://[fd00::2]:5432/db']);
  });

  it('given no host (a socket from ?host=), then one entry, the URL as written', () => {
    expect(target('postgres:///db?host=/var/run/postgresql').hosts).toEqual([{ label: 'the default host', connectionString: 'postgres:///db?host=/var/run/postgresql' }]);
  });

  it('given a password, then no label carries it', () => {
    for (const host of target('postgres://u:topsecret@a:1,b:2/db').hosts) expect(host.label).not.toContain('topsecret');
  });

  it.each([
    ['another scheme', 'mysql://x/db', /expected postgres:\/\//],
    ['no scheme at all', '127.0.0.1:5432', /expected postgres:\/\//],
    ['prefer-standby', 'postgres://a,b/db?target_session_attrs=prefer-standby', /target_session_attrs=prefer-standby is not supported: use read-write/],
    ['read-only', 'postgres://a,b/db?target_session_attrs=read-only', /read-only is not supported/],
    ['primary', 'postgres://a/db?target_session_attrs=primary', /primary is not supported/],
    ['target_session_attrs twice', 'postgres://a/db?target_session_attrs=any&target_session_attrs=read-write', /more than once/],
    ['an empty host in the list', 'postgres://a:1,,b:2/db', /empty host/],
    ['a trailing comma', 'postgres://a:1,/db', /empty host/],
    ['a port out of range', 'postgres://a:1,b:70000/db', /port 70000 of b/],
    ['port 0', 'postgres://a:0/db', /port 0 of a/],
    ['a port that is not a number', 'postgres://a:1,b:x/db', /"b:x" is not a host\[:port\]/],
    ['a host list and ?host=', 'postgres://a,b/db?host=c', /either in the host list or in \?host=/],
  ])('given %s, then it is refused with a reason', (_name, url, expected) => {
    expect(reason(url)).toMatch(expected);
  });
});
