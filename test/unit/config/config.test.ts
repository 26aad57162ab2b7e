import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseSource, ConfigError, describeSource, loadConfig } from '../../../services/config/config';

// A generated ADMIN_TOKEN is kept under DATA_DIR: every load here gets a directory of its own.
const dirs: string[] = [];
const freshDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'config-test-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('configuration', () => {
  it('given no settings, then every default of README.md "Pointing it at real servers" applies', () => {
    const dataDir = freshDataDir();
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      databaseUrl: undefined,
      dataDir,
      redis: undefined,
      kafkaBrokers: undefined,
      source: { kind: 'sandbox' },
      sourceTimeoutMs: 10_000,
      adminTokenSource: 'created',
      docsUrl: undefined,
      trustProxy: false,
    });
    expect(config.adminToken.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ DATA_DIR: freshDataDir() }).adminToken).not.toBe(config.adminToken);
    expect(loadConfig({ ADMIN_TOKEN: 'a-token-of-sufficient-length' }).dataDir).toBe('./data');
  });

  it('given no ADMIN_TOKEN, then the generated one is kept under DATA_DIR (mode 0600) and the next start reuses it', () => {
    const dataDir = freshDataDir();
    const first = loadConfig({ DATA_DIR: dataDir });
    const file = join(dataDir, 'admin-token');
    expect(readFileSync(file, 'utf8').trim()).toBe(first.adminToken);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(second).toMatchObject({ adminToken: first.adminToken, adminTokenSource: 'kept', adminTokenFile: file });
    expect(loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'a-token-of-sufficient-length' })).toMatchObject({ adminTokenSource: 'env' });
  });

  it('given a kept token shorter than 16 characters, then the start stops naming ADMIN_TOKEN', () => {
    const dataDir = freshDataDir();
    writeFileSync(join(dataDir, 'admin-token'), 'short\n');
    expect(() => loadConfig({ DATA_DIR: dataDir })).toThrow(/ADMIN_TOKEN/);
  });

  it('given real servers, then they are parsed', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      REDIS_URL: 'redis://127.0.0.1:6379',
      KAFKA_BROKERS: '127.0.0.1:9092, 127.0.0.1:9093',
      SOURCE_URL: 'http://127.0.0.1:4010/',
      ADMIN_TOKEN: 'a-token-of-sufficient-length',
      DOCS_URL: 'https://docs.example.org/api/',
      PORT: '8080',
    });
    expect(config.kafkaBrokers).toEqual(['127.0.0.1:9092', '127.0.0.1:9093']);
    expect(config.source).toEqual({ kind: 'url', url: 'http://127.0.0.1:4010' });
    expect(config.docsUrl).toBe('https://docs.example.org/api');
    expect(config.adminTokenSource).toBe('env');
    expect(config.port).toBe(8080);
  });

  it('given a host list with target_session_attrs=read-write, then it is taken as written (the adapter splits it)', () => {
    const url = 'postgres://127.0.0.1:5442,127.0.0.1:5441/db?target_session_attrs=read-write';
    expect(loadConfig({ DATABASE_URL: url, SOURCE_URL: 'sandbox', DATA_DIR: freshDataDir() }).databaseUrl).toBe(url);
  });

  it('given an unsupported target_session_attrs, then the start stops saying which values are', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://a,b/db?target_session_attrs=standby', DATA_DIR: freshDataDir() })).toThrow(
      /DATABASE_URL: target_session_attrs=standby is not supported: use read-write .* or any/,
    );
  });

  it('given REDIS_URL in each accepted form, then config holds where to find Redis', () => {
    const redisOf = (REDIS_URL: string) => loadConfig({ REDIS_URL, DATA_DIR: freshDataDir() }).redis;
    expect(redisOf('redis://127.0.0.1:6379/2')).toEqual({ kind: 'standalone', url: 'redis://127.0.0.1:6379/2' });
    expect(redisOf('rediss://cache.internal:6380')).toEqual({ kind: 'standalone', url: 'rediss://cache.internal:6380' });
    expect(redisOf('redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/lookup')).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }],
      primaryName: 'lookup',
    });
    expect(redisOf('redis+cluster://10.0.0.1:7000,10.0.0.2:7000')).toEqual({
      kind: 'cluster',
      nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7000 }],
    });
  });

  it('given a bad REDIS_URL, then the start stops with one line naming the variable and the reason, never the password', () => {
    const stop = (REDIS_URL: string) => {
      try {
        loadConfig({ REDIS_URL, DATA_DIR: freshDataDir() });
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('loaded');
    };
    expect(stop('redis+sentinel://:s3cret@10.0.0.1:26379')).toBe(
      'Invalid configuration:\n  REDIS_URL: redis+sentinel:// needs the primary name as its path, e.g. redis+sentinel://h1:26379,h2:26379/mymaster',
    );
    expect(stop('redis+cluster://:pa/ss@10.0.0.1:7000')).not.toMatch(/pa|ss/);
  });

  it('given no ABANDONED_CHARGE_GRACE_MS, then abandoned charges wait SOURCE_TIMEOUT_MS plus a minute; a set one is taken', () => {
    expect(loadConfig({ SOURCE_TIMEOUT_MS: '2000', DATA_DIR: freshDataDir() }).abandonedChargeGraceMs).toBe(62_000);
    expect(loadConfig({ SOURCE_TIMEOUT_MS: '2000', ABANDONED_CHARGE_GRACE_MS: '2001', DATA_DIR: freshDataDir() }).abandonedChargeGraceMs).toBe(2001);
  });

  it('given no DATABASE_QUERY_TIMEOUT_MS, then statements may wait 5 s; a set one is taken, one under 100 ms stops the start', () => {
    expect(loadConfig({ DATA_DIR: freshDataDir() }).databaseQueryTimeoutMs).toBe(5_000);
    expect(loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '30000', DATA_DIR: freshDataDir() }).databaseQueryTimeoutMs).toBe(30_000);
    expect(() => loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '99', DATA_DIR: freshDataDir() })).toThrow(/DATABASE_QUERY_TIMEOUT_MS/);
  });

  it('given an empty value, then it counts as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: ' ', DATA_DIR: freshDataDir() })).toMatchObject({ databaseUrl: undefined, port: 3000 });
  });

  it.each([
    ['true', true],
    ['FALSE', false],
    ['10.0.0.0/8, 192.0.2.7,fd00::/8', ['10.0.0.0/8', '192.0.2.7', 'fd00::/8']],
  ])('given TRUST_PROXY=%s, then it is read as %j', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value, DATA_DIR: freshDataDir() }).trustProxy).toEqual(expected);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'postgres://a:1,b:2/db?target_session_attrs=prefer-standby'],
    ['DATABASE_URL', 'postgres://a:1,,b:2/db'],
    ['REDIS_URL', 'not a url'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['REDIS_URL', 'redis+sentinel://127.0.0.1:26379'],
    ['REDIS_URL', 'redis+cluster://127.0.0.1:7000,:7001'],
    ['KAFKA_BROKERS', 'localhost'],
    ['SOURCE_URL', 'ftp://x'],
    ['SOURCE_TIMEOUT_MS', '-5'],
    ['ADMIN_TOKEN', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['DOCS_URL', 'javascript:alert(1)'],
    ['TRUST_PROXY', '1'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', 'proxy.internal'],
    ['ABANDONED_CHARGE_GRACE_MS', '10000'],
    ['ABANDONED_CHARGE_GRACE_MS', '5s'],
  ])('given %s=%s, then the start stops with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}\\b`));
  });
});

describe('the data source: the sandbox is chosen, never fallen into', () => {
  const url = 'https://source.example.org';

  it('given no DATABASE_URL and no SOURCE_URL (the embedded default), then the sandbox is started', () => {
    expect(chooseSource({})).toEqual({ kind: 'sandbox' });
  });

  it('given DATABASE_URL and no SOURCE_URL, then the start stops with a one-line reason naming SOURCE_URL', () => {
    expect(() => chooseSource({ databaseUrl: 'postgres://db/prod' })).toThrow(ConfigError);
    expect(() => chooseSource({ databaseUrl: 'postgres://db/prod' })).toThrow(/^Invalid configuration:\n {2}SOURCE_URL: required when DATABASE_URL is set[^\n]*sandbox[^\n]*$/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/prod', ADMIN_TOKEN: 'a-token-of-sufficient-length' })).toThrow(/SOURCE_URL: required when DATABASE_URL is set/);
  });

  it('given DATABASE_URL and no SOURCE_URL, when a program that fetches nothing loads it (relay, consumer), then it loads', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/prod', KAFKA_BROKERS: '127.0.0.1:9092' }, { fetches: false });
    expect(config.databaseUrl).toBe('postgres://db/prod');
    expect(config.kafkaBrokers).toEqual(['127.0.0.1:9092']);
  });

  it('given DATABASE_URL and SOURCE_URL=sandbox, then the sandbox is chosen on purpose', () => {
    expect(chooseSource({ databaseUrl: 'postgres://db/test', sourceUrl: 'sandbox' })).toEqual({ kind: 'sandbox' });
    expect(loadConfig({ DATABASE_URL: 'postgres://db/test', SOURCE_URL: 'sandbox', ADMIN_TOKEN: 'a-token-of-sufficient-length' }).source).toEqual({ kind: 'sandbox' });
  });

  it('given a source URL, with or without DATABASE_URL, then live fetches go there (trailing slashes dropped)', () => {
    expect(chooseSource({ databaseUrl: 'postgres://db/prod', sourceUrl: `${url}/` })).toEqual({ kind: 'url', url });
    expect(chooseSource({ sourceUrl: url })).toEqual({ kind: 'url', url });
  });

  it('given each choice, then the start-up line names it', () => {
    expect(describeSource({ kind: 'sandbox' })).toMatch(/sandbox/);
    expect(describeSource({ kind: 'url', url })).toBe(url);
  });
});

describe('observability settings', () => {
  const base = { ADMIN_TOKEN: 'a-token-of-sufficient-length' };

  it('given none, then /metrics is on the main port, a tenth of successes is logged, SIGTERM closes the listener at once, an audit job is dead after 30 s without a heartbeat', () => {
    expect(loadConfig(base)).toMatchObject({ metricsPort: undefined, accessLogSample: 0.1, drainDelayMs: 0, auditHeartbeatTimeoutMs: 30_000 });
  });

  it('given values, then they are read as given', () => {
    expect(loadConfig({ ...base, METRICS_PORT: '9464', ACCESS_LOG_SAMPLE: '0.25', DRAIN_DELAY_MS: '5000', AUDIT_HEARTBEAT_TIMEOUT_MS: '3000' })).toMatchObject({
      metricsPort: 9464,
      accessLogSample: 0.25,
      drainDelayMs: 5000,
      auditHeartbeatTimeoutMs: 3000,
    });
    expect(loadConfig({ ...base, ACCESS_LOG_SAMPLE: '1' }).accessLogSample).toBe(1);
  });

  it('given no EMAIL_OUTBOX_RETENTION_MS, then sent and given-up emails are kept 30 days; a set one is taken, one under an hour stops the start', () => {
    expect(loadConfig(base).emailOutboxRetentionMs).toBe(30 * 86_400_000);
    expect(loadConfig({ ...base, EMAIL_OUTBOX_RETENTION_MS: '604800000' }).emailOutboxRetentionMs).toBe(604_800_000);
    expect(() => loadConfig({ ...base, EMAIL_OUTBOX_RETENTION_MS: '59000' })).toThrow(/EMAIL_OUTBOX_RETENTION_MS: /);
    expect(() => loadConfig({ ...base, EMAIL_OUTBOX_RETENTION_MS: '30d' })).toThrow(/EMAIL_OUTBOX_RETENTION_MS: /);
  });

  it('given a bad value, then the start stops naming the variable', () => {
    for (const [name, value] of [
      ['METRICS_PORT', '70000'],
      ['METRICS_PORT', 'x'],
      ['ACCESS_LOG_SAMPLE', '1.5'],
      ['ACCESS_LOG_SAMPLE', '-0.1'],
      ['ACCESS_LOG_SAMPLE', 'half'],
      ['DRAIN_DELAY_MS', '-1'],
      // Fewer than three heartbeats: a live job could be taken for a dead one.
      ['AUDIT_HEARTBEAT_TIMEOUT_MS', '2999'],
    ] as const) {
      expect(() => loadConfig({ ...base, [name]: value }), `${name}=${value}`).toThrow(new RegExp(`${name}: `));
    }
  });
});

describe('webhook and watch settings', () => {
  const base = { ADMIN_TOKEN: 'a-token-of-sufficient-length' };

  it('given none, then public addresses only, 10 s per attempt, retries from 5 s up to 1 h apart for 24 h, a day of secret overlap', () => {
    const config = loadConfig(base);
    expect(config.webhooks).toMatchObject({ timeoutMs: 10_000, retry: { initialMs: 5_000, maxMs: 3_600_000, horizonMs: 86_400_000 }, secretOverlapMs: 86_400_000, pollMs: 1_000 });
    expect(config.webhooks.allowedHosts.names.size + config.webhooks.allowedHosts.ranges.length).toBe(0);
    expect(config.watchPollMs).toBe(5_000);
  });

  it('given WEBHOOK_ALLOWED_HOSTS, then its names and ranges are read', () => {
    const { allowedHosts } = loadConfig({ ...base, WEBHOOK_ALLOWED_HOSTS: 'hooks.internal, 10.0.0.0/8,::1' }).webhooks;
    expect([...allowedHosts.names]).toEqual(['hooks.internal']);
    expect(allowedHosts.ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual(['10.0.0.0/8', '::1/128']);
  });

  it('given a bad value, then the start stops naming the variable', () => {
    for (const [name, value] of [
      ['WEBHOOK_ALLOWED_HOSTS', '10.0.0.0/40'],
      ['WEBHOOK_ALLOWED_HOSTS', 'http://x'],
      ['WEBHOOK_TIMEOUT_MS', '0'],
      ['WEBHOOK_RETRY_HORIZON_MS', 'a day'],
    ] as const) {
      expect(() => loadConfig({ ...base, [name]: value }), `${name}=${value}`).toThrow(new RegExp(`${name}: `));
    }
  });
});
