// CPU time and resident memory of the processes serving a benchmark, read from /proc (Linux).
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux build in use). */
const TICKS_PER_SECOND = 100;

/** A named group of processes whose CPU is summed, e.g. the service, its PostgreSQL backends. */
export interface ProcessGroup {
  name: string;
  pids(): number[];
}

/** User + system CPU seconds of one process so far; 0 once it has gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds per group, to subtract a later reading from. */
export function readCpu(groups: ProcessGroup[]): Map<string, Map<number, number>> {
  return new Map(groups.map((g) => [g.name, new Map(g.pids().map((pid) => [pid, cpuSeconds(pid)]))]));
}

/** Seconds each group spent between two readings (a process new in the later one counts from 0). */
export function cpuBetween(before: Map<string, Map<number, number>>, after: Map<string, Map<number, number>>): Map<string, number> {
  const spent = new Map<string, number>();
  for (const [name, pids] of after) {
    let total = 0;
    for (const [pid, seconds] of pids) total += seconds - (before.get(name)?.get(pid) ?? 0);
    spent.set(name, total);
  }
  return spent;
}

/** Resident set size of a process, in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function allPids(): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
}

/** PostgreSQL backends serving `database` (their title names it), looked up afresh each reading. */
export function postgresBackendsOf(database: string): ProcessGroup {
  return {
    name: `postgres backends (${database.slice(0, 12)}…)`,
    pids: () => allPids().filter((pid) => processName(pid) === 'postgres' && commandLine(pid).split(' ').includes(database)),
  };
}

/** PostgreSQL's own processes (WAL writer, checkpointer...): shared by every database on the server. */
export function postgresServerProcesses(): ProcessGroup {
  return {
    name: 'postgres server processes (WAL writer etc., shared)',
    pids: () =>
      allPids().filter((pid) => {
        if (processName(pid) !== 'postgres') return false;
        const title = commandLine(pid);
        return /(walwriter|checkpointer|background writer)/.test(title);
      }),
  };
}

export function redisServer(): ProcessGroup {
  return { name: 'redis-server (shared)', pids: () => allPids().filter((pid) => processName(pid) === 'redis-server') };
}

export function singleProcess(name: string, pid: number): ProcessGroup {
  return { name, pids: () => [pid] };
}

/** What the figures were measured on: CPU model and count, memory, kernel, Node. */
export function machineDescription(): string {
  const cpu = cpus();
  let kernel = '';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    kernel = 'unknown';
  }
  return `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${kernel}, Node ${process.version}`;
}
