/**
 * An embedded etcd left running by a plinth that died without stopping it (kill -9, an OOM kill)
 * keeps its data directory locked: the next etcd on that directory waits on the lock forever.
 * The launcher spawns etcd with a parent-death signal, so this should not happen; these find and
 * stop one anyway (an etcd started by an older plinth, a machine without setpriv, the instant
 * between spawn and prctl), by its `--data-dir` argument in /proc (Linux).
 *
 * An etcd whose parent is alive and runs this Node.js executable belongs to a live plinth (or
 * process embedding it): that directory is in use, and start-up fails saying so. Any other (its
 * parent gone: adopted by init or a subreaper) is a leftover: stopped, SIGTERM then SIGKILL.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

export interface LeftoverEtcd {
  pid: number;
  ppid: number;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** `pid`'s state letter and parent from /proc/<pid>/stat (undefined once it is gone). */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', ppid: Number(fields[1]) };
}

/** Whether `pid` still runs (a zombie has exited: its locks and ports are released). */
export function isRunning(pid: number): boolean {
  const s = statOf(pid);
  return s !== undefined && s.state !== 'Z' && s.state !== 'X';
}

/** The etcd processes started with `--data-dir=<memberDir>` (an absolute path), ours included. */
export function findEtcdProcesses(memberDir: string): LeftoverEtcd[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const arg = `--data-dir=${memberDir}`;
  const found: LeftoverEtcd[] = [];
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const cmdline = readText(`/proc/${pid}/cmdline`);
    if (!cmdline || !cmdline.split('\0').includes(arg)) continue;
    const s = statOf(pid);
    if (s && s.state !== 'Z' && s.state !== 'X') found.push({ pid, ppid: s.ppid });
  }
  return found;
}

let nodeExe: string | undefined;

/** Whether `pid` runs this very Node.js executable (a plinth, or a process embedding it). */
function runsNode(pid: number): boolean {
  try {
    nodeExe ??= realpathSync(process.execPath);
    return readlinkSync(`/proc/${pid}/exe`) === nodeExe;
  } catch {
    return false;
  }
}

/** Thrown when another live process's etcd has the data directory. */
export class DataDirInUseError extends Error {}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function exited(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(50)) if (!isRunning(pid)) return true;
  return !isRunning(pid);
}

/**
 * Stops every leftover etcd of `memberDir`; throws DataDirInUseError when one belongs to a live
 * process (this one included), and an Error when a leftover cannot be stopped.
 */
export async function stopLeftoverEtcd(memberDir: string, log: (message: string, fields: Record<string, unknown>) => void): Promise<void> {
  for (const etcd of findEtcdProcesses(memberDir)) {
    if (etcd.ppid === process.pid || (isRunning(etcd.ppid) && runsNode(etcd.ppid))) {
      throw new DataDirInUseError(`the embedded etcd data directory ${memberDir} is in use by etcd pid ${etcd.pid}, started by the live process ${etcd.ppid}: stop that plinth first, or use another --data-dir`);
    }
    log('stopping an embedded etcd left running by an earlier plinth that did not stop it', { pid: etcd.pid, dataDir: memberDir });
    try {
      process.kill(etcd.pid, 'SIGTERM');
      if (!(await exited(etcd.pid, 3000))) {
        process.kill(etcd.pid, 'SIGKILL');
        if (!(await exited(etcd.pid, 3000))) throw new Error('it did not exit after SIGKILL');
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') continue;
      throw new Error(`cannot stop the leftover embedded etcd pid ${etcd.pid} of ${memberDir}: ${(e as Error).message}`);
    }
  }
}
