/** Child processes, read from /proc (Linux), so that the tests need no procps. */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the direct children of `parentPid` whose command line contains `match` (all when omitted). */
export function childPids(parentPid: number, match?: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, ...
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parentPid) continue;
      if (match !== undefined && !readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(match)) continue;
      pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
