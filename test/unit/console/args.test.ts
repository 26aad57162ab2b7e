import { describe, expect, it } from 'vitest';
import { DEFAULT_ADMIN_URL, parseInvocation, UsageError } from '../../../services/console/args';

const env = { ADMIN_TOKEN: 'env-token' };
const commandOf = (...argv: string[]) => parseInvocation(argv, env).command;
const usageErrorOf = (argv: string[], e: Record<string, string | undefined> = env) => {
  try {
    parseInvocation(argv, e);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
};

describe('parsing the admin command line', () => {
  it('given no flags, when parsing, then the URL is the default and the token comes from ADMIN_TOKEN', () => {
    expect(parseInvocation(['audit'], env)).toEqual({ command: { kind: 'audit' }, url: DEFAULT_ADMIN_URL, token: 'env-token', json: false });
  });

  it('given ADMIN_URL, --url, --token and --json, then the flags win over the environment', () => {
    const parsed = parseInvocation(['audit', '--url', 'http://admin:9000', '--token', 'flag-token', '--json'], { ADMIN_URL: 'http://env:1', ADMIN_TOKEN: 'env' });
    expect(parsed).toMatchObject({ url: 'http://admin:9000', token: 'flag-token', json: true });
    expect(parseInvocation(['audit'], { ADMIN_URL: 'http://env:1', ADMIN_TOKEN: 't' }).url).toBe('http://env:1');
  });

  it('given each command, then it becomes its typed form', () => {
    expect(commandOf('workspace', 'create', '--name', 'Acme Corp', '--credits', '100', '--max-concurrency', '4')).toEqual({ kind: 'workspace.create', name: 'Acme Corp', credits: 100, maxConcurrency: 4 });
    expect(commandOf('workspace', 'create', '--name', 'Bare')).toMatchObject({ kind: 'workspace.create', name: 'Bare', credits: undefined, maxConcurrency: undefined });
    expect(commandOf('workspace', 'get', 'ws_1')).toEqual({ kind: 'workspace.get', workspaceId: 'ws_1' });
    expect(commandOf('workspace', 'set-concurrency', 'ws_1', '3')).toEqual({ kind: 'workspace.set-concurrency', workspaceId: 'ws_1', maxConcurrency: 3 });
    expect(commandOf('workspace', 'set-alert', 'ws_1', '100')).toEqual({ kind: 'workspace.set-alert', workspaceId: 'ws_1', lowBalanceThreshold: 100 });
    expect(commandOf('workspace', 'set-alert', 'ws_1', 'none')).toEqual({ kind: 'workspace.set-alert', workspaceId: 'ws_1', lowBalanceThreshold: null });
    expect(commandOf('credits', 'grant', 'ws_1', '50', '--reason', 'promo')).toEqual({ kind: 'credits.grant', workspaceId: 'ws_1', amount: 50, reason: 'promo' });
    expect(commandOf('key', 'create', 'ws_1', '--name', 'prod', '--rate-limit', '60')).toEqual({ kind: 'key.create', workspaceId: 'ws_1', name: 'prod', rateLimitPerMinute: 60 });
    expect(commandOf('key', 'create', 'ws_1', '--test')).toEqual({ kind: 'key.create', workspaceId: 'ws_1', name: undefined, rateLimitPerMinute: undefined, test: true });
    expect(commandOf('key', 'list', 'ws_1')).toEqual({ kind: 'key.list', workspaceId: 'ws_1' });
    expect(commandOf('key', 'revoke', 'key_1')).toEqual({ kind: 'key.revoke', keyId: 'key_1' });
    expect(commandOf('usage', 'ws_1', '--key', 'key_1', '--from', '2025-01-01', '--to', '2025-01-31')).toEqual({ kind: 'usage', workspaceId: 'ws_1', keyId: 'key_1', from: '2025-01-01', to: '2025-01-31' });
    expect(commandOf('ledger', 'ws_1', '--request', 'req_1', '--after', '0', '--limit', '10', '--all')).toEqual({ kind: 'ledger', workspaceId: 'ws_1', requestId: 'req_1', after: 0, limit: 10, all: true });
    expect(commandOf('ledger', 'ws_1')).toMatchObject({ kind: 'ledger', all: false, after: undefined, limit: undefined });
  });

  it('given the finance commands, then they become their typed forms, --from and --to required', () => {
    const period = ['--from', '2025-06-01T00:00:00Z', '--to', '2025-07-01T00:00:00Z'];
    const from = '2025-06-01T00:00:00Z';
    const to = '2025-07-01T00:00:00Z';
    expect(commandOf('workspace', 'get', 'ws_1', '--as-of', from)).toEqual({ kind: 'workspace.get', workspaceId: 'ws_1', asOf: from });
    expect(commandOf('ledger', 'ws_1', '--as-of', from)).toMatchObject({ kind: 'ledger', asOf: from });
    expect(commandOf('statement', 'ws_1', ...period)).toEqual({ kind: 'statement', workspaceId: 'ws_1', from, to, csv: false });
    expect(commandOf('statement', 'ws_1', ...period, '--csv')).toMatchObject({ csv: true });
    expect(commandOf('export', 'ledger', ...period)).toEqual({ kind: 'export.ledger', from, to, format: 'parquet', out: '.' });
    expect(commandOf('export', 'ledger', ...period, '--format', 'csv', '--out', '/tmp/x')).toEqual({ kind: 'export.ledger', from, to, format: 'csv', out: '/tmp/x' });
    expect(usageErrorOf(['statement', 'ws_1', '--from', from])).toMatch(/--from and --to are required/);
    expect(usageErrorOf(['export', 'ledger', ...period, '--format', 'xlsx'])).toMatch(/--format must be parquet or csv/);
  });

  it('given options before the command or as --flag=value, then they parse the same', () => {
    expect(commandOf('--json', 'key', 'create', 'ws_1', '--rate-limit=30')).toEqual({ kind: 'key.create', workspaceId: 'ws_1', name: undefined, rateLimitPerMinute: 30 });
  });

  it('given nothing, help or -h, then it is help, with or without a token', () => {
    expect(parseInvocation([], {}).command).toEqual({ kind: 'help' });
    expect(parseInvocation(['help'], {}).command).toEqual({ kind: 'help' });
    expect(parseInvocation(['key', 'list', '-h'], {}).command).toEqual({ kind: 'help' });
  });

  it('given no token anywhere, then a command is refused', () => {
    expect(usageErrorOf(['audit'], {})).toMatch(/ADMIN_TOKEN/);
    expect(usageErrorOf(['audit'], { ADMIN_TOKEN: '' })).toMatch(/ADMIN_TOKEN/);
  });

  it('given unknown commands, missing or extra arguments, then it says which', () => {
    expect(usageErrorOf(['bogus'])).toBe('unknown command "bogus"');
    expect(usageErrorOf(['workspace'])).toBe('"workspace" needs a subcommand');
    expect(usageErrorOf(['workspace', 'delete', 'ws_1'])).toBe('unknown command "workspace delete"');
    expect(usageErrorOf(['workspace', 'get'])).toBe('workspace get: missing <workspace_id>');
    expect(usageErrorOf(['credits', 'grant', 'ws_1'])).toBe('credits grant: missing <amount>');
    expect(usageErrorOf(['key', 'revoke', 'key_1', 'key_2'])).toBe('key revoke: unexpected argument "key_2"');
    expect(usageErrorOf(['workspace', 'create'])).toBe('workspace create: --name is required');
  });

  it('given an option another command takes, or none takes, then it is refused', () => {
    expect(usageErrorOf(['key', 'list', 'ws_1', '--all'])).toBe('key list: unknown option --all');
    expect(usageErrorOf(['audit', '--nope'])).toMatch(/nope/);
    expect(usageErrorOf(['workspace', 'get', 'ws_1', '--credits', '5'])).toBe('workspace get: unknown option --credits');
  });

  it('given numbers that are not whole or too small, then they are refused before any call', () => {
    expect(usageErrorOf(['credits', 'grant', 'ws_1', '0'])).toBe('<amount> must be at least 1, got 0');
    expect(usageErrorOf(['credits', 'grant', 'ws_1', '-5'])).toMatch(/-5|amount/);
    expect(usageErrorOf(['credits', 'grant', 'ws_1', '2.5'])).toBe('<amount> must be a whole number, got "2.5"');
    expect(usageErrorOf(['workspace', 'create', '--name', 'x', '--credits', 'lots'])).toBe('--credits must be a whole number, got "lots"');
    expect(usageErrorOf(['workspace', 'set-concurrency', 'ws_1', '0'])).toBe('<n> must be at least 1, got 0');
    expect(usageErrorOf(['ledger', 'ws_1', '--limit', '0'])).toBe('--limit must be at least 1, got 0');
    expect(usageErrorOf(['key', 'create', 'ws_1', '--rate-limit', '1e3'])).toMatch(/whole number/);
  });

  it('given a flag without its value, then it is refused', () => {
    expect(usageErrorOf(['usage', 'ws_1', '--key'])).toMatch(/--key/);
  });

  it('given a --url that is not a URL, then it is refused', () => {
    expect(usageErrorOf(['audit', '--url', 'not a url'])).toMatch(/not a URL/);
  });
});
