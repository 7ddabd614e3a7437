/**
 * The tasks a sparse system runs on a task pool, a sparse setup's machines
 * (src/solvers/distributed/sparseSystem.ts) and its analysis' pairs of machines
 * (src/solvers/analysis/sparseAnalysis.ts), as the tests run them: a worker marks that it ran a task,
 * and task 0 on the calling thread waits (up to 30 s) for that mark, so that the workers take tasks
 * however slowly they start.
 */
import { isMainThread } from 'node:worker_threads';
import { runTask as pairTask } from '../../../src/solvers/analysis/sparseAnalysis.js';
import { runTask as setupTask } from '../../../src/solvers/distributed/sparseSystem.js';
import type { Work } from '../../../src/solvers/cooperative.js';
import type { BackendName } from '../../../src/solvers/linalg/backend.js';
import { runTasksWork, type TaskRunner } from '../../../src/solvers/parallel/taskPool.js';

export interface HeldSpec {
  readonly kind: 'setup' | 'pairs';
  /** What the task of that kind reads. */
  readonly inner: unknown;
  /** [0]: 1 once a worker ran a task. */
  readonly workerStarted: Int32Array;
}

export const runTask: TaskRunner = (spec, index) => {
  const { kind, inner, workerStarted } = spec as HeldSpec;
  if (!isMainThread) {
    Atomics.store(workerStarted, 0, 1);
    Atomics.notify(workerStarted, 0);
  } else if (index === 0) {
    Atomics.wait(workerStarted, 0, 0, 30_000);
  }
  return (kind === 'setup' ? setupTask : pairTask)(inner, index);
};

/** The `tasks` tasks of that kind on two threads, task 0 of the calling thread held until the worker has run one. */
export function heldTasksWork<Result>(kind: HeldSpec['kind'], inner: unknown, tasks: number, backend: BackendName): Work<Result[]> {
  const spec: HeldSpec = { kind, inner, workerStarted: new Int32Array(new SharedArrayBuffer(4)) };
  return runTasksWork({
    taskModule: import.meta.url,
    backend,
    tasks,
    threads: 2,
    spec,
    // eslint-disable-next-line require-yield
    *runTask(s, i) {
      return runTask(s, i) as Result;
    },
    progress: () => ({ phase: kind }),
  });
}
