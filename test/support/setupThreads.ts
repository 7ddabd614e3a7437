/**
 * Runs `work` with `threads` solver threads, and with a parallel phase's size threshold (by default a sparse system's
 * two: its setup's, setParallelTasksMinNnz, and its analysis', setParallelAnalysisTasksMinNnz) at 0 when there are
 * several (any size runs in parallel) and at Infinity with one, as a large system would run it; the settings are
 * restored after.
 */
import { setParallelAnalysisTasksMinNnz, setParallelTasksMinNnz, setSolverThreads } from '../../src/solvers/parallel/threads.js';

export function onSetupThreads<T>(threads: number, work: () => T, setThreshold?: (minimum: number) => number): T {
  const setters = setThreshold ? [setThreshold] : [setParallelTasksMinNnz, setParallelAnalysisTasksMinNnz];
  setSolverThreads(threads);
  const previous = setters.map((set) => set(threads > 1 ? 0 : Infinity));
  try {
    return work();
  } finally {
    setters.forEach((set, k) => set(previous[k]));
    setSolverThreads('auto');
  }
}
