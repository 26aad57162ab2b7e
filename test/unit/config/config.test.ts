import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../services/config/config';

describe('configuration', () => {
  it('given no settings, then every default of decisions.md "Running it" applies', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      databaseUrl: undefined,
      dataDir: './data',
      redisUrl: undefined,
      kafkaBrokers: undefined,
      sourceUrl: undefined,
      sourceTimeoutMs: 10_000,
      adminTokenGenerated: true,
      docsUrl: undefined,
    });
    expect(config.adminToken.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({}).adminToken).not.toBe(config.adminToken);
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
    expect(config.sourceUrl).toBe('http://127.0.0.1:4010');
    expect(config.docsUrl).toBe('https://docs.example.org/api');
    expect(config.adminTokenGenerated).toBe(false);
    expect(config.port).toBe(8080);
  });

  it('given an empty value, then it counts as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: ' ' })).toMatchObject({ databaseUrl: undefined, port: 3000 });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'not a url'],
    ['KAFKA_BROKERS', 'localhost'],
    ['SOURCE_URL', 'ftp://x'],
    ['SOURCE_TIMEOUT_MS', '-5'],
    ['ADMIN_TOKEN', 'short'],
    ['LOG_LEVEL', 'loud'],
  ])('given %s=%s, then the start stops with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}\\b`));
  });
});
