import { Worker } from 'node:worker_threads';
import type { EventStore } from '../eventstore/event-store';
import { DatabaseUnavailableError } from '../eventstore/unavailable';
import { startAuditMetrics } from '../metrics/metrics';
import { audit, type AuditProgress, type AuditReport } from './audit';
import type { AuditWorkerData, AuditWorkerMessage } from './audit-worker';

/** Loads audit-worker.ts through tsx: a worker thread does not inherit its parent's loader. */
const WORKER_BOOT = new URL('./audit-worker-boot.mjs', import.meta.url);

/**
 * From the sources the boot loads the TypeScript itself, so the parent's loader flags (tsx's) would
 * only be loaded again in the worker for nothing (tens of ms of every audit). Compiled, the worker
 * needs them: they carry the extensionless-import hook.
 */
const WORKER_OPTIONS = import.meta.url.endsWith('.ts') ? { execArgv: [] } : {};

export interface RunAuditOptions {
  databaseUrl?: string;
  onProgress?: (progress: AuditProgress) => void;
  /** Ends the audit early (the instance is stopping): the worker is terminated, the promise rejects. */
  signal?: AbortSignal;
}

/**
 * Runs the audit off the request path: on PostgreSQL in a worker thread with its own connections
 * (the replay's CPU would otherwise stall every request of this instance), on the embedded
 * database in process (it has one connection, which the audit's snapshot holds anyway). Every
 * audit of the instance goes through here, so its metrics count them all.
 */
export async function runAudit(store: EventStore, options: RunAuditOptions = {}): Promise<AuditReport> {
  const finished = startAuditMetrics();
  try {
    const report = await (store.sql.backend === 'postgres' && options.databaseUrl
      ? auditInWorker({ databaseUrl: options.databaseUrl }, options)
      : audit(store, options));
    finished(report);
    return report;
  } catch (err) {
    finished(null);
    throw err;
  }
}

function auditInWorker(data: AuditWorkerData, { onProgress, signal }: RunAuditOptions): Promise<AuditReport> {
  signal?.throwIfAborted();
  const worker = new Worker(WORKER_BOOT, { ...WORKER_OPTIONS, workerData: data });
  return new Promise<AuditReport>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', abort);
      outcome();
    };
    const abort = () =>
      settle(() => {
        void worker.terminate();
        reject(signal!.reason);
      });
    signal?.addEventListener('abort', abort, { once: true });
    worker.on('message', (message: AuditWorkerMessage) => {
      if (message.type === 'progress') {
        if (!settled) onProgress?.(message.progress);
      } else if (message.type === 'done') settle(() => resolve(message.report));
      else {
        // Across the thread the error is text: an unreachable database stays a 503, not a 500.
        const failure = new Error(`the audit failed: ${message.message}`);
        settle(() => reject(message.unavailable ? new DatabaseUnavailableError(failure) : failure));
      }
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`the audit worker exited with ${code} before its report`))));
  });
}
