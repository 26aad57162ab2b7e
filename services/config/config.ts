import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDatabaseUrl } from '../eventstore/database-url';
import { AUDIT_HEARTBEAT_EVERY_MS } from '../audit/audit-job';
import { DEFAULT_OUTBOX_RETENTION_MS } from '../email/retention';
import { parseRedisUrl, type RedisTarget } from '../limits/redis-url';
import { parseAllowedHosts, type AllowedHosts } from '../webhooks/address-policy';
import type { RetryPolicy } from '../webhooks/retry-schedule';

/** Empty strings count as unset, so `FOO= npm start` means "use the default". */
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A whole number within bounds, or the default when unset. */
const intSetting = (min: number, max: number, fallback: number) =>
  optionalString.transform((v, ctx) => {
    if (v === undefined) return fallback;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `expected a whole number from ${min} to ${max}, got "${v}"` });
      return z.NEVER;
    }
    return n;
  });

/** A fraction from 0 to 1 (`0.1`, `1`), or the default when unset. */
const fractionSetting = (fallback: number) =>
  optionalString.transform((v, ctx) => {
    if (v === undefined) return fallback;
    const n = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(v) ? Number(v) : NaN;
    if (!(n >= 0 && n <= 1)) {
      ctx.addIssue({ code: 'custom', message: `expected a number from 0 to 1, got "${v}"` });
      return z.NEVER;
    }
    return n;
  });

const envSchema = z.object({
  HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  PORT: intSetting(0, 65535, 3000),
  /** One host or libpq's host list (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`). */
  DATABASE_URL: optionalString.transform((v, ctx) => {
    if (v === undefined) return undefined;
    const parsed = parseDatabaseUrl(v);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.reason });
      return z.NEVER;
    }
    return v;
  }),
  DATA_DIR: optionalString.transform((v) => v ?? './data'),
  REDIS_URL: optionalString.transform((v, ctx): RedisTarget | undefined => {
    if (v === undefined) return undefined;
    const parsed = parseRedisUrl(v);
    if (!parsed.ok) {
      ctx.addIssue({ code: 'custom', message: parsed.reason });
      return z.NEVER;
    }
    return parsed.target;
  }),
  KAFKA_BROKERS: optionalString.transform((v, ctx) => {
    if (v === undefined) return undefined;
    const brokers = v.split(',').map((b) => b.trim()).filter(Boolean);
    if (brokers.length === 0 || brokers.some((b) => !/^[^\s:]+:\d{1,5}$/.test(b))) {
      ctx.addIssue({ code: 'custom', message: 'expected comma-separated host:port pairs' });
      return z.NEVER;
    }
    return brokers;
  }),
  /** An http(s) URL, or `sandbox`: the built-in synthetic network, chosen on purpose. */
  SOURCE_URL: optionalString.pipe(z.union([z.literal('sandbox'), z.url({ protocol: /^https?$/, error: 'expected an http(s) URL or sandbox' })]).optional()),
  SOURCE_TIMEOUT_MS: intSetting(1, 600_000, 10_000),
  DATABASE_QUERY_TIMEOUT_MS: intSetting(100, 3_600_000, 5_000),
  ADMIN_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  DOCS_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /**
   * Which peers may speak for the client through X-Forwarded-For/-Proto/-Host: `true` (any),
   * `false` (none, the default), or comma-separated addresses and CIDR ranges of the proxies.
   */
  TRUST_PROXY: optionalString.transform((v, ctx): boolean | string[] => {
    if (v === undefined || /^false$/i.test(v)) return false;
    if (/^true$/i.test(v)) return true;
    const entries = v.split(',').map((e) => e.trim()).filter(Boolean);
    const bad = entries.filter((e) => !isAddressOrRange(e));
    if (entries.length === 0 || bad.length > 0) {
      ctx.addIssue({ code: 'custom', message: `expected true, false or comma-separated IP addresses and CIDR ranges, got "${bad[0] ?? v}"` });
      return z.NEVER;
    }
    return entries;
  }),
  LOG_LEVEL: optionalString
    .pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional())
    .transform((v) => v ?? 'info'),
  /** Load shedding: past either bound new lookups get 503 no_capacity. */
  MAX_EVENT_LOOP_DELAY_MS: intSetting(1, 60_000, 1000),
  MAX_IN_FLIGHT: intSetting(1, 1_000_000, 2000),
  /** A concurrency slot of an instance that died frees after this long without renewal. */
  CONCURRENCY_LEASE_MS: intSetting(1000, 600_000, 15_000),
  /** Cache-index entries kept in process memory (least recently used go first); 0 reads every lookup's entry from the database. */
  CACHE_INDEX_MAX_ENTRIES: intSetting(0, 10_000_000, 10_000),
  /** An Idempotency-Key whose request died (instance lost) runs anew after this long. */
  IDEMPOTENCY_LOCK_TTL_MS: intSetting(1000, 86_400_000, 60_000),
  /** A charge still unsettled this long after it was taken belongs to a dead instance: refunded. Unset: SOURCE_TIMEOUT_MS + 60 s. */
  ABANDONED_CHARGE_GRACE_MS: optionalString.pipe(z.string().optional()),
  /** Unset: GET /metrics on the main port (admin token). Set: on this port only, without a token. */
  METRICS_PORT: optionalString.pipe(z.string().optional()).transform((v, ctx) => {
    if (v === undefined) return undefined;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!(n >= 0 && n <= 65535)) {
      ctx.addIssue({ code: 'custom', message: `expected a port from 0 to 65535, got "${v}"` });
      return z.NEVER;
    }
    return n;
  }),
  /** The share of successful requests that get an access log line; every error gets one. */
  ACCESS_LOG_SAMPLE: fractionSetting(0.1),
  /**
   * After SIGTERM, how long the instance keeps its listener open (serving, readiness 503 `draining`)
   * before it closes it and finishes what it accepted: the time a load balancer needs to see it go.
   */
  DRAIN_DELAY_MS: intSetting(0, 600_000, 0),
  /** An audit job whose instance has written no heartbeat for this long is failed by any instance that looks. */
  AUDIT_HEARTBEAT_TIMEOUT_MS: intSetting(AUDIT_HEARTBEAT_EVERY_MS * 3, 3_600_000, 30_000),
  /** Where email goes (`smtp://user:pass@host:587`, `smtps://…`); unset: written to DATA_DIR/outbox. */
  SMTP_URL: optionalString.pipe(z.url({ protocol: /^smtps?$/, error: 'expected an smtp:// or smtps:// URL' }).optional()),
  /** The From of every email the service sends. */
  MAIL_FROM: optionalString.transform((v) => v ?? 'Lookup console <no-reply@localhost>'),
  /** A sent or given-up email (its body already dropped) is deleted from the outbox table this long after. */
  EMAIL_OUTBOX_RETENTION_MS: intSetting(3_600_000, 3650 * 86_400_000, DEFAULT_OUTBOX_RETENTION_MS),
  /**
   * Webhook URLs may reach these although they are not public addresses: a comma list of host
   * names, addresses and CIDR ranges. Unset: public unicast addresses only.
   */
  WEBHOOK_ALLOWED_HOSTS: optionalString.transform((v, ctx): AllowedHosts => {
    try {
      return parseAllowedHosts(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `expected a comma list of host names, addresses and CIDR ranges: ${(err as Error).message}` });
      return z.NEVER;
    }
  }),
  /** A webhook request unanswered this long is a failed attempt. */
  WEBHOOK_TIMEOUT_MS: intSetting(100, 60_000, 10_000),
  /** The wait after a delivery's first failed attempt; doubled (with jitter) per further failure. */
  WEBHOOK_RETRY_INITIAL_MS: intSetting(1, 86_400_000, 5_000),
  /** The longest wait between two attempts. */
  WEBHOOK_RETRY_MAX_MS: intSetting(1, 86_400_000, 3_600_000),
  /** No attempt starts later than this after a delivery's first: then it is given up and its endpoint marked failing. */
  WEBHOOK_RETRY_HORIZON_MS: intSetting(1, 30 * 86_400_000, 86_400_000),
  /** After a secret rotation, deliveries are signed with the previous secret too for this long. */
  WEBHOOK_SECRET_OVERLAP_MS: intSetting(0, 30 * 86_400_000, 86_400_000),
  /** How often each instance looks for due deliveries and due watches. */
  WEBHOOK_POLL_MS: intSetting(10, 600_000, 1_000),
  WATCH_POLL_MS: intSetting(10, 3_600_000, 5_000),
}).superRefine((e, ctx) => {
  // The lock is not renewed while its request runs: lapsing while the request still waits on the
  // source would let a retry run (and charge) a second time.
  if (e.IDEMPOTENCY_LOCK_TTL_MS <= e.SOURCE_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['IDEMPOTENCY_LOCK_TTL_MS'],
      message: `must be greater than SOURCE_TIMEOUT_MS (${e.SOURCE_TIMEOUT_MS})`,
    });
  }
  // Refunding a charge whose lookup may still be waiting on the source would make that lookup free.
  const grace = abandonedChargeGraceMs(e);
  if (!Number.isSafeInteger(grace) || grace <= e.SOURCE_TIMEOUT_MS || grace > 86_400_000) {
    ctx.addIssue({
      code: 'custom',
      path: ['ABANDONED_CHARGE_GRACE_MS'],
      message: `expected a whole number of milliseconds greater than SOURCE_TIMEOUT_MS (${e.SOURCE_TIMEOUT_MS}) and at most 86400000`,
    });
  }
});

function abandonedChargeGraceMs(e: { ABANDONED_CHARGE_GRACE_MS?: string; SOURCE_TIMEOUT_MS: number }): number {
  if (e.ABANDONED_CHARGE_GRACE_MS === undefined) return e.SOURCE_TIMEOUT_MS + 60_000;
  return /^\d+$/.test(e.ABANDONED_CHARGE_GRACE_MS) ? Number(e.ABANDONED_CHARGE_GRACE_MS) : NaN;
}

export type Config = {
  host: string;
  port: number;
  databaseUrl?: string;
  /** A PostgreSQL statement unanswered this long fails as an outage (503): a frozen or cut-off server. */
  databaseQueryTimeoutMs: number;
  dataDir: string;
  /** From REDIS_URL: one server, a primary found through sentinels, or a cluster. */
  redis?: RedisTarget;
  kafkaBrokers?: string[];
  /** Where live fetches go: a data source, or the built-in sandbox network started in process. */
  source: SourceChoice;
  sourceTimeoutMs: number;
  adminToken: string;
  /** Where the token came from when ADMIN_TOKEN is unset: made now (main prints it) or kept from an earlier start. */
  adminTokenSource: 'env' | 'created' | 'kept';
  /** The file under DATA_DIR that keeps a generated token across restarts. */
  adminTokenFile?: string;
  /** Undefined means `{base_url}/docs`, derived from the listening address. */
  docsUrl?: string;
  /** Peers trusted to forward the client's address, scheme and host (TRUST_PROXY). */
  trustProxy: boolean | string[];
  logLevel: string;
  maxEventLoopDelayMs: number;
  maxInFlight: number;
  concurrencyLeaseMs: number;
  cacheIndexMaxEntries: number;
  idempotencyLockTtlMs: number;
  abandonedChargeGraceMs: number;
  /** Undefined: /metrics is served on the main port, behind the admin token. */
  metricsPort?: number;
  /** From 0 to 1: the share of 2xx/3xx answers logged; every 4xx/5xx is. */
  accessLogSample: number;
  drainDelayMs: number;
  auditHeartbeatTimeoutMs: number;
  /** Undefined: emails are written to `outboxDir` and their links logged (services/email). */
  smtpUrl?: string;
  mailFrom: string;
  outboxDir: string;
  emailOutboxRetentionMs: number;
  webhooks: {
    allowedHosts: AllowedHosts;
    timeoutMs: number;
    retry: RetryPolicy;
    secretOverlapMs: number;
    pollMs: number;
  };
  watchPollMs: number;
};

/** `10.0.0.1`, `::1`, `10.0.0.0/8` or `fd00::/8`. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export class ConfigError extends Error {}

export type SourceChoice = { kind: 'url'; url: string } | { kind: 'sandbox' };

/**
 * Where live fetches go. The embedded default (no DATABASE_URL) may fall back to the sandbox; with
 * DATABASE_URL set the sandbox must be chosen (`SOURCE_URL=sandbox`), so a production database is
 * never billed for made-up profiles because SOURCE_URL was forgotten. Pure.
 */
export function chooseSource(settings: { databaseUrl?: string; sourceUrl?: string }): SourceChoice {
  const { databaseUrl, sourceUrl } = settings;
  if (sourceUrl === 'sandbox') return { kind: 'sandbox' };
  if (sourceUrl !== undefined) return { kind: 'url', url: sourceUrl.replace(/\/+$/, '') };
  if (databaseUrl === undefined) return { kind: 'sandbox' };
  throw new ConfigError(
    'Invalid configuration:\n  SOURCE_URL: required when DATABASE_URL is set (the data source URL, or sandbox to use the synthetic network on purpose)',
  );
}

/** The source in words, for the start-up log line. */
export function describeSource(source: SourceChoice): string {
  return source.kind === 'sandbox' ? 'built-in sandbox network (synthetic profiles)' : source.url;
}

/**
 * ADMIN_TOKEN, else the token kept in DATA_DIR/admin-token (mode 0600), made on the first start:
 * a token a newcomer exported keeps working after a restart.
 */
function adminToken(fromEnv: string | undefined, dataDir: string): Pick<Config, 'adminToken' | 'adminTokenSource' | 'adminTokenFile'> {
  if (fromEnv !== undefined) return { adminToken: fromEnv, adminTokenSource: 'env' };
  const file = join(dataDir, 'admin-token');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length < 16) throw new ConfigError(`Invalid configuration:\n  ADMIN_TOKEN: the token kept in ${file} is shorter than 16 characters; delete the file or set ADMIN_TOKEN`);
    return { adminToken: kept, adminTokenSource: 'kept', adminTokenFile: file };
  }
  const made = `adm_${randomBytes(24).toString('base64url')}`;
  mkdirSync(dataDir, { recursive: true });
  // 'wx': two instances starting at once on one DATA_DIR must not both write a token.
  try {
    writeFileSync(file, `${made}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return adminToken(undefined, dataDir);
    throw err;
  }
  return { adminToken: made, adminTokenSource: 'created', adminTokenFile: file };
}

/** Validates the environment once at start; a bad value names its variable. */
/**
 * `fetches: false` is for the programs that never fetch a profile (the relay, the ledger consumer):
 * they share DATABASE_URL with the API but have no source to choose, so SOURCE_URL is not required.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, { fetches = true }: { fetches?: boolean } = {}): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0] ?? '?')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    databaseQueryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS,
    dataDir: e.DATA_DIR,
    redis: e.REDIS_URL,
    kafkaBrokers: e.KAFKA_BROKERS,
    source: chooseSource({ databaseUrl: fetches ? e.DATABASE_URL : undefined, sourceUrl: e.SOURCE_URL }),
    sourceTimeoutMs: e.SOURCE_TIMEOUT_MS,
    ...adminToken(e.ADMIN_TOKEN, e.DATA_DIR),
    docsUrl: e.DOCS_URL?.replace(/\/+$/, ''),
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
    maxInFlight: e.MAX_IN_FLIGHT,
    concurrencyLeaseMs: e.CONCURRENCY_LEASE_MS,
    cacheIndexMaxEntries: e.CACHE_INDEX_MAX_ENTRIES,
    idempotencyLockTtlMs: e.IDEMPOTENCY_LOCK_TTL_MS,
    abandonedChargeGraceMs: abandonedChargeGraceMs(e),
    metricsPort: e.METRICS_PORT,
    accessLogSample: e.ACCESS_LOG_SAMPLE,
    drainDelayMs: e.DRAIN_DELAY_MS,
    auditHeartbeatTimeoutMs: e.AUDIT_HEARTBEAT_TIMEOUT_MS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    outboxDir: join(e.DATA_DIR, 'outbox'),
    emailOutboxRetentionMs: e.EMAIL_OUTBOX_RETENTION_MS,
    webhooks: {
      allowedHosts: e.WEBHOOK_ALLOWED_HOSTS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retry: { initialMs: e.WEBHOOK_RETRY_INITIAL_MS, maxMs: e.WEBHOOK_RETRY_MAX_MS, horizonMs: e.WEBHOOK_RETRY_HORIZON_MS },
      secretOverlapMs: e.WEBHOOK_SECRET_OVERLAP_MS,
      pollMs: e.WEBHOOK_POLL_MS,
    },
    watchPollMs: e.WATCH_POLL_MS,
  };
}
