import { parseArgs } from 'node:util';

/** Pure: the command line of `npm run admin -- ...` turned into one typed command. */

export type Command =
  | { kind: 'help' }
  | { kind: 'workspace.create'; name: string; credits?: number; maxConcurrency?: number }
  | { kind: 'workspace.get'; workspaceId: string; asOf?: string }
  | { kind: 'workspace.set-concurrency'; workspaceId: string; maxConcurrency: number }
  | { kind: 'workspace.set-alert'; workspaceId: string; lowBalanceThreshold: number | null }
  | { kind: 'credits.grant'; workspaceId: string; amount: number; reason?: string }
  | { kind: 'key.create'; workspaceId: string; name?: string; rateLimitPerMinute?: number; test?: boolean }
  | { kind: 'key.list'; workspaceId: string }
  | { kind: 'key.revoke'; keyId: string }
  | { kind: 'usage'; workspaceId: string; keyId?: string; from?: string; to?: string }
  | { kind: 'ledger'; workspaceId: string; requestId?: string; after?: number; limit?: number; all: boolean; asOf?: string }
  | { kind: 'statement'; workspaceId: string; from: string; to: string; csv: boolean }
  | { kind: 'export.ledger'; from: string; to: string; format: 'parquet' | 'csv'; out: string }
  | { kind: 'audit' }
  | { kind: 'member.invite'; workspaceId: string; email: string; role: 'owner' | 'member' };

export interface Invocation {
  command: Command;
  url: string;
  /** Undefined only for `help`. */
  token: string | undefined;
  json: boolean;
}

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:3000';

/** A command line that cannot be run: print the message and the usage, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  workspace create --name <name> [--credits <n>] [--max-concurrency <n>]
  workspace get <workspace_id> [--as-of <instant>]
  workspace set-concurrency <workspace_id> <n>
  workspace set-alert <workspace_id> <credits|none>   (owners are emailed when a charge takes the balance below it)
  credits grant <workspace_id> <amount> [--reason <text>]
  key create <workspace_id> [--name <name>] [--rate-limit <per_minute>] [--test]
  key list <workspace_id>
  key revoke <key_id>
  usage <workspace_id> [--key <key_id>] [--from <day>] [--to <day>]
  ledger <workspace_id> [--request <request_id>] [--after <position>] [--limit <n>] [--all] [--as-of <instant>]
  statement <workspace_id> --from <instant> --to <instant> [--csv]   (the period [from, to); --csv: its ledger lines)
  export ledger --from <instant> --to <instant> [--format parquet|csv] [--out <dir>]   (ledger and usage files, default parquet into .)
  audit
  member invite <workspace_id> <email> [--role owner|member]   (default owner: emails the one-time console link and prints it)

Options for every command:
  --url <base_url>   admin API base URL (env ADMIN_URL, default ${DEFAULT_ADMIN_URL})
  --token <token>    admin bearer token (env ADMIN_TOKEN)
  --json             print the API's raw JSON
  -h, --help         this text`;

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  credits: { type: 'string' },
  'max-concurrency': { type: 'string' },
  reason: { type: 'string' },
  'rate-limit': { type: 'string' },
  test: { type: 'boolean' },
  key: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  request: { type: 'string' },
  after: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  role: { type: 'string' },
  'as-of': { type: 'string' },
  csv: { type: 'boolean' },
  format: { type: 'string' },
  out: { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const GLOBAL: OptionName[] = ['url', 'token', 'json', 'help'];

/** Which options each command takes, and its positional arguments. */
const COMMANDS: Record<string, { options: OptionName[]; positionals: string[] }> = {
  'workspace create': { options: ['name', 'credits', 'max-concurrency'], positionals: [] },
  'workspace get': { options: ['as-of'], positionals: ['workspace_id'] },
  'workspace set-concurrency': { options: [], positionals: ['workspace_id', 'n'] },
  'workspace set-alert': { options: [], positionals: ['workspace_id', 'credits'] },
  'credits grant': { options: ['reason'], positionals: ['workspace_id', 'amount'] },
  'key create': { options: ['name', 'rate-limit', 'test'], positionals: ['workspace_id'] },
  'key list': { options: [], positionals: ['workspace_id'] },
  'key revoke': { options: [], positionals: ['key_id'] },
  usage: { options: ['key', 'from', 'to'], positionals: ['workspace_id'] },
  ledger: { options: ['request', 'after', 'limit', 'all', 'as-of'], positionals: ['workspace_id'] },
  statement: { options: ['from', 'to', 'csv'], positionals: ['workspace_id'] },
  'export ledger': { options: ['from', 'to', 'format', 'out'], positionals: [] },
  audit: { options: [], positionals: [] },
  'member invite': { options: ['role'], positionals: ['workspace_id', 'email'] },
};

const GROUPS = new Set(['workspace', 'credits', 'key', 'member', 'export']);

export function parseInvocation(argv: string[], env: Record<string, string | undefined> = {}): Invocation {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }) as typeof parsed;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const url = values.url ?? env.ADMIN_URL ?? DEFAULT_ADMIN_URL;
  const token = values.token ?? (env.ADMIN_TOKEN || undefined);
  const json = values.json ?? false;

  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { command: { kind: 'help' }, url, token, json };

  const group = positionals[0]!;
  const name = GROUPS.has(group) ? `${group} ${positionals[1] ?? ''}`.trim() : group;
  const spec = COMMANDS[name];
  if (!spec) {
    throw new UsageError(GROUPS.has(group) && positionals.length === 1 ? `"${group}" needs a subcommand` : `unknown command "${name}"`);
  }
  const args = positionals.slice(name.split(' ').length);
  if (args.length !== spec.positionals.length) {
    throw new UsageError(
      args.length < spec.positionals.length
        ? `${name}: missing <${spec.positionals[args.length]}>`
        : `${name}: unexpected argument "${args[spec.positionals.length]}"`,
    );
  }
  for (const option of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(option) && !spec.options.includes(option)) throw new UsageError(`${name}: unknown option --${option}`);
  }

  const command = buildCommand(name, args, values);
  if (!token) throw new UsageError('no admin token: pass --token or set ADMIN_TOKEN');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url: "${url}" is not a URL`);
  }
  return { command, url, token, json };
}

function buildCommand(name: string, args: string[], v: Values): Command {
  switch (name) {
    case 'workspace create':
      if (v.name === undefined || v.name === '') throw new UsageError('workspace create: --name is required');
      return { kind: 'workspace.create', name: v.name, credits: optionalInt(v.credits, '--credits', 0), maxConcurrency: optionalInt(v['max-concurrency'], '--max-concurrency', 1) };
    case 'workspace get':
      return { kind: 'workspace.get', workspaceId: args[0]!, asOf: v['as-of'] };
    case 'workspace set-concurrency':
      return { kind: 'workspace.set-concurrency', workspaceId: args[0]!, maxConcurrency: int(args[1]!, '<n>', 1) };
    case 'workspace set-alert':
      return { kind: 'workspace.set-alert', workspaceId: args[0]!, lowBalanceThreshold: args[1] === 'none' ? null : int(args[1]!, '<credits>', 0) };
    case 'credits grant':
      return { kind: 'credits.grant', workspaceId: args[0]!, amount: int(args[1]!, '<amount>', 1), reason: v.reason };
    case 'key create':
      return { kind: 'key.create', workspaceId: args[0]!, name: v.name, rateLimitPerMinute: optionalInt(v['rate-limit'], '--rate-limit', 1), ...(v.test ? { test: true } : {}) };
    case 'key list':
      return { kind: 'key.list', workspaceId: args[0]! };
    case 'key revoke':
      return { kind: 'key.revoke', keyId: args[0]! };
    case 'usage':
      return { kind: 'usage', workspaceId: args[0]!, keyId: v.key, from: v.from, to: v.to };
    case 'ledger':
      return {
        kind: 'ledger',
        workspaceId: args[0]!,
        requestId: v.request,
        after: optionalInt(v.after, '--after', 0),
        limit: optionalInt(v.limit, '--limit', 1),
        all: v.all ?? false,
        asOf: v['as-of'],
      };
    case 'statement':
      return { kind: 'statement', workspaceId: args[0]!, ...required(name, v), csv: v.csv ?? false };
    case 'export ledger': {
      const format = v.format ?? 'parquet';
      if (format !== 'parquet' && format !== 'csv') throw new UsageError(`--format must be parquet or csv, got "${format}"`);
      return { kind: 'export.ledger', ...required(name, v), format, out: v.out ?? '.' };
    }
    case 'audit':
      return { kind: 'audit' };
    case 'member invite': {
      // The operator invites the first member of a workspace, who must be able to manage the rest.
      const role = v.role ?? 'owner';
      if (role !== 'owner' && role !== 'member') throw new UsageError(`--role must be owner or member, got "${role}"`);
      return { kind: 'member.invite', workspaceId: args[0]!, email: args[1]!, role };
    }
    default:
      throw new UsageError(`unknown command "${name}"`);
  }
}

/** `--from` and `--to`, both needed. */
function required(name: string, v: Values): { from: string; to: string } {
  if (!v.from || !v.to) throw new UsageError(`${name}: --from and --to are required (instants, e.g. 2025-06-01T00:00:00Z)`);
  return { from: v.from, to: v.to };
}

/** A whole number written in digits, at least `min`. */
function int(text: string, what: string, min: number): number {
  if (!/^\d{1,15}$/.test(text)) throw new UsageError(`${what} must be a whole number, got "${text}"`);
  const n = Number(text);
  if (n < min) throw new UsageError(`${what} must be at least ${min}, got ${n}`);
  return n;
}

const optionalInt = (text: string | undefined, what: string, min: number) => (text === undefined ? undefined : int(text, what, min));
