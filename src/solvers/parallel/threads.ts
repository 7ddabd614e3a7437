/**
 * How many threads one solver run may iterate on. A run spreads its per-iteration work over worker
 * threads (see ./engine.ts) only when both of these hold, with either backend (the row kernels an
 * iteration is made of are single-threaded, in TypeScript or in the native addon's C, never
 * OpenBLAS's own threaded dgemv; the one BLAS call left, Cimmino's small per-machine dtrsv, runs
 * on whichever thread takes that machine):
 *  - the setting (setSolverThreads, default 'auto' = os.availableParallelism()) is >= 2;
 *  - one iteration reads at least parallelMinWork() matrix entries (default 250 000: the nonzero
 *    extents the run's passes read, sum_i p_i c_i for APC on dense data, i.e. n = 500). Measured on
 *    2 cores (compiled, quiet machine), APC / D-HBM per iteration, 1 -> 2 threads: n = 354 (125 000
 *    entries) 0.32 -> 0.15 / 0.16 -> 0.09 ms; n = 500 0.35 -> 0.17 / 0.32 -> 0.17 ms; n = 2000
 *    4.9 -> 2.5 / 4.8 -> 2.5 ms. Smaller runs gain too on an idle machine (barriers cost ~1
 *    microsecond while the threads spin), but a barrier costs 10-100 microseconds or more once
 *    other processes hold the cores, and starting the threads costs ~40-60 ms compiled (~150-250 ms
 *    under tsx), paid once per run: from 250 000 entries on, two threads save >= 0.15 ms per
 *    iteration, which repays the start-up within a few hundred iterations.
 * A service running several jobs at once should give each job its share of the cores
 * (setSolverThreads(cores / concurrent jobs)), as it would OpenBLAS's thread count.
 */
import { availableParallelism } from 'node:os';
import { InvalidParameterError } from '../errors.js';

/**
 * Default least nonzeros of A for which a sparse system's setup runs its machines on threads
 * (../parallel/taskPool.ts, ../distributed/sparseSystem.ts). Such a setup takes ~0.5 s in TypeScript, where two
 * threads save ~0.25 s against ~0.05 s compiled (~0.2 s under tsx) to start a worker and copy A into
 * shared memory; below it they save nothing (Poisson n = 90,000, 449,000 nonzeros, compiled: 0.21 s on one thread
 * against 0.35 s on two on TypeScript, 0.13 against 0.15 s native; bench/sparseAnalysisThreads.ts).
 */
export const DEFAULT_PARALLEL_TASKS_MIN_NNZ = 500_000;
/**
 * Default least nonzeros of A for which a sparse system's analysis runs its parts on threads (L beside the LU's ends
 * and lambda_max(S)'s Lanczos run, whose factor solves then run on both, and the pairs of machines:
 * ../analysis/sparseAnalysisTasks.ts, ../analysis/sparseAnalysis.ts). Its parts cost several times a setup per
 * nonzero, so threads pay from fewer of them. Poisson in strips, compiled, one thread against two
 * (bench/sparseAnalysisThreads.ts, best of 3): 49,600 nonzeros 0.17 -> 0.20 s native, 0.27 -> 0.32 s TypeScript
 * (slower); 111,900 0.45 -> 0.38 s and 0.76 -> 0.71 s; 199,200 1.23 -> 0.95 s and 1.87 -> 1.32 s; 448,800 2.86 -> 2.09 s
 * and 5.05 -> 3.18 s.
 */
export const DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ = 100_000;
/**
 * Default least n for which the dense analysis of an n x n system runs its independent parts on
 * threads (../analysis/denseAnalysisTasks.ts), on the TypeScript backend only (the addon's LAPACK and
 * BLAS calls already use OpenBLAS's two threads). A pool's worker takes its first task ~50 ms after
 * the pool starts compiled (~250 ms under tsx), once per stage (two per analysis), and runs its first
 * tasks on cold code: two threads cost ~0.5 s more CPU. Measured (bench/denseAnalysisThreads.ts, m = 10,
 * other processes idle): n = 1000 compiled 0.640 -> 0.616 s (break-even; under tsx, with a core
 * taken by others, 0.56-0.64x), n = 2000 under tsx 3.77 -> 2.97 s (1.27x). Off by default: the threads
 * hold both LUs at once, shared copies of A and the bases and a second thread's heap and WebAssembly
 * memory, so the analysis grows by ~10 n x n instead of ~2.4 (bench/stages.ts at n = 2000: 313 MB
 * against 77 MB), too much at MAX_N for a worker running two jobs; one thread meets the issue's
 * 2x-NumPy target at n = 1000 and 2000 (bench/results.md). A library caller with memory to spare sets
 * setParallelDenseAnalysisMinN(1500).
 */
export const DEFAULT_PARALLEL_DENSE_ANALYSIS_MIN_N = Infinity;
/** Default least work per iteration, in matrix entries read, for which a run uses threads. */
export const DEFAULT_PARALLEL_MIN_WORK = 250_000;
/** Largest thread count accepted. */
export const MAX_SOLVER_THREADS = 64;

let threadSetting: number | 'auto' = 'auto';
let minWork = DEFAULT_PARALLEL_MIN_WORK;
let tasksMinNnz = DEFAULT_PARALLEL_TASKS_MIN_NNZ;
let analysisTasksMinNnz = DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ;
let denseAnalysisMinN = DEFAULT_PARALLEL_DENSE_ANALYSIS_MIN_N;

/** Sets the threads a solver run may use ('auto' = os.availableParallelism()); returns the count now in effect. */
export function setSolverThreads(count: number | 'auto'): number {
  if (count !== 'auto' && !(Number.isInteger(count) && count >= 1 && count <= MAX_SOLVER_THREADS)) {
    throw new InvalidParameterError(
      `Solver threads is ${String(count)}; it must be 'auto' or an integer from 1 to ${MAX_SOLVER_THREADS}.`,
      {
        threads: String(count),
      },
    );
  }
  threadSetting = count;
  return solverThreads();
}

/** The threads a large enough solver run uses (the setting, with 'auto' resolved). */
export function solverThreads(): number {
  return threadSetting === 'auto' ? Math.min(MAX_SOLVER_THREADS, Math.max(1, availableParallelism())) : threadSetting;
}

/** Sets the least work per iteration (matrix entries) for which a run uses threads; returns the previous value. */
export function setParallelMinWork(entries: number): number {
  if (!(Number.isFinite(entries) && entries >= 0)) {
    throw new InvalidParameterError(`Parallel minimum work is ${String(entries)}; it must be a finite number >= 0.`, {
      entries: String(entries),
    });
  }
  const previous = minWork;
  minWork = entries;
  return previous;
}

export function parallelMinWork(): number {
  return minWork;
}

/**
 * Threads for a run whose iteration reads `work` matrix entries and splits into at most `parts`
 * independent pieces (machines for the projection methods, rows for the gradient methods).
 */
export function threadsForRun(work: number, parts: number): number {
  return threadsFrom(work, minWork, parts);
}

/** One thread below `minimum`, else the setting's, at most one per part. */
function threadsFrom(size: number, minimum: number, parts: number): number {
  if (size < minimum) return 1;
  return Math.max(1, Math.min(solverThreads(), parts));
}

/** Sets the least nonzeros of A for which a sparse system's setup runs on threads (Infinity: never); returns the previous value. */
export function setParallelTasksMinNnz(nnz: number): number {
  const previous = tasksMinNnz;
  tasksMinNnz = validMinimum(nnz, 'Parallel tasks minimum nonzeros', 'nnz');
  return previous;
}

/** Sets the least nonzeros of A for which a sparse system's analysis runs its parts on threads (Infinity: never); returns the previous value. */
export function setParallelAnalysisTasksMinNnz(nnz: number): number {
  const previous = analysisTasksMinNnz;
  analysisTasksMinNnz = validMinimum(nnz, 'Parallel analysis tasks minimum nonzeros', 'nnz');
  return previous;
}

/** A threshold setting's value (Infinity allowed: never), else InvalidParameterError naming the setting, `key` in its details. */
function validMinimum(value: number, setting: string, key: string): number {
  if (!(value >= 0)) {
    throw new InvalidParameterError(`${setting} is ${String(value)}; it must be a number >= 0.`, { [key]: String(value) });
  }
  return value;
}

/** Threads for a sparse setup's `tasks` machines on a matrix of `nnz` stored entries (the setting, as for runs, at most one per task). */
export function threadsForSetupTasks(nnz: number, tasks: number): number {
  return threadsFrom(nnz, tasksMinNnz, tasks);
}

/** Threads for `tasks` independent parts of a sparse analysis on a matrix of `nnz` stored entries (at most one per task). */
export function threadsForAnalysisTasks(nnz: number, tasks: number): number {
  return threadsFrom(nnz, analysisTasksMinNnz, tasks);
}

/** Sets the least n for which a dense analysis runs its parts on threads (Infinity: never); returns the previous value. */
export function setParallelDenseAnalysisMinN(n: number): number {
  const previous = denseAnalysisMinN;
  denseAnalysisMinN = validMinimum(n, 'Parallel dense analysis minimum n', 'n');
  return previous;
}

/** Threads for `tasks` independent parts of the dense analysis of an n x n system (the setting, at most one per task). */
export function threadsForDenseAnalysis(n: number, tasks: number): number {
  return threadsFrom(n, denseAnalysisMinN, tasks);
}
