// What the background retriers' tests share: a logger that keeps its lines, a wait for a
// condition, and the error a database out of reach raises.
import type { Logger } from '../../services/common/log';
import { DatabaseUnavailableError } from '../../services/eventstore/unavailable';

export function recordingLogger() {
  const lines: Array<{ level: string; message?: string; fields: object }> = [];
  const logger: Logger = {
    info: (fields, message) => lines.push({ level: 'info', message, fields }),
    warn: (fields, message) => lines.push({ level: 'warn', message, fields }),
    error: (fields, message) => lines.push({ level: 'error', message, fields }),
  };
  return { lines, logger };
}

/** True once `check` holds, false if it still does not after `withinMs`. */
export async function until(check: () => boolean, withinMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

export const databaseUnavailable = () => new DatabaseUnavailableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
