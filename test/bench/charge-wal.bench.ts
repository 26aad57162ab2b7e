// WAL written and time spent per charged cache hit on PGlite: the database in this process, so the
// WAL figure is exact whatever else the machine runs (a shared PostgreSQL server's WAL position
// moves with every other database on it). The hits go through Ledger.charge as a cache hit's do
// (the LookupCharged and LookupCompleted of one call, in the writer's group commits).
//
//   npx tsx test/bench/charge-wal.bench.ts        BENCH_CHARGE_HITS (default 10,000), 64 at a time
import { performance } from 'node:perf_hooks';
import { newRequestId } from '../../services/common/ids';
import { EventStore } from '../../services/eventstore/event-store';
import { migrate } from '../../services/eventstore/migrate';
import { createPgliteSql } from '../../services/eventstore/sql-pglite';
import { Ledger } from '../../services/ledger/ledger';
import { INLINE_PROJECTIONS } from '../../services/projections/inline';
import { accountsOf } from '../support/accounts';
import { fmt, machineLoad } from './support';

const HITS = Number(process.env.BENCH_CHARGE_HITS ?? 10_000);
const CONCURRENCY = 64;
const WARM_UP = 2_000;

async function main() {
  const sql = await createPgliteSql();
  try {
    await migrate(sql);
    const store = new EventStore(sql, INLINE_PROJECTIONS);
    const ledger = new Ledger(store);
    const accounts = accountsOf(store);
    const ws = await accounts.workspaces.create({ name: 'bench', credits: 1_000_000_000, maxConcurrency: 1000 });
    const key = await accounts.keys.create(ws.id, {});
    const hit = () =>
      ledger.charge({
        workspaceId: ws.id,
        requestId: newRequestId(),
        keyId: key.id,
        operation: 'company',
        credits: 1,
        completed: { outcome: 'success', cache_status: 'HIT', credits_charged: 1, error_code: null },
      });
    const run = async (n: number) => {
      let started = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (started < n) {
            started++;
            await hit();
          }
        }),
      );
    };
    const walPosition = async () => (await sql.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;

    await run(WARM_UP);
    const before = await walPosition();
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    await run(HITS);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const after = await walPosition();
    const { rows } = await sql.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS bytes', [after, before]);
    console.log(
      `PGlite, ${CONCURRENCY} concurrent: ${HITS} charged hits in ${seconds.toFixed(2)} s = ${fmt(HITS / seconds)}/s; ` +
        `WAL ${fmt(Number(rows[0]!.bytes) / HITS)} B per hit; CPU of this process ${fmt((cpu.user + cpu.system) / HITS)} µs per hit; ${machineLoad()}`,
    );
  } finally {
    await sql.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
