// CPU time of processes on this machine, from /proc (Linux only; elsewhere
// every figure is null). Used by the API bench to split each request's CPU
// between the API, PostgreSQL and the load generator.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

// Linux's clock ticks per second for /proc/<pid>/stat (USER_HZ): 100 on every mainstream build.
const TICKS_PER_SECOND = 100;

/** The CPU cores this machine offers (the ceiling's divisor). */
export const CORES = cpus().length;

/** A process's CPU time so far (user + system, all its threads), in ms; null when /proc has no such process. */
export function cpuMsOf(pid: number | string): number | null {
  const stat = readStat(pid);
  return stat && stat.cpuMs;
}

function readStat(pid: number | string): { comm: string; cpuMs: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name sits in parentheses and may hold spaces; utime and stime are fields 14 and 15.
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { comm, cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

/**
 * The CPU time that every process named `comm` (e.g. `postgres`: its
 * backends, WAL writer, checkpointer, I/O workers) spends from start() to
 * stop(). PostgreSQL starts and ends backends as pools connect, so the
 * processes are sampled every `everyMs`: one born in the window counts from
 * zero, one that ends in it counts up to its last sample (at most `everyMs`
 * of its time is missed). stop() returns null where /proc is missing or no
 * such process was seen (a server on another machine).
 */
export function processGroupCpu(comm: string, everyMs = 100): { start(): void; stop(): number | null } {
  let atStart = new Map<string, number>();
  let latest = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  const sample = (): Map<string, number> => {
    const now = new Map<string, number>();
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
    } catch {
      return now;
    }
    for (const pid of pids) {
      const stat = readStat(pid);
      if (stat?.comm === comm) now.set(pid, stat.cpuMs);
    }
    return now;
  };
  return {
    start() {
      atStart = sample();
      latest = new Map(atStart);
      timer = setInterval(() => {
        for (const [pid, ms] of sample()) latest.set(pid, ms);
      }, everyMs);
    },
    stop() {
      clearInterval(timer);
      for (const [pid, ms] of sample()) latest.set(pid, ms);
      if (latest.size === 0) return null;
      let total = 0;
      for (const [pid, ms] of latest) total += ms - (atStart.get(pid) ?? 0);
      return total;
    },
  };
}
