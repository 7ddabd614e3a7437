/**
 * The task pool's contracts (src/solvers/parallel/taskPool.ts): every task's result once, in index
 * order, whichever thread ran it; the error a single thread meets first, as that thread throws it,
 * also when a worker met it; every task run on the calling thread when the workers cannot load;
 * cancellation stops the work and releases the threads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { threadId } from 'node:worker_threads';
import { runCooperatively, runSync } from '../../../src/solvers/cooperative.js';
import { CancelledError, SingularMatrixError } from '../../../src/solvers/errors.js';
import { runTasksWork, type TaskPlan } from '../../../src/solvers/parallel/taskPool.js';
import { activeSolverWorkers, runningSolverWorkers } from '../../../src/solvers/parallel/workerThreads.js';
import { thrown } from '../../support/thrown.js';
import { poolTask, type PoolTaskResult, type PoolTaskSpec } from './poolTasks.js';
import { allWorkersExited } from './support.js';

const TASK_MODULE = new URL('./poolTasks.ts', import.meta.url).href;

function spec(failAt: number[] = [], waitForWorker = true): PoolTaskSpec {
  return {
    values: Float64Array.from({ length: 64 }, (_, k) => Math.sin(k + 1)),
    failAt: Int32Array.from(failAt),
    workerStarted: new Int32Array(new SharedArrayBuffer(4)),
    waitForWorker,
  };
}

function plan(tasks: number, threads: number, taskSpec: PoolTaskSpec, taskModule = TASK_MODULE): TaskPlan<PoolTaskSpec, PoolTaskResult> {
  return {
    taskModule,
    backend: 'typescript',
    blasThreads: null,
    tasks,
    threads,
    spec: taskSpec,
    // eslint-disable-next-line require-yield
    *runTask(s, i) {
      return poolTask(s, i);
    },
    progress: (done) => ({ phase: 'tasks', fraction: done / tasks }),
  };
}

function expectResults(results: PoolTaskResult[], taskSpec: PoolTaskSpec): void {
  results.forEach((result, i) => {
    expect(result.index).toBe(i);
    expect(Array.from(result.squares)).toEqual(Array.from(poolTask({ ...taskSpec, waitForWorker: false }, i).squares));
  });
}

afterEach(async () => {
  expect(activeSolverWorkers()).toBe(0);
  await allWorkersExited(runningSolverWorkers);
});

describe('the task pool', () => {
  it('holds OpenBLAS to one thread while the tasks run (threads each calling a threaded BLAS would oversubscribe), and gives it back', () => {
    let blasThreads = 4;
    const blas = { threads: () => blasThreads, setThreads: (count: number) => (blasThreads = count) };
    const seen: number[] = [];
    const watching = (tasks: number, threads: number, taskSpec: PoolTaskSpec): TaskPlan<PoolTaskSpec, PoolTaskResult> => ({
      ...plan(tasks, threads, taskSpec),
      blasThreads: blas,
      // eslint-disable-next-line require-yield
      *runTask(s, i) {
        seen.push(blasThreads);
        return poolTask(s, i);
      },
    });
    const taskSpec = spec();
    expectResults(runSync(runTasksWork(watching(24, 2, taskSpec))), taskSpec);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([1]));
    expect(blasThreads).toBe(4);
    // A failure ends the hold too.
    expect(thrown(() => runSync(runTasksWork(watching(12, 2, spec([3]))))).name).toBe('SingularMatrixError');
    expect(blasThreads).toBe(4);
    // On one thread (no worker) too: a task's BLAS then sums as it does beside workers.
    seen.length = 0;
    expectResults(runSync(runTasksWork(watching(5, 1, taskSpec))), taskSpec);
    expect(new Set(seen)).toEqual(new Set([1]));
    expect(blasThreads).toBe(4);
  });

  it('returns every task once, in index order, computed on the calling thread and on the workers', () => {
    const taskSpec = spec();
    const results = runSync(runTasksWork(plan(24, 2, taskSpec)));
    expect(results).toHaveLength(24);
    expectResults(results, taskSpec);
    // Task 0 waited for the worker: both threads ran tasks.
    expect(results[0].thread).toBe(threadId);
    expect(results.some((result) => result.thread !== threadId)).toBe(true);
  });

  it('runs the tasks inline with one thread', () => {
    const taskSpec = spec([], false);
    const results = runSync(runTasksWork(plan(5, 1, taskSpec)));
    expectResults(results, taskSpec);
    expect(results.every((result) => result.thread === threadId)).toBe(true);
  });

  it('throws the first failing task’s own error, as one thread does, when a worker met it', () => {
    // Task 0 holds the calling thread until the worker has started: the worker takes 1, 2, 3 and fails at 3.
    for (const threads of [1, 2]) {
      const error = thrown(() => runSync(runTasksWork(plan(12, threads, spec([3, 7], threads > 1)))));
      expect(error).toBeInstanceOf(SingularMatrixError);
      expect((error as SingularMatrixError).details).toEqual({ machine: 3 });
    }
  });

  it('runs every task on the calling thread when the workers cannot load the task module', () => {
    const taskSpec = spec([], false);
    const missing = new URL('./noSuchTaskModule.ts', import.meta.url).href;
    const results = runSync(runTasksWork(plan(6, 2, taskSpec, missing)));
    expectResults(results, taskSpec);
    expect(results.every((result) => result.thread === threadId)).toBe(true);
  });

  it('reports the workers’ results while the calling thread runs a long task of its own', () => {
    // Task 0, on the calling thread, runs (yielding, as cooperative work does) until the progress has shown every
    // other task done: a worker's results are picked up at its time-slice points, not only between tasks.
    const tasks = 6;
    const taskSpec = spec([], false);
    let task0Running = false;
    let seen = 0;
    const work = runTasksWork({
      ...plan(tasks, 2, taskSpec),
      *runTask(s, i) {
        if (i !== 0) return poolTask(s, i);
        task0Running = true;
        const deadline = performance.now() + 10_000;
        while (seen < (tasks - 1) / tasks && performance.now() < deadline) yield undefined;
        task0Running = false;
        return poolTask(s, i);
      },
    });
    let step = work.next();
    for (; !step.done; step = work.next()) {
      const fraction = step.value?.fraction;
      if (task0Running && fraction !== undefined) seen = Math.max(seen, fraction);
    }
    expect(step.value[0].thread).toBe(threadId);
    expect(seen).toBe((tasks - 1) / tasks);
    expectResults(step.value, taskSpec);
  });

  it('stops at a cancellation and releases its workers', async () => {
    const controller = new AbortController();
    const work = runTasksWork(plan(400, 2, spec()));
    const error = await runCooperatively(work, {
      signal: controller.signal,
      sliceMs: 1,
      progressIntervalMs: 0,
      onProgress: () => controller.abort(),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledError);
  });
});
