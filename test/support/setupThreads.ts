/**
 * Runs `work` with `threads` solver threads, and with a parallel phase's size threshold (by default a machine setup's,
 * setParallelTasksMinNnz) at 0 when there are several (any size runs in parallel) and at Infinity with one, as a large
 * system would run it; the settings are restored after.
 */
import { setParallelTasksMinNnz, setSolverThreads } from '../../src/solvers/parallel/threads.js';

export function onSetupThreads<T>(threads: number, work: () => T, setThreshold: (minimum: number) => number = setParallelTasksMinNnz): T {
  setSolverThreads(threads);
  const previous = setThreshold(threads > 1 ? 0 : Infinity);
  try {
    return work();
  } finally {
    setThreshold(previous);
    setSolverThreads('auto');
  }
}
