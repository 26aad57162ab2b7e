// Where a charged cache hit spends its database time, without HTTP: SQL statements per hit, how
// the ledger's batching writer groups them into transactions, and the time per statement.
//
//   npx tsx test/bench/charge-path.bench.ts        (PostgreSQL from DATABASE_URL, fresh database)
//   BENCH_CHARGE_HITS=20000                        hits per concurrency (default 640)
//   BENCH_CHARGE_CONCURRENCY=64                    which concurrencies, comma-separated (default 1,64)
//
// Then what the hits stored: bytes, rows and index entries per charged call (storage-figures.ts;
// at a few thousand hits and more, index pages are full enough for the bytes to mean something).
//
// "transaction time / wall" near 1.00 means one writer transaction is always in flight and the
// next waits for it: throughput is then about 1 / (statements per hit x time per statement).
import { performance } from 'node:perf_hooks';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import { createPgSql } from '../../services/eventstore/sql-pg';
import { Ledger } from '../../services/ledger/ledger';
import { LookupService } from '../../services/lookup/lookup-service';
import { createHttpSource } from '../../services/lookup/source/http-source';
import { INLINE_PROJECTIONS } from '../../services/projections/inline';
import { startSandbox } from '../../services/sandbox/server';
import { recordingSql } from '../support/recording-sql';
import { createScratchDatabase, fmt, machineLoad } from './support';
import { cpuBetween, postgresBackendsOf, readCpu, singleProcess } from './proc-stats';
import { measureStorage, storageLines } from './storage-figures';
import { newRequestId } from '../../services/common/ids';
import { accountsOf } from '../support/accounts';

const HITS = Number(process.env.BENCH_CHARGE_HITS ?? 640);
const DEFAULT_MAX_AGE_SECONDS = 2_592_000;

async function main() {
  const database = await createScratchDatabase('bench_charge');
  const inner = createPgSql(database.url);
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  try {
    await migrate(inner);
    const recording = recordingSql(inner);
    const { sql } = recording;
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    const ledger = new Ledger(store);
    const accounts = accountsOf(store);
    const lookups = new LookupService(sql, ledger, createHttpSource({ baseUrl: sandbox.url, timeoutMs: 10_000 }));
    const ws = await accounts.workspaces.create({ name: 'bench', credits: 1_000_000_000, maxConcurrency: 1000 });
    const hit = () =>
      lookups.company({ requestId: newRequestId(), workspaceId: ws.id, keyId: 'key_bench', mode: 'live' }, { kind: 'slug', slug: 'acme-robotics' }, DEFAULT_MAX_AGE_SECONDS);
    console.log(`warm-up lookup: ${(await hit()).answer.cache.status}; ${machineLoad()}`);

    // CPU per hit of this process (the service's part, no HTTP) and of the scratch database's backends.
    const cpuGroups = [singleProcess('bench process', process.pid), postgresBackendsOf(database.name)];
    const concurrencies = (process.env.BENCH_CHARGE_CONCURRENCY ?? '1,64').split(',').map(Number);
    for (const concurrency of concurrencies) {
      const cpuBefore = readCpu(cpuGroups);
      for (const recorded of [recording.queries, recording.transactions, recording.transactionMs]) recorded.length = 0;
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
      const cpu = cpuBetween(cpuBefore, readCpu(cpuGroups));
      const cpuPerHit = [...cpu].map(([name, spent]) => `${name} ${fmt((spent * 1e6) / HITS)} µs`).join(', ');
      const counts = {
        poolStatements: recording.queries.length,
        txStatements: recording.transactions.reduce((sum, statements) => sum + statements.length, 0),
        transactions: recording.transactions.length,
        txMs: recording.transactionMs.reduce((sum, ms) => sum + ms, 0),
      };
      // BEGIN and COMMIT travel with the first and the last of them (services/eventstore/pg-pipeline.ts).
      const statementsPerTx = counts.txStatements / counts.transactions;
      console.log(
        `${concurrency} concurrent: ${HITS} charged hits in ${seconds.toFixed(2)} s = ${fmt(HITS / seconds)}/s; ` +
          `per hit ${(counts.poolStatements / HITS).toFixed(2)} pool statements + ${(counts.txStatements / HITS).toFixed(2)} in the writer's transaction; ` +
          `${counts.transactions} transactions (${(HITS / counts.transactions).toFixed(1)} hits each), ` +
          `${(counts.txMs / counts.transactions).toFixed(1)} ms each = ${(counts.txMs / counts.transactions / statementsPerTx).toFixed(3)} ms per statement; ` +
          `transaction time / wall ${(counts.txMs / 1000 / seconds).toFixed(2)}; CPU per hit: ${cpuPerHit}; ${machineLoad()}`,
      );
    }
    for (const line of storageLines(await measureStorage(database.url))) console.log(line);
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
