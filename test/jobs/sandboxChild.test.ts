/**
 * A sandboxed child whose worker is gone leaves (src/jobs/sandboxChild.ts), even when an exception comes after its
 * channel closed and before 'disconnect' is delivered, or before the closed channel is read at all: BullMQ's child
 * wrapper would otherwise loop on its own failed report forever (a core and gigabytes, as orphans seen in CI did for
 * 20-28 minutes). The guard is preloaded by the execArgv the workers fork their children with (sandboxedProcessor).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sandboxedProcessor } from '../../src/jobs/sandboxChild.js';

const FIXTURE = new URL('./sandboxChildFixture.ts', import.meta.url).pathname;
/** The execArgv of the workers' children (the processor file is not what runs here: the fixture is). */
const WORKERS_EXEC_ARGV = sandboxedProcessor(new URL('../../src/jobs/processor', import.meta.url)).execArgv;

async function startChild(guarded: boolean, execArgv = ['--import', 'tsx']): Promise<ChildProcess> {
  const child = fork(FIXTURE, guarded ? ['--guarded'] : [], { execArgv, stdio: 'ignore' });
  const [message] = (await once(child, 'message')) as [unknown];
  expect(message).toBe('ready');
  return child;
}

/** The child's exit code, or null if it is still running after `ms`. */
async function exitWithin(child: ChildProcess, ms: number): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit').then(([code]) => code as number);
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), ms));
  return Promise.race([exited, timeout]);
}

describe('a sandboxed child whose channel closed', () => {
  it("leaves on an exception that comes before 'disconnect' is delivered", async () => {
    const child = await startChild(true);
    child.send('close and throw');
    expect(await exitWithin(child, 10_000)).toBe(1);
  });

  it('leaves so with the guard preloaded by the execArgv the workers start their children with', async () => {
    expect(WORKERS_EXEC_ARGV.join(' ')).toContain('sandboxGuard');
    const child = await startChild(false, WORKERS_EXEC_ARGV);
    child.send('close and throw');
    expect(await exitWithin(child, 10_000)).toBe(1);
  });

  it('leaves on an exception once its parent is gone, its closed channel not read yet (the event loop blocked)', async () => {
    const parent = spawn(
      process.execPath,
      ['--import', 'tsx', new URL('./sandboxChildParent.ts', import.meta.url).pathname, JSON.stringify(WORKERS_EXEC_ARGV)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const [line] = (await once(parent.stdout, 'data')) as [Buffer];
    const pid = Number(line.toString().trim());
    parent.kill('SIGKILL');
    await once(parent, 'exit');
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 10_000;
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const leftRunning = alive();
    if (leftRunning) process.kill(pid, 'SIGKILL');
    expect(leftRunning).toBe(false);
  });

  it("without it, BullMQ's wrapper loops on its failed report and the child never leaves", async () => {
    const child = await startChild(false);
    try {
      child.send('close and throw');
      expect(await exitWithin(child, 1500)).toBeNull();
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
});
