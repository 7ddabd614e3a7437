/**
 * A sparse setup's task (src/solvers/distributed/sparseSystem.ts runTask) as test/solvers/distributed/
 * sparseSystem.test.ts runs it on a task pool: a worker marks that it ran a task, and task 0 on the
 * calling thread waits (up to 30 s) for that mark, so that the workers build machines however slowly
 * they start.
 */
import { isMainThread } from 'node:worker_threads';
import { runTask as setupTask } from '../../../src/solvers/distributed/sparseSystem.js';
import type { TaskRunner } from '../../../src/solvers/parallel/taskPool.js';

export interface HeldSetupSpec {
  /** What sparseSystem.ts's runTask reads: n, A, b, rowsOf. */
  readonly setup: unknown;
  /** [0]: 1 once a worker ran a task. */
  readonly workerStarted: Int32Array;
}

export const runTask: TaskRunner = (spec, index) => {
  const { setup, workerStarted } = spec as HeldSetupSpec;
  if (!isMainThread) {
    Atomics.store(workerStarted, 0, 1);
    Atomics.notify(workerStarted, 0);
  } else if (index === 0) {
    Atomics.wait(workerStarted, 0, 0, 30_000);
  }
  return setupTask(setup, index);
};
