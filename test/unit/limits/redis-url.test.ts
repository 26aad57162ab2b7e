import { describe, expect, it } from 'vitest';
import { parseRedisUrl } from '../../../services/limits/redis-url';

describe('parseRedisUrl', () => {
  describe('given one server', () => {
    it.each(['redis://127.0.0.1:6379', 'redis://:secret@cache.internal:6379/3', 'rediss://user:secret@cache.example.org:6380', 'REDIS://127.0.0.1'])(
      'when it reads %s, then ioredis gets the URL as it is',
      (url) => {
        expect(parseRedisUrl(url)).toEqual({ ok: true, target: { kind: 'standalone', url } });
      },
    );

    it('when the path is not a database number, then it is refused', () => {
      expect(parseRedisUrl('redis://127.0.0.1:6379/mymaster')).toEqual({ ok: false, reason: 'the path must be a database number, e.g. redis://127.0.0.1:6379/0' });
    });
  });

  describe('given sentinels', () => {
    it('when it reads three host:port pairs and a primary name, then those are the sentinels and the name', () => {
      expect(parseRedisUrl('redis+sentinel://10.0.0.1:26379,10.0.0.2:26380,sentinel-3.internal:26381/lookup-limits')).toEqual({
        ok: true,
        target: {
          kind: 'sentinel',
          sentinels: [
            { host: '10.0.0.1', port: 26379 },
            { host: '10.0.0.2', port: 26380 },
            { host: 'sentinel-3.internal', port: 26381 },
          ],
          primaryName: 'lookup-limits',
        },
      });
    });

    it('when a host has no port, then it is the sentinel port 26379; IPv6 addresses go in brackets', () => {
      expect(parseRedisUrl('redis+sentinel://s1,[::1]:26400,[fd00::2]/mymaster')).toMatchObject({
        target: { sentinels: [{ host: 's1', port: 26379 }, { host: '::1', port: 26400 }, { host: 'fd00::2', port: 26379 }] },
      });
    });

    it('when credentials come first, then they are decoded and kept for the primary and its replicas', () => {
      expect(parseRedisUrl('redis+sentinel://limits:p%40ss%2Fw0rd@s1:26379,s2:26379/mymaster')).toMatchObject({
        target: { username: 'limits', password: 'p@ss/w0rd', primaryName: 'mymaster' },
      });
      expect(parseRedisUrl('redis+sentinel://:only-a-password@s1/mymaster')).toEqual({
        ok: true,
        target: { kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], primaryName: 'mymaster', password: 'only-a-password' },
      });
    });

    it.each([
      ['redis+sentinel://s1:26379,s2:26379', 'redis+sentinel:// needs the primary name as its path, e.g. redis+sentinel://h1:26379,h2:26379/mymaster'],
      ['redis+sentinel://s1:26379,s2:26379/', 'redis+sentinel:// needs the primary name as its path, e.g. redis+sentinel://h1:26379,h2:26379/mymaster'],
      ['redis+sentinel://s1:26379/a/b', 'the primary name must have no spaces or slashes'],
      ['redis+sentinel://s1:26379,,s2/m', 'an empty host in the host list'],
      ['redis+sentinel://s1:0/m', 'port 0 is not from 1 to 65535'],
      ['redis+sentinel://s1:99999/m', 'port 99999 is not from 1 to 65535'],
      ['redis+sentinel://s1:port/m', '"s1:port" is not host or host:port'],
      ['redis+sentinel://s1:26379/m?db=2', 'redis+sentinel:// takes no query or fragment'],
      ['redis+sentinel://%E0%A4%A@s1/m', 'the credentials are not valid percent-encoding'],
    ])('when it reads %s, then it is refused: %s', (url, reason) => {
      expect(parseRedisUrl(url)).toEqual({ ok: false, reason });
    });
  });

  describe('given a cluster', () => {
    it('when it reads some nodes, then those are the seed nodes (default port 6379)', () => {
      expect(parseRedisUrl('redis+cluster://:secret@10.0.0.1:7000,10.0.0.2,10.0.0.3:7002')).toEqual({
        ok: true,
        target: {
          kind: 'cluster',
          nodes: [
            { host: '10.0.0.1', port: 7000 },
            { host: '10.0.0.2', port: 6379 },
            { host: '10.0.0.3', port: 7002 },
          ],
          password: 'secret',
        },
      });
      expect(parseRedisUrl('redis+cluster://10.0.0.1:7000/')).toMatchObject({ target: { kind: 'cluster' } });
      expect(parseRedisUrl('redis+cluster://10.0.0.1:7000/0')).toEqual({ ok: false, reason: 'redis+cluster:// takes no path (a cluster has database 0 only)' });
    });
  });

  describe('given anything else', () => {
    it.each([
      ['http://127.0.0.1:6379', 'unknown scheme "http://": expected redis://, rediss://, redis+sentinel://host:port,…/<primary name> or redis+cluster://host:port,…'],
      ['127.0.0.1:6379', 'expected redis://, rediss://, redis+sentinel://host:port,…/<primary name> or redis+cluster://host:port,…'],
      ['redis://', 'no host'],
    ])('when it reads %s, then it is refused: %s', (url, reason) => {
      expect(parseRedisUrl(url)).toEqual({ ok: false, reason });
    });

    it('when a password holds an unencoded slash, then the reason never quotes a piece of it', () => {
      const parsed = parseRedisUrl('redis+cluster://admin:top/secret@10.0.0.1:7000');
      expect(parsed).toEqual({ ok: false, reason: 'a host is not host or host:port' });
    });
  });
});
