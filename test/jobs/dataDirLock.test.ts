/**
 * One service per DATA_DIR (src/jobs/dataDirLock.ts): a live owner makes the next one refuse,
 * naming the directory and the owner; a lock left by a dead owner is taken over, after its
 * redis-server (which outlived it) has been shut down; release removes the lock.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE_NAME, lockDataDir } from '../../src/jobs/dataDirLock.js';
import { startEmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { isAlive } from '../support/processes.js';
import { REDIS_SERVER_BIN } from '../support/service.js';

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lss-lock-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Another node process (the owner of a lock), alive until killed. */
function otherNodeProcess(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  return child;
}

describe('lockDataDir', () => {
  it('refuses a directory whose lock belongs to a live service process, naming both', async () => {
    const dir = await tempDir();
    const owner = otherNodeProcess();
    await writeFile(join(dir, LOCK_FILE_NAME), JSON.stringify({ pid: owner.pid, startedAt: new Date().toISOString() }));
    const error = await lockDataDir(dir).then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as Error).message).toContain(`DATA_DIR ${dir} is in use by another service process (pid ${owner.pid})`);
    // The owner's lock is untouched.
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), 'utf8'))).toMatchObject({ pid: owner.pid });
  });

  it("takes over a dead owner's lock, shutting down the redis-server that outlived it", async () => {
    const dir = await tempDir();
    const dead = otherNodeProcess();
    dead.kill('SIGKILL');
    await new Promise((resolve) => dead.once('exit', resolve));
    const orphan = await startEmbeddedRedis({ bin: REDIS_SERVER_BIN, dataDir: dir });
    cleanups.push(() => orphan.stop());
    await writeFile(
      join(dir, LOCK_FILE_NAME),
      JSON.stringify({ pid: dead.pid, startedAt: new Date().toISOString(), redisPid: orphan.pid, redisPort: orphan.port }),
    );

    const lock = await lockDataDir(dir);
    // The orphan is this test's child: it stays a zombie (still signalable) until the event loop has
    // reaped it, so give that a moment; a redis-server still running would stay alive.
    const deadline = Date.now() + 5000;
    while (isAlive(orphan.pid) && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    expect(isAlive(orphan.pid)).toBe(false);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.recordRedis(4242, 6399);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), 'utf8'))).toMatchObject({
      pid: process.pid,
      redisPid: 4242,
      redisPort: 6399,
    });
    await lock.release();
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  });
});
