import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { computeJob, ONE_THREAD_MAX_ENTRIES, threadBudget, type ComputeInput } from '../../src/jobs/computeJob.js';
import { RunningJobs } from '../../src/jobs/runningJobs.js';
import { generateMatrix, partitionFromAssignment, setSolverThreads, solverThreads } from '../../src/solvers/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lss-running-jobs-test-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  setSolverThreads('auto');
});

describe('RunningJobs', () => {
  it('counts the jobs entered and not yet left, across registries sharing the directory', () => {
    const a = new RunningJobs(dir);
    const b = new RunningJobs(dir);
    expect(a.count()).toBe(0);
    const leaveA = a.enter();
    const leaveB = b.enter();
    expect(a.count()).toBe(2);
    leaveA();
    leaveA();
    expect(b.count()).toBe(1);
    leaveB();
    expect(a.count()).toBe(0);
  });

  it('ignores and removes the entry of a process that no longer exists', () => {
    // Process ids are below 2^22 on Linux: this one cannot be running.
    writeFileSync(join(dir, `${2 ** 30}-1`), '');
    const registry = new RunningJobs(dir);
    const leave = registry.enter();
    expect(registry.count()).toBe(1);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(readdirSync(dir)[0]).toMatch(new RegExp(`^${process.pid}-\\d+$`));
    leave();
  });
});

describe('threadBudget', () => {
  it("shares the host's cores among the running jobs, at least one thread each", () => {
    expect(threadBudget(1, 2)).toBe(2);
    expect(threadBudget(2, 2)).toBe(1);
    expect(threadBudget(3, 2)).toBe(1);
    expect(threadBudget(3, 8)).toBe(2);
    expect(threadBudget(0, 4)).toBe(4);
  });
});

describe('computeJob thread budget', () => {
  /** A solve of a Gaussian n x n over 4 machines: n = 130 stores 16,900 entries, above ONE_THREAD_MAX_ENTRIES. */
  function inputOf(n: number): ComputeInput {
    return {
      type: 'solve',
      matrix: { storage: 'dense', A: generateMatrix({ generator: 'gaussian', n, mean: 1, seed: 3 }) },
      rhs: null,
      partition: partitionFromAssignment(
        Int32Array.from({ length: n }, (_, k) => Math.floor((4 * k) / n)),
        4,
      ),
      algorithms: ['dhbm'],
      options: { tolerance: 1e-300, maxIterations: 50, parameters: {} },
    };
  }

  /** The solver threads in effect while the job's run iterates, and the registry's count then (read at its progress reports). */
  async function duringRun(input: ComputeInput, runningJobs: RunningJobs): Promise<{ threads: number[]; counted: number[] }> {
    const threads: number[] = [];
    const counted: number[] = [];
    setSolverThreads(1);
    const outcome = await computeJob(input, {
      signal: new AbortController().signal,
      onProgress: (progress) => {
        if (progress.phase !== 'solve') return;
        threads.push(solverThreads());
        counted.push(runningJobs.count());
      },
      traceCap: 64,
      sliceMs: 0,
      runningJobs,
    });
    expect(outcome.status).toBe('succeeded');
    return { threads: [...new Set(threads)], counted: [...new Set(counted)] };
  }

  it('runs a lone job on every core, counted in the registry, and leaves it when done', async () => {
    expect(130 * 130).toBeGreaterThan(ONE_THREAD_MAX_ENTRIES);
    const registry = new RunningJobs(dir);
    expect(await duringRun(inputOf(130), registry)).toEqual({ threads: [availableParallelism()], counted: [1] });
    expect(registry.count()).toBe(0);
  });

  it('gives a job half the cores while another job runs', async () => {
    const registry = new RunningJobs(dir);
    const leaveOther = new RunningJobs(dir).enter();
    expect((await duringRun(inputOf(130), registry)).threads).toEqual([Math.max(1, Math.floor(availableParallelism() / 2))]);
    leaveOther();
  });

  it('runs a job of at most ONE_THREAD_MAX_ENTRIES entries on one thread, without counting it', async () => {
    expect(128 * 128).toBe(ONE_THREAD_MAX_ENTRIES);
    const registry = new RunningJobs(dir);
    expect(await duringRun(inputOf(128), registry)).toEqual({ threads: [1], counted: [0] });
  });
});
