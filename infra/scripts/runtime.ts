// Small shared pieces of the local-infrastructure scripts: where runtime state lives, one-line
// logging, and process/port probes.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

// Machine-wide rather than per clone: the servers listen on fixed ports, so every clone of the repo
// (a developer's work tree, a fresh clone under CI) has to agree on who started what.
export const RUN_DIR = join(tmpdir(), 'lookup-api-infra');

export function ensureRunDir(): string {
  mkdirSync(RUN_DIR, { recursive: true });
  return RUN_DIR;
}

export function log(line: string): void {
  process.stderr.write(`[infra] ${line}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((answer) => {
    const socket = createConnection({ host, port });
    const finish = (open: boolean) => {
      socket.destroy();
      answer(open);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

export async function waitForPort(host: string, port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isPortOpen(host, port)) return true;
    await sleep(200);
  }
  return false;
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function processCommandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`. */
export async function terminate(pid: number, graceMs: number): Promise<void> {
  if (!isProcessAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) return;
    await sleep(100);
  }
  if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
}

export function readJson<T>(path: string): T | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function writeJson(path: string, value: unknown): void {
  ensureRunDir();
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

export function removeFile(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Runs `work` while holding a machine-wide lock file, so two scripts never start the same server
 * at once. A lock left behind by a dead process is taken over.
 */
export async function withLock<T>(name: string, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const lockPath = join(ensureRunDir(), `${name}.lock`);
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (!Number.isInteger(holder) || holder <= 0 || !isProcessAlive(holder)) {
        removeFile(lockPath);
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${lockPath} (held by pid ${holder})`);
      }
      if (!announced) {
        log(`${name}: waiting for pid ${holder}, which holds ${lockPath}`);
        announced = true;
      }
      await sleep(250);
    }
  }
  try {
    return await work();
  } finally {
    removeFile(lockPath);
  }
}

/** What these scripts started themselves, so `infra down` stops only that. */
export interface StartedNotes {
  postgres?: { cluster: string };
  redis?: { pidFile: string };
}

const NOTES_PATH = join(RUN_DIR, 'started.json');

export function readStartedNotes(): StartedNotes {
  return readJson<StartedNotes>(NOTES_PATH) ?? {};
}

export function noteStarted(update: StartedNotes): void {
  writeJson(NOTES_PATH, { ...readStartedNotes(), ...update });
}

export function forgetStarted(kind: keyof StartedNotes): void {
  const notes = readStartedNotes();
  delete notes[kind];
  writeJson(NOTES_PATH, notes);
}
