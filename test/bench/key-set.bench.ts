// The key set at scale: how long an instance takes to load a million keys' fingerprints at start
// (or after a lost LISTEN connection), what they take in memory, and what screening a flood of
// made-up keys costs the database (key lookups and barriers, counted; no table is read).
//
//   npx tsx test/bench/key-set.bench.ts            (KEY_SET_KEYS=1000000 by default)
//
// PostgreSQL from DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), a fresh database
// per run, its api_keys table filled directly (the event log is not needed to load the set).
import { performance } from 'node:perf_hooks';
import { generateApiKey } from '../../services/keys/key-material';
import { KeyAuthenticator } from '../../services/keys/authenticator';
import { migrate } from '../../services/eventstore/migrate';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { recordingSql } from '../support/recording-sql';
import { createScratchDatabase, fmt, machineLoad } from './support';

const KEYS = Number(process.env.KEY_SET_KEYS ?? 1_000_000);
const FLOOD = 20_000;
const FLOOD_CONCURRENCY = 200;

const db = await createScratchDatabase('keyset');
const sql = createPgSql(db.url);
try {
  await migrate(sql);
  const filled = performance.now();
  await sql.query(
    `INSERT INTO api_keys (id, workspace_id, key_hash, prefix, name, rate_limit_per_minute, created_at)
     SELECT 'key_' || i, 'ws_bench', encode(sha256(('lk_live_bench_' || i)::bytea), 'hex'), 'lk_live_benc', NULL, 600, now()
       FROM generate_series(1, $1::int) AS i`,
    [KEYS],
  );
  await sql.query('ANALYZE api_keys');
  console.log(`${fmt(KEYS)} keys written in ${((performance.now() - filled) / 1000).toFixed(1)} s (${machineLoad()})`);

  global.gc?.();
  const heapBefore = process.memoryUsage();
  const recording = recordingSql(sql);
  const authenticator = new KeyAuthenticator(recording.sql);
  const began = performance.now();
  await authenticator.start();
  const loadSeconds = (performance.now() - began) / 1000;
  global.gc?.();
  const heapAfter = process.memoryUsage();
  const pages = recording.queries.filter((q) => q.text.includes('FROM api_keys WHERE key_hash >')).length;
  console.log(
    `start (LISTEN + load): ${loadSeconds.toFixed(2)} s in ${pages} pages; ` +
      `memory after - before: heap ${fmt((heapAfter.heapUsed - heapBefore.heapUsed) / 2 ** 20, 1)} MiB, ` +
      `array buffers ${fmt((heapAfter.arrayBuffers - heapBefore.arrayBuffers) / 2 ** 20, 1)} MiB` +
      (global.gc ? '' : ' (run with --expose-gc for settled figures)'),
  );

  const before = recording.queries.length;
  const floodBegan = performance.now();
  let unlisted = 0;
  for (let done = 0; done < FLOOD; done += FLOOD_CONCURRENCY) {
    const screened = await Promise.all(Array.from({ length: FLOOD_CONCURRENCY }, () => authenticator.screen(generateApiKey())));
    unlisted += screened.filter((s) => s === 'unlisted').length;
  }
  const floodSeconds = (performance.now() - floodBegan) / 1000;
  const statements = recording.queries.slice(before);
  const keyLookups = statements.filter((q) => q.text.includes('FROM api_keys')).length;
  const barriers = statements.filter((q) => q.text.includes('pg_notify')).length;
  console.log(
    `flood of ${fmt(FLOOD)} made-up keys (${FLOOD_CONCURRENCY} at a time): ${fmt(unlisted)} unlisted in ${floodSeconds.toFixed(2)} s ` +
      `(${fmt(FLOOD / floodSeconds)}/s); ${keyLookups} table reads, ${barriers} barrier NOTIFYs, ${statements.length - keyLookups - barriers} other statements`,
  );
  await authenticator.stop();
} finally {
  await sql.close();
  await db.drop();
}
