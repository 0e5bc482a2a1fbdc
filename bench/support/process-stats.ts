// What a process costs, read from /proc (Linux only): resident memory and CPU time, of a child process
// or of a server the bench did not start itself.
import { readFileSync } from 'node:fs';

/**
 * Clock ticks per second in /proc/<pid>/stat. The kernel reports these fields in USER_HZ, which is 100
 * on every Linux architecture Node.js supports, whatever the kernel's own tick rate.
 */
const USER_HZ = 100;

/** Resident set size in bytes (VmRSS), or undefined once the process is gone. */
function residentBytes(pid: number): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
}

/** User plus system CPU seconds the process has used so far, or undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, so 12 and 13 after the command name.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return (utime + stime) / USER_HZ;
}

/** CPU seconds the whole machine has been busy so far, all cores together (/proc/stat). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, v) => sum + v, 0);
  // idle and iowait are the 4th and 5th values of the "cpu" line.
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return (total - idle) / USER_HZ;
}

/** Samples a process's resident memory at an interval and keeps the peak. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private peak = 0;

  constructor(private readonly pid: number) {}

  start(intervalMs: number): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The highest resident size seen so far, in bytes. */
  get peakBytes(): number {
    return this.peak;
  }

  /** Takes one sample now and returns it (0 once the process is gone). */
  sample(): number {
    const bytes = residentBytes(this.pid) ?? 0;
    if (bytes > this.peak) this.peak = bytes;
    return bytes;
  }
}
