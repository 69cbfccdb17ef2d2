/**
 * Another process's CPU and memory from /proc: utime+stime (clock ticks → µs) and VmRSS.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let ticksPerSec = 0;

/** Clock ticks per second (getconf CLK_TCK, usually 100). */
export function clockTicks(): number {
  if (ticksPerSec === 0) {
    try {
      ticksPerSec = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSec = 100;
    }
  }
  return ticksPerSec;
}

/** CPU (user + system) used so far by `pid`, in µs (resolution: one clock tick, usually 10 ms). */
export function procCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000_000) / clockTicks();
}

/** Resident set size of `pid` in bytes. */
export function procRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** CPU time (µs) all of the machine's cores have spent busy (not idle or iowait) so far. */
export function machineBusyUs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return (busy * 1_000_000) / clockTicks();
}

/** CPU used by a set of processes between start() and stop(). */
export class CpuMeter {
  readonly #pids: Record<string, number>;
  #start: Record<string, number> = {};
  #t0 = 0;

  constructor(pids: Record<string, number>) {
    this.#pids = pids;
  }

  start(): void {
    this.#t0 = Date.now();
    this.#start = {};
    for (const [name, pid] of Object.entries(this.#pids)) this.#start[name] = procCpuUs(pid);
    this.#start['self'] = procCpuUs(process.pid);
    this.#start['machine'] = machineBusyUs();
  }

  /**
   * Per process: CPU µs used since start() and the share of one core (%); also `other`: the
   * machine's busy CPU not spent by these processes or by this one (other load on the machine).
   */
  stop(): Record<string, { cpuUs: number; cpuPct: number }> {
    const wallUs = Math.max(1, (Date.now() - this.#t0) * 1000);
    const out: Record<string, { cpuUs: number; cpuPct: number }> = {};
    let ours = procCpuUs(process.pid) - (this.#start['self'] ?? 0);
    for (const [name, pid] of Object.entries(this.#pids)) {
      const cpuUs = procCpuUs(pid) - (this.#start[name] ?? 0);
      ours += cpuUs;
      out[name] = { cpuUs, cpuPct: (cpuUs / wallUs) * 100 };
    }
    const other = Math.max(0, machineBusyUs() - (this.#start['machine'] ?? 0) - ours);
    out['other'] = { cpuUs: other, cpuPct: (other / wallUs) * 100 };
    return out;
  }
}

/** Samples a process's RSS on an interval and remembers the peak. */
export class RssSampler {
  readonly #pid: number;
  #timer: NodeJS.Timeout | undefined;
  peak = 0;

  constructor(pid: number) {
    this.#pid = pid;
  }

  start(intervalMs = 200): void {
    this.peak = procRssBytes(this.#pid);
    this.#timer = setInterval(() => {
      try {
        this.peak = Math.max(this.peak, procRssBytes(this.#pid));
      } catch {
        // process gone
      }
    }, intervalMs);
  }

  stop(): number {
    if (this.#timer) clearInterval(this.#timer);
    try {
      this.peak = Math.max(this.peak, procRssBytes(this.#pid));
    } catch {
      // process gone
    }
    return this.peak;
  }
}
