/**
 * The tasks a sparse system runs on a task pool, a sparse setup's machines
 * (src/solvers/distributed/sparseSystem.ts) and its analysis' pairs of machines
 * (src/solvers/analysis/sparseAnalysis.ts), its parts on threads (src/solvers/analysis/sparseAnalysisTasks.ts),
 * and the dense analysis' parts
 * (src/solvers/analysis/denseAnalysisTasks.ts), as the tests run them: held by holdUntilAWorkerRuns
 * (./poolTasks.ts), so that the workers take tasks however slowly they start.
 */
import { runTask as denseTask } from '../../../src/solvers/analysis/denseAnalysisTasks.js';
import { runTask as pairTask } from '../../../src/solvers/analysis/sparseAnalysis.js';
import { runTask as sparseTask } from '../../../src/solvers/analysis/sparseAnalysisTasks.js';
import { runTask as setupTask } from '../../../src/solvers/distributed/sparseSystem.js';
import type { Work } from '../../../src/solvers/cooperative.js';
import type { BackendName } from '../../../src/solvers/linalg/backend.js';
import { runTasksWork, type TaskRunner } from '../../../src/solvers/parallel/taskPool.js';
import { holdUntilAWorkerRuns } from './poolTasks.js';

export interface HeldSpec {
  readonly kind: 'setup' | 'pairs' | 'dense' | 'sparse';
  /** What the task of that kind reads. */
  readonly inner: unknown;
  /** [0]: 1 once a worker ran a task. */
  readonly workerStarted: Int32Array;
}

export const runTask: TaskRunner = (spec, index) => {
  const { kind, inner, workerStarted } = spec as HeldSpec;
  holdUntilAWorkerRuns(workerStarted, index);
  const tasks = { setup: setupTask, pairs: pairTask, dense: denseTask, sparse: sparseTask };
  return tasks[kind](inner, index);
};

/** The `tasks` tasks of that kind on two threads, task 0 of the calling thread held until the worker has run one. */
export function heldTasksWork<Result>(kind: HeldSpec['kind'], inner: unknown, tasks: number, backend: BackendName): Work<Result[]> {
  const spec: HeldSpec = { kind, inner, workerStarted: new Int32Array(new SharedArrayBuffer(4)) };
  return runTasksWork({
    taskModule: import.meta.url,
    backend,
    blasThreads: null,
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
