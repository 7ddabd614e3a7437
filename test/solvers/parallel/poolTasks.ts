/**
 * The tasks of test/solvers/parallel/taskPool.test.ts, a module a task worker imports: task i returns
 * its index, the thread that ran it and the squares of the spec's values scaled by i + 1, or throws
 * the SingularMatrixError a machine would (details { machine: i }) when i is in `failAt`. Task 0 on
 * the calling thread waits (up to 30 s) until a worker has run a task, so that the workers' part of
 * the pool is exercised however slowly they start.
 */
import { isMainThread, threadId } from 'node:worker_threads';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import type { TaskRunner } from '../../../src/solvers/parallel/taskPool.js';

export interface PoolTaskSpec {
  readonly values: Float64Array;
  readonly failAt: Int32Array;
  /** [0]: 1 once a worker ran a task. */
  readonly workerStarted: Int32Array;
  /** Whether task 0 on the calling thread waits for a worker. */
  readonly waitForWorker: boolean;
}

export interface PoolTaskResult {
  readonly index: number;
  readonly thread: number;
  readonly squares: Float64Array;
}

/**
 * On a worker: marks in workerStarted[0] (shared memory) that a worker ran a task. On the calling
 * thread: task 0 waits for that mark (up to 30 s), so that the workers take tasks however slowly they start.
 */
export function holdUntilAWorkerRuns(workerStarted: Int32Array, index: number): void {
  if (!isMainThread) {
    Atomics.store(workerStarted, 0, 1);
    Atomics.notify(workerStarted, 0);
  } else if (index === 0) {
    Atomics.wait(workerStarted, 0, 0, 30_000);
  }
}

export function poolTask(spec: PoolTaskSpec, index: number): PoolTaskResult {
  if (!isMainThread || spec.waitForWorker) holdUntilAWorkerRuns(spec.workerStarted, index);
  if (spec.failAt.includes(index)) throw new SingularMatrixError(`Machine ${index} is singular.`, { machine: index });
  return { index, thread: threadId, squares: spec.values.map((v) => (v * (index + 1)) ** 2) };
}

export const runTask: TaskRunner = (spec, index) => poolTask(spec as PoolTaskSpec, index);
