/**
 * Runs `work` with `threads` solver threads, and with a machine setup's parallel tasks taken at any size when there are
 * several (at none with one), as a large system's setup would run them; the settings are restored after.
 */
import { setParallelTasksMinNnz, setSolverThreads } from '../../src/solvers/parallel/threads.js';

export function onSetupThreads<T>(threads: number, work: () => T): T {
  setSolverThreads(threads);
  const previous = setParallelTasksMinNnz(threads > 1 ? 0 : Infinity);
  try {
    return work();
  } finally {
    setParallelTasksMinNnz(previous);
    setSolverThreads('auto');
  }
}
