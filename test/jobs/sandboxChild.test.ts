/**
 * A sandboxed child whose worker is gone leaves (src/jobs/sandboxChild.ts), even when an exception comes after its
 * channel closed and before 'disconnect' is delivered: BullMQ's child wrapper would otherwise loop on its own failed
 * report forever (a core and gigabytes, as an orphan seen in CI did for 28 minutes).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

const FIXTURE = new URL('./sandboxChildFixture.ts', import.meta.url).pathname;

async function startChild(guarded: boolean): Promise<ChildProcess> {
  const child = fork(FIXTURE, guarded ? ['--guarded'] : [], { execArgv: ['--import', 'tsx'], stdio: 'ignore' });
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
