/**
 * The jobs computing on this host right now, counted across processes: a worker runs each job in a
 * sandboxed child process of its own, and a host may run several workers, so no one process knows
 * them all. Each running job holds an empty file `<pid>-<sequence>` in one directory under the OS's
 * temporary directory; `count()` lists the directory and ignores the files of processes that no
 * longer exist (a child killed in the middle of a job never removes its file).
 */
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** The registry every job of this host's user shares. */
export function defaultRunningJobsDir(): string {
  return join(tmpdir(), `lss-running-jobs-${userInfo().uid}`);
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Numbers this process's entries: unique across every registry object of the process. */
let sequence = 0;

/** Removes a file; one already gone is fine. */
function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

export class RunningJobs {
  constructor(readonly dir: string = defaultRunningJobsDir()) {}

  /** Registers a running job of this process; the returned function removes it (idempotent). */
  enter(): () => void {
    const file = join(this.dir, `${process.pid}-${++sequence}`);
    try {
      writeFileSync(file, '');
    } catch (error) {
      // The directory is made when first needed (and again should something have removed it).
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(file, '');
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      removeFile(file);
    };
  }

  /** Running jobs on this host (at least 1 when called by a job that has entered). */
  count(): number {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    const alive = new Map<number, boolean>();
    let running = 0;
    for (const name of names) {
      const pid = Number(name.split('-')[0]);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      if (!alive.has(pid)) alive.set(pid, processExists(pid));
      if (alive.get(pid)) running++;
      else removeFile(join(this.dir, name));
    }
    return running;
  }
}
