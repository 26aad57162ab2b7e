import { randomBytes } from 'node:crypto';
import { z } from 'zod';

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

const envSchema = z.object({
  HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  PORT: intSetting(0, 65535, 3000),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATA_DIR: optionalString.transform((v) => v ?? './data'),
  REDIS_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  KAFKA_BROKERS: optionalString.transform((v, ctx) => {
    if (v === undefined) return undefined;
    const brokers = v.split(',').map((b) => b.trim()).filter(Boolean);
    if (brokers.length === 0 || brokers.some((b) => !/^[^\s:]+:\d{1,5}$/.test(b))) {
      ctx.addIssue({ code: 'custom', message: 'expected comma-separated host:port pairs' });
      return z.NEVER;
    }
    return brokers;
  }),
  SOURCE_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  SOURCE_TIMEOUT_MS: intSetting(1, 600_000, 10_000),
  ADMIN_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  DOCS_URL: optionalString.pipe(z.url().optional()),
  LOG_LEVEL: optionalString
    .pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional())
    .transform((v) => v ?? 'info'),
  /** Load shedding: past either bound new lookups get 503 no_capacity. */
  MAX_EVENT_LOOP_DELAY_MS: intSetting(1, 60_000, 1000),
  MAX_IN_FLIGHT: intSetting(1, 1_000_000, 2000),
  /** A concurrency slot of an instance that died frees after this long without renewal. */
  CONCURRENCY_LEASE_MS: intSetting(1000, 600_000, 15_000),
  /** An Idempotency-Key whose request died (instance lost) runs anew after this long. */
  IDEMPOTENCY_LOCK_TTL_MS: intSetting(1000, 86_400_000, 60_000),
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
});

export type Config = {
  host: string;
  port: number;
  databaseUrl?: string;
  dataDir: string;
  redisUrl?: string;
  kafkaBrokers?: string[];
  sourceUrl?: string;
  sourceTimeoutMs: number;
  adminToken: string;
  /** True when ADMIN_TOKEN was unset and we made one: main prints it once. */
  adminTokenGenerated: boolean;
  /** Undefined means `{base_url}/docs`, derived from the listening address. */
  docsUrl?: string;
  logLevel: string;
  maxEventLoopDelayMs: number;
  maxInFlight: number;
  concurrencyLeaseMs: number;
  idempotencyLockTtlMs: number;
};

export class ConfigError extends Error {}

/** Validates the environment once at start; a bad value names its variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
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
    dataDir: e.DATA_DIR,
    redisUrl: e.REDIS_URL,
    kafkaBrokers: e.KAFKA_BROKERS,
    sourceUrl: e.SOURCE_URL?.replace(/\/+$/, ''),
    sourceTimeoutMs: e.SOURCE_TIMEOUT_MS,
    adminToken: e.ADMIN_TOKEN ?? `adm_${randomBytes(24).toString('base64url')}`,
    adminTokenGenerated: e.ADMIN_TOKEN === undefined,
    docsUrl: e.DOCS_URL?.replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
    maxInFlight: e.MAX_IN_FLIGHT,
    concurrencyLeaseMs: e.CONCURRENCY_LEASE_MS,
    idempotencyLockTtlMs: e.IDEMPOTENCY_LOCK_TTL_MS,
  };
}
