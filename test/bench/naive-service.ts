// The naive service of issue 27, the yardstick for the charged cache hit: what one would write
// first. Fastify; a rate limit on Redis; one PostgreSQL transaction per call (the workspace's
// balance read FOR UPDATE, a ledger row inserted, the balance updated, COMMIT); then the same body
// as our cache hit. Run in a child process by server-child.ts (mode `naive`), like the service.
//
// The rate limit is @fastify/rate-limit itself on Redis, with its defaults: keyed by the client
// address (req.ip), one EVALSHA of its script per call, 429 above `max` per minute, its headers.
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';

export interface NaiveServiceOptions {
  databaseUrl: string;
  redisUrl: string;
  /** What a charged call answers: the same object as our cache hit's body. */
  body: unknown;
  /** The one API key it accepts (Bearer), stored as its SHA-256 with the workspace. */
  apiKey: string;
  credits: number;
  /** Requests per window per client address; the window is a minute, as the plugin's default. */
  maxPerMinute: number;
  /** PostgreSQL connections: one transaction holds one for its whole length. */
  poolSize?: number;
}

const WINDOW_MS = 60_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export async function startNaiveService(o: NaiveServiceOptions): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: o.databaseUrl, max: o.poolSize ?? 16 });
  // Its own two tables, in a database of its own (the bench's scratch database for it).
  await pool.query(`
    CREATE TABLE IF NOT EXISTS naive_workspaces (id text PRIMARY KEY, key_hash text NOT NULL UNIQUE, balance bigint NOT NULL CHECK (balance >= 0));
    CREATE TABLE IF NOT EXISTS naive_ledger (id bigserial PRIMARY KEY, workspace_id text NOT NULL REFERENCES naive_workspaces (id),
      amount bigint NOT NULL, request_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    CREATE INDEX IF NOT EXISTS naive_ledger_workspace ON naive_ledger (workspace_id, id);`);
  await pool.query(
    `INSERT INTO naive_workspaces (id, key_hash, balance) VALUES ('ws_naive', $1, $2) ON CONFLICT (id) DO UPDATE SET key_hash = $1, balance = $2`,
    [sha256(o.apiKey), o.credits],
  );
  const redis = new Redis(o.redisUrl, { lazyConnect: true });
  await redis.connect();

  const app = Fastify({ logger: false });
  await app.register(rateLimit, { max: o.maxPerMinute, timeWindow: WINDOW_MS, redis, nameSpace: 'naive-rate-limit:' });
  app.post('/v1/company', async (request, reply) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token) return reply.code(401).send({ error: 'unauthorized' });
    const client = await pool.connect();
    // A failed transaction's connection is closed rather than reused (PostgreSQL then rolls it back).
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string; balance: string }>('SELECT id, balance FROM naive_workspaces WHERE key_hash = $1 FOR UPDATE', [sha256(token)]);
      const workspace = rows[0];
      if (!workspace) {
        await client.query('ROLLBACK');
        return reply.code(401).send({ error: 'unauthorized' });
      }
      if (BigInt(workspace.balance) < 1n) {
        await client.query('ROLLBACK');
        return reply.code(402).send({ error: 'insufficient_credits' });
      }
      // request.id is Fastify's own counter: no caller's string reaches PostgreSQL.
      await client.query('INSERT INTO naive_ledger (workspace_id, amount, request_id) VALUES ($1, -1, $2)', [workspace.id, request.id]);
      await client.query('UPDATE naive_workspaces SET balance = balance - 1 WHERE id = $1', [workspace.id]);
      await client.query('COMMIT');
      return o.body;
    } catch (err) {
      failed = err as Error;
      throw err;
    } finally {
      client.release(failed);
    }
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    async close() {
      await app.close();
      redis.disconnect();
      await pool.end();
    },
  };
}
