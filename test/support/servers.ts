// Where integration suites find their real servers, and a private PostgreSQL database per suite.
//
//   const databaseUrl = serverUrl('postgres');
//   describe.skipIf(!databaseUrl)('event store on PostgreSQL', () => { ... });
//
// `npm test` (test/support/with-servers.ts) sets the variables. Without one, a suite is skipped
// with a loud warning, except under CI=true, where a missing server is an error.
import { randomBytes } from 'node:crypto';
import { relative } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';

export type ServerKind = 'postgres' | 'redis' | 'kafka';

const ENV_VARIABLE: Record<ServerKind, string> = {
  postgres: 'DATABASE_URL',
  redis: 'REDIS_URL',
  kafka: 'KAFKA_BROKERS',
};

const EXAMPLE_VALUE: Record<ServerKind, string> = {
  postgres: 'postgres://postgres@127.0.0.1:5432/test',
  redis: 'redis://127.0.0.1:6379',
  kafka: '127.0.0.1:9092',
};

/**
 * The URL (for Kafka: the comma-separated broker list) of a real server, from DATABASE_URL,
 * REDIS_URL or KAFKA_BROKERS. Undefined, after a loud warning, when the variable is not set;
 * throws instead under CI=true. `suite` names the skipped suite in the warning (default: the test file).
 */
export function serverUrl(kind: ServerKind, suite: string = currentTestFile()): string | undefined {
  const variable = ENV_VARIABLE[kind];
  const value = process.env[variable]?.trim();
  if (value) return value;
  if (process.env.CI === 'true') {
    throw new Error(`${suite} needs ${kind}, which is required under CI: set ${variable} (or run it through npm test)`);
  }
  console.warn(
    `\n!!! SKIPPING ${suite}: no ${kind} (set ${variable}, e.g. ${variable}=${EXAMPLE_VALUE[kind]}, or run npm test, which starts one) !!!\n`,
  );
  return undefined;
}

function currentTestFile(): string {
  const testPath = expect.getState().testPath;
  return testPath ? relative(process.cwd(), testPath) : 'this suite';
}

export interface TestDatabase {
  /** Connection URL of the new database, on the same server as DATABASE_URL. */
  url: string;
  /** Drops the database, ending any connection still open to it. */
  drop(): Promise<void>;
}

/**
 * Creates a fresh, uniquely named database on the PostgreSQL server of DATABASE_URL, so test files
 * running in parallel never share tables. Call `drop()` in afterAll.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrlValue = process.env.DATABASE_URL;
  if (!serverUrlValue) throw new Error('createTestDatabase needs DATABASE_URL (check serverUrl("postgres") first)');
  const name = `test_${Date.now().toString(36)}_${process.pid}_${randomBytes(4).toString('hex')}`;

  await withAdminClient(serverUrlValue, (client) => client.query(`CREATE DATABASE "${name}"`));

  const url = new URL(serverUrlValue);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdminClient(serverUrlValue, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

async function withAdminClient(connectionString: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}
