import { parentPort, workerData } from 'node:worker_threads';
import { EventStore } from '../eventstore/event-store';
import { createPgSql } from '../eventstore/sql-pg';
import { isDatabaseUnreachable } from '../eventstore/unavailable';
import { audit, type AuditProgress, type AuditReport } from './audit';

/**
 * The audit in a worker thread, on its own connections: the replay's CPU and its reads stay off
 * the event loop and the pool that serve requests. Posts `{type:'progress', progress}` as it goes,
 * then `{type:'done', report}` or `{type:'failed', message, unavailable}`.
 */
export interface AuditWorkerData {
  databaseUrl: string;
}

export type AuditWorkerMessage =
  | { type: 'progress'; progress: AuditProgress }
  | { type: 'done'; report: AuditReport }
  /** `unavailable`: the database was out of reach (the runner raises DatabaseUnavailableError). */
  | { type: 'failed'; message: string; unavailable: boolean };

async function main() {
  const { databaseUrl } = workerData as AuditWorkerData;
  const post = (message: AuditWorkerMessage) => parentPort!.postMessage(message);
  // Two connections: the replay's snapshot, and the usage catch-up that precedes it.
  const sql = createPgSql(databaseUrl, { max: 2 });
  try {
    const report = await audit(new EventStore(sql), { onProgress: (progress) => post({ type: 'progress', progress }) });
    post({ type: 'done', report });
  } catch (err) {
    post({ type: 'failed', message: (err as Error).stack ?? String(err), unavailable: isDatabaseUnreachable(err) });
  } finally {
    await sql.close();
  }
}

// Loaded by the runner's boot script inside the worker; never on the main thread.
if (parentPort) void main();
