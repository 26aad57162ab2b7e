// Where a charged cache hit spends its database time, without HTTP: SQL statements per hit, how
// the ledger's batching writer groups them into transactions, and the time per statement.
//
//   npx tsx test/bench/charge-path.bench.ts        (PostgreSQL from DATABASE_URL, fresh database)
//
// "transaction time / wall" near 1.00 means one writer transaction is always in flight and the
// next waits for it: throughput is then about 1 / (statements per hit x time per statement).
import { performance } from 'node:perf_hooks';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import type { Sql } from '../../services/eventstore/sql';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { Ledger } from '../../services/ledger/ledger';
import { LookupService } from '../../services/lookup/lookup-service';
import { createHttpSource } from '../../services/lookup/source/http-source';
import { INLINE_PROJECTIONS } from '../../services/projections/inline';
import { startSandbox } from '../../services/sandbox/server';
import { createScratchDatabase, fmt, machineLoad } from './support';

const HITS = 640;
const DEFAULT_MAX_AGE_SECONDS = 2_592_000;

/** The real adapter, counting statements outside and inside transactions. */
function countingSql(inner: Sql) {
  const counts = { poolStatements: 0, txStatements: 0, transactions: 0, txMs: 0 };
  const sql: Sql = {
    backend: inner.backend,
    query: (text, params) => {
      counts.poolStatements++;
      return inner.query(text, params);
    },
    queryArrays: (text, params) => {
      counts.poolStatements++;
      return inner.queryArrays(text, params);
    },
    async transaction(fn) {
      counts.transactions++;
      const t0 = performance.now();
      try {
        return await inner.transaction((tx) =>
          fn({
            query: (text, params) => {
              counts.txStatements++;
              return tx.query(text, params);
            },
            queryArrays: (text, params) => {
              counts.txStatements++;
              return tx.queryArrays(text, params);
            },
            deferWrite: (text, params) => {
              counts.txStatements++;
              tx.deferWrite(text, params);
            },
          }),
        );
      } finally {
        counts.txMs += performance.now() - t0;
      }
    },
    listen: (...args) => inner.listen(...args),
    close: () => inner.close(),
  };
  return { sql, counts };
}

async function main() {
  const database = await createScratchDatabase('bench_charge');
  const inner = createPgSql(database.url);
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  try {
    await migrate(inner);
    const { sql, counts } = countingSql(inner);
    const ledger = new Ledger(new EventStore(sql, INLINE_PROJECTIONS));
    const lookups = new LookupService(sql, ledger, createHttpSource({ baseUrl: sandbox.url, timeoutMs: 10_000 }));
    const ws = await ledger.createWorkspace({ name: 'bench', credits: 1_000_000_000, maxConcurrency: 1000 });
    let n = 0;
    const hit = () =>
      lookups.company({ requestId: `req_bench${n++}`, workspaceId: ws.id, keyId: 'key_bench' }, { kind: 'slug', slug: 'acme-robotics' }, DEFAULT_MAX_AGE_SECONDS);
    console.log(`warm-up lookup: ${(await hit()).answer.cache.status}; ${machineLoad()}`);

    for (const concurrency of [1, 64]) {
      Object.assign(counts, { poolStatements: 0, txStatements: 0, transactions: 0, txMs: 0 });
      let started = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (started < HITS) {
            started++;
            const { answer } = await hit();
            if (answer.cache.status !== 'HIT') throw new Error(`expected HIT, got ${answer.cache.status}`);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const statementsPerTx = counts.txStatements / counts.transactions + 2; // + BEGIN and COMMIT
      console.log(
        `${concurrency} concurrent: ${HITS} charged hits in ${seconds.toFixed(2)} s = ${fmt(HITS / seconds)}/s; ` +
          `per hit ${(counts.poolStatements / HITS).toFixed(2)} pool statements + ${(counts.txStatements / HITS).toFixed(2)} in the writer's transaction; ` +
          `${counts.transactions} transactions (${(HITS / counts.transactions).toFixed(1)} hits each), ` +
          `${(counts.txMs / counts.transactions).toFixed(1)} ms each = ${(counts.txMs / counts.transactions / statementsPerTx).toFixed(3)} ms per statement; ` +
          `transaction time / wall ${(counts.txMs / 1000 / seconds).toFixed(2)}`,
      );
    }
  } finally {
    await sandbox.close();
    await inner.close();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
