/** Child processes, read from /proc (Linux), so that the tests need no procps; worker processes to kill. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A worker process (src/jobs/workerMain.ts, as `npm run start:worker` runs it) on the Redis at redisUrl, with `settings` in its environment. */
export function spawnWorkerProcess(redisUrl: string, settings: Record<string, string | number> = {}): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn' };
  for (const [name, value] of Object.entries(settings)) env[name] = String(value);
  return spawn(process.execPath, ['--import', 'tsx', 'src/jobs/workerMain.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

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

/** A process's resident bytes now and at its peak (its /proc status: VmRSS, VmHWM); null once it has ended. */
export function residentMemory(pid: number): { bytes: number; peakBytes: number } | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const bytes = (field: string): number | null => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : null;
  };
  const now = bytes('VmRSS');
  const peak = bytes('VmHWM');
  return now === null || peak === null ? null : { bytes: now, peakBytes: peak };
}

/** The arguments a process was started with (its /proc cmdline, split at the NULs). */
export function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg !== '');
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
