import { Worker } from 'node:worker_threads';
import type { EventStore } from '../eventstore/event-store';
import { audit, type AuditReport } from './audit';
import type { AuditWorkerData, AuditWorkerMessage } from './audit-worker';

/** Loads audit-worker.ts through tsx: a worker thread does not inherit its parent's loader. */
const WORKER_BOOT = new URL('./audit-worker-boot.mjs', import.meta.url);

/**
 * Runs the audit off the request path: on PostgreSQL in a worker thread with its own connections
 * (the replay's CPU would otherwise stall every request of this instance), on the embedded
 * database in process (it has one connection, which the audit's snapshot holds anyway).
 */
export function runAudit(store: EventStore, options: { databaseUrl?: string; onProgress?: (events: number) => void } = {}): Promise<AuditReport> {
  if (store.sql.backend !== 'postgres' || !options.databaseUrl) return audit(store, options.onProgress);
  const data: AuditWorkerData = { databaseUrl: options.databaseUrl };
  const worker = new Worker(WORKER_BOOT, { workerData: data });
  return new Promise<AuditReport>((resolve, reject) => {
    let settled = false;
    worker.on('message', (message: AuditWorkerMessage) => {
      if (message.type === 'progress') options.onProgress?.(message.events);
      else if (message.type === 'done') {
        settled = true;
        resolve(message.report);
      } else {
        settled = true;
        reject(new Error(`the audit failed: ${message.message}`));
      }
    });
    worker.on('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.on('exit', (code) => {
      if (!settled) reject(new Error(`the audit worker exited with ${code} before its report`));
    });
  });
}
