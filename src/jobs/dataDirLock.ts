/**
 * One service per DATA_DIR: two redis-servers appending to the same append-only file would corrupt
 * it. `npm start` takes this lock (a file created exclusively, holding its pid and, once started,
 * its redis-server's pid and port) before it starts its redis-server, and removes it when it stops.
 *
 * A lock left by a process that no longer runs (killed with SIGKILL, the machine restarted) is
 * stale and taken over; if the redis-server of that process outlived it, it is first shut down
 * (SIGTERM: redis-server then writes and fsyncs its append-only file and exits), so that the new one
 * starts from the complete file.
 */
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { readFileSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const LOCK_FILE_NAME = 'service.lock';

/** What the lock file holds. */
interface LockOwner {
  pid: number;
  startedAt: string;
  redisPid?: number;
  redisPort?: number;
}

/** Another live process holds the lock: the message names the directory and that process. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another service process (pid ${ownerPid}); ` +
        'stop that one first, or give this one another DATA_DIR (or a REDIS_URL).',
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  /** Notes the redis-server started under this lock (for a later start to shut it down if it outlives this process). */
  recordRedis(redisPid: number, redisPort: number): Promise<void>;
  /** Removes the lock file (if it is still this process's). */
  release(): Promise<void>;
}

/** True when `pid` runs a program whose command line contains `program`; false when it does not run. */
function runs(pid: number, program: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, under another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(program);
  } catch {
    // No /proc: trust the signal check.
    return true;
  }
}

async function readOwner(file: string): Promise<LockOwner | null> {
  try {
    const owner = JSON.parse(await readFile(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' ? (owner as LockOwner) : null;
  } catch {
    return null;
  }
}

async function stopOrphanRedis(pid: number): Promise<void> {
  if (!runs(pid, 'redis-server')) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (runs(pid, 'redis-server')) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

/** Takes the lock of `dataDir` (created when missing), or throws DataDirInUseError. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, LOCK_FILE_NAME);
  const owner: LockOwner = { pid: process.pid, startedAt: new Date().toISOString() };

  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(JSON.stringify(owner));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
    }
    let previous = await readOwner(file);
    // A file without a readable owner is one being written right now, or a torn write of a killed process.
    if (!previous) {
      await new Promise((resolveWait) => setTimeout(resolveWait, 200));
      previous = await readOwner(file);
    }
    if (previous && previous.pid !== process.pid && runs(previous.pid, 'node')) throw new DataDirInUseError(dir, previous.pid);
    if (previous?.redisPid !== undefined) await stopOrphanRedis(previous.redisPid);
    await unlink(file).catch(() => undefined);
  }

  const removeIfOurs = (): void => {
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as LockOwner).pid === process.pid) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  // Also when the process exits without stopping cleanly (an error at start-up, process.exit).
  process.once('exit', removeIfOurs);

  return {
    dataDir: dir,
    async recordRedis(redisPid: number, redisPort: number) {
      owner.redisPid = redisPid;
      owner.redisPort = redisPort;
      const handle = await open(file, 'r+');
      await handle.truncate(0);
      await handle.write(JSON.stringify(owner), 0);
      await handle.close();
    },
    release() {
      removeIfOurs();
      process.off('exit', removeIfOurs);
      return Promise.resolve();
    },
  };
}
