/**
 * A sandboxed child whose worker is gone leaves (src/jobs/sandboxChild.ts), even when an exception comes after its
 * channel closed and before 'disconnect' is delivered, or before the closed channel is read at all: BullMQ's child
 * wrapper would otherwise loop on its own failed report forever (a core and gigabytes, as orphans seen in CI did for
 * 20-28 minutes). The guard is preloaded by the execArgv the workers fork their children with (sandboxedProcessor).
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { sandboxedEnvironment, sandboxedProcessor, withHugePages } from '../../src/jobs/sandboxChild.js';
import { WORKER_CONFIG_ENV } from '../../src/jobs/workerConfig.js';

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

/** The host's transparent huge pages mode (the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled), or null. */
function hugePagesMode(): string | null {
  const path = '/sys/kernel/mm/transparent_hugepage/enabled';
  return existsSync(path) ? (/\[(\w+)\]/.exec(readFileSync(path, 'utf8'))?.[1] ?? null) : null;
}

/** KiB of a process's anonymous memory in huge pages after it fills a fresh 64 MiB Float64Array, run with `env`. */
function hugePagesOfFreshArray(env: NodeJS.ProcessEnv): number {
  const script =
    "const a = new Float64Array(8 * 1024 * 1024); a.fill(1); const s = require('fs').readFileSync('/proc/self/smaps_rollup', 'utf8');" +
    'console.log(/AnonHugePages:\\s+(\\d+)/.exec(s)[1], a[a.length - 1]);';
  const [kib] = execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }).trim().split(' ');
  return Number(kib);
}

describe("the sandboxed children's environment", () => {
  it("hands the children the Config and adds glibc.malloc.hugetlb=1 to GLIBC_TUNABLES, the operator's other tunables kept", () => {
    expect(withHugePages(undefined)).toBe('glibc.malloc.hugetlb=1');
    expect(withHugePages('')).toBe('glibc.malloc.hugetlb=1');
    expect(withHugePages('glibc.malloc.arena_max=2')).toBe('glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1');
    // An operator's own value of the tunable stands.
    expect(withHugePages('glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2')).toBe('glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2');
    const config = loadConfig({});
    expect(config.JOB_HUGE_PAGES).toBe(true);
    const env = sandboxedEnvironment(config);
    expect(JSON.parse(env[WORKER_CONFIG_ENV]!)).toEqual(JSON.parse(JSON.stringify(config)));
    expect(env.GLIBC_TUNABLES).toBe(withHugePages(process.env.GLIBC_TUNABLES));
    const off = sandboxedEnvironment(loadConfig({ JOB_HUGE_PAGES: 'false' }));
    expect(off.GLIBC_TUNABLES).toBe(process.env.GLIBC_TUNABLES);
  });

  const mode = hugePagesMode();
  it.skipIf(mode !== 'madvise' && mode !== 'always')(
    "gives a child's large typed arrays huge pages (this host's THP mode: madvise or always), where without it they get none in madvise mode",
    () => {
      const withTunable = hugePagesOfFreshArray(sandboxedEnvironment(loadConfig({})));
      expect(withTunable).toBeGreaterThan(0);
      if (mode === 'madvise') {
        const without = { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' };
        expect(hugePagesOfFreshArray(without)).toBe(0);
      }
    },
  );
});
