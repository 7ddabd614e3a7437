/**
 * The dense analysis' independent parts on the solver threads (../parallel/taskPool.ts), on the
 * TypeScript backend (the addon's LAPACK and BLAS calls already run on OpenBLAS's threads):
 *  - the spectral stage: kappa(A^T A) (Lanczos, and Lanczos on its inverse through an LU of Q^T and the R_i),
 *    1 / lambda_min(S) (the LU of Q^T and Lanczos on its inverse; ./conditioning.ts, ./kappaS.ts),
 *    then the Gram blocks G_ij by groups of consecutive pairs, each written into its place in one
 *    shared array (./gramBlocks.ts); lambda_max(S) (Lanczos on the blocks) follows on the calling thread;
 *  - the rest: theta_ij by groups of consecutive pairs (./principalAngles.ts, from the kept Gram
 *    blocks), then the local angles' scan by ranges of rows (./localAngles.ts, merged in range order).
 * Every task runs the very code of the one-thread analysis on the same inputs, so the Analysis is
 * the one-thread one, bit for bit. The system's bases and A are copied once into shared memory (both
 * stages read that copy); the calling thread runs tasks too, its yields kept, its own progress
 * replaced by the pool's (one fraction per phase, increasing).
 */
import { runSync, type Work, type WorkProgress } from '../cooperative.js';
import type { DenseMachineData, DenseSystem } from '../distributed/distributedSystem.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { onKernels, runTasksWork, type TaskRunner } from '../parallel/taskPool.js';
import { threadsForDenseAnalysis } from '../parallel/threads.js';
import { sharedCopy } from '../parallel/workerThreads.js';
import type { MatrixConditioning } from './conditioning.js';
import { gramBlock, gramBlockIntoWork, gramBlocksLayoutWork, pairOfIndex, type GramBlocks } from './gramBlocks.js';
import { squareMatrixConditioningWork, sSmallestWork, type LanczosEnd } from './kappaS.js';
import {
  localAnglesFrom,
  localAnglesScanWork,
  mergeLocalAnglesScans,
  pairsOfRows,
  type LocalAngles,
  type LocalAnglesScan,
  type RowRange,
} from './localAngles.js';
import { quietly } from './parts.js';
import { pairAngleWork, principalAnglesFromPairs, type PrincipalAngles } from './principalAngles.js';

/** Pairs (i, j), i < j, with lexicographic index in [from, to). */
interface PairRange {
  readonly from: number;
  readonly to: number;
}

export type DenseAnalysisTask =
  | { readonly kind: 'matrix-conditioning' }
  | { readonly kind: 's-smallest' }
  /** G_ij of the pairs of the range into the shared Gram blocks' data. */
  | { readonly kind: 'gram'; readonly pairs: PairRange }
  | { readonly kind: 'pairs'; readonly pairs: PairRange }
  | { readonly kind: 'local-angles'; readonly rows: RowRange };

export type DenseAnalysisTaskResult =
  | { readonly kind: 'matrix-conditioning'; readonly conditioning: MatrixConditioning }
  | { readonly kind: 's-smallest'; readonly inverse: LanczosEnd | null }
  | { readonly kind: 'gram' }
  | { readonly kind: 'pairs'; readonly theta: Float64Array; readonly cos: Float64Array }
  | { readonly kind: 'local-angles'; readonly scan: LocalAnglesScan; readonly rowNorms: Float64Array };

/** What the tasks read (workers get it in shared memory). */
export interface DenseAnalysisSpec {
  /** The row-space system, its machines without what the analysis does not read (A_i, b_i, R). */
  readonly system: DenseSystem;
  /** The Gram blocks in shared memory: filled by the spectral stage's 'gram' tasks, read by the rest's 'pairs'. */
  readonly gram: GramBlocks;
  readonly tasks: readonly DenseAnalysisTask[];
}

/** Groups of consecutive pairs per thread: enough for the threads to finish close together (pairs differ in cost). */
const PAIR_GROUPS_PER_THREAD = 24;
/** Ranges of rows of the local angles' scan per thread. */
const ROW_RANGES_PER_THREAD = 2;

/** Threads for the dense analysis of `system` with `kernels`: 1 (the one-thread path) on the addon, on a tall system, or below the size threshold. */
export function denseAnalysisThreads(kernels: Kernels, system: DenseSystem): number {
  if (!kernels.threadedDenseAnalysis || system.A.rows !== system.n) return 1;
  return threadsForDenseAnalysis(system.n, 2);
}

const NOTHING = new Float64Array(0);

/** The system the tasks read, in shared memory: A, the partition, the machines' bases and R_i (kappa(A^T A), ./conditioning.ts); not A_i, b_i. */
export function sharedAnalysisSystem(system: DenseSystem): DenseSystem {
  const machines = system.machines.map((machine): DenseMachineData => ({ ...machine, a: NOTHING, b: NOTHING }));
  return sharedCopy({ ...system, b: NOTHING, xTrue: null, machines }) as DenseSystem;
}

function* denseAnalysisTaskWork(kernels: Kernels, spec: DenseAnalysisSpec, index: number): Work<DenseAnalysisTaskResult> {
  const task = spec.tasks[index];
  const { system } = spec;
  switch (task.kind) {
    case 'matrix-conditioning':
      return { kind: task.kind, conditioning: yield* squareMatrixConditioningWork(kernels, system) };
    case 's-smallest': {
      // Q^T's rows placed as the one-thread path places them (./kappaS.ts: the Gram blocks' offsets).
      const inverse = yield* sSmallestWork(kernels, system, spec.gram.offsets);
      return { kind: task.kind, inverse: inverse === null ? null : { largest: inverse.largest, iterations: inverse.iterations } };
    }
    case 'gram': {
      const { gram } = spec;
      const { m, sizes, data, blockStart } = gram;
      const pending = { madds: 0 };
      let [i, j] = pairOfIndex(m, task.pairs.from);
      for (let pair = task.pairs.from; pair < task.pairs.to; pair++) {
        const start = blockStart[pair];
        if (start >= 0) {
          const g = data.subarray(start, start + sizes[i] * sizes[j]);
          yield* gramBlockIntoWork(kernels, system.machines[i], system.machines[j], g, pending, 0);
        }
        if (++j === m) j = ++i + 1;
      }
      return { kind: task.kind };
    }
    case 'pairs': {
      const { gram } = spec;
      const { from, to } = task.pairs;
      const theta = new Float64Array(to - from);
      const cos = new Float64Array(to - from);
      let [i, j] = pairOfIndex(system.m, from);
      for (let pair = from; pair < to; pair++) {
        const angle = yield* pairAngleWork(kernels, system.machines[i], system.machines[j], gramBlock(gram, i, j));
        theta[pair - from] = angle.theta;
        cos[pair - from] = angle.cos;
        if (++j === system.m) j = ++i + 1;
        yield undefined;
      }
      return { kind: task.kind, theta, cos };
    }
    case 'local-angles': {
      const { scan, rowNorms } = yield* localAnglesScanWork(kernels, system.A, system.partition, task.rows);
      // The scan's arrays only (its tracker also holds a closure, which no message carries).
      const { maxCos, bestAngle, machineMaxCos, machineBestAngle } = scan;
      return { kind: task.kind, scan: { maxCos, bestAngle, machineMaxCos, machineBestAngle }, rowNorms };
    }
  }
}

/** Task `index` on a worker thread (../parallel/taskWorker.ts): what the calling thread computes for it. */
export const runTask: TaskRunner = (spec, index) => runSync(denseAnalysisTaskWork(selectedKernels(), spec as DenseAnalysisSpec, index));

function* runDenseTasksWork(
  kernels: Kernels,
  spec: DenseAnalysisSpec,
  threads: number,
  progress: (done: number) => WorkProgress,
): Work<DenseAnalysisTaskResult[]> {
  return yield* runTasksWork({
    taskModule: import.meta.url,
    ...onKernels(kernels),
    tasks: spec.tasks.length,
    threads,
    spec,
    runTask: (s, index) => quietly(denseAnalysisTaskWork(kernels, s, index)),
    progress,
  });
}

/**
 * The spectral stage's tasks for `threads` threads: kappa(A^T A), 1 / lambda_min(S), then the Gram
 * blocks by groups of consecutive pairs, into `gram` (from gramBlocksLayoutWork, in shared memory).
 */
export function spectralTasksSpec(system: DenseSystem, gram: GramBlocks, threads: number): DenseAnalysisSpec {
  const { m } = system;
  const gramTasks: DenseAnalysisTask[] = evenRanges((m * (m - 1)) / 2, PAIR_GROUPS_PER_THREAD * threads, (from, to) => to - from).map(
    (pairs) => ({ kind: 'gram', pairs }),
  );
  return { system, gram, tasks: [{ kind: 'matrix-conditioning' }, { kind: 's-smallest' }, ...gramTasks] };
}

/**
 * kappa(A^T A) (./conditioning.ts), 1 / lambda_min(S) by the LU of Q^T (./kappaS.ts sSmallestWork)
 * and the Gram blocks (./gramBlocks.ts) on `threads` threads; `system` from sharedAnalysisSystem.
 * A singular A throws as on one thread (its task is the first).
 */
export function* spectralOnThreadsWork(
  kernels: Kernels,
  system: DenseSystem,
  threads: number,
): Work<{ matrix: MatrixConditioning; inverse: LanczosEnd | null; gram: GramBlocks }> {
  const gram = sharedCopy(yield* gramBlocksLayoutWork(system.machines)) as GramBlocks;
  const spec = spectralTasksSpec(system, gram, threads);
  const [matrix, smallest] = yield* runDenseTasksWork(kernels, spec, threads, (done) => ({
    phase: 'conditioning',
    fraction: done / spec.tasks.length,
  }));
  if (matrix.kind !== 'matrix-conditioning' || smallest.kind !== 's-smallest') throw new Error('spectralOnThreadsWork: tasks out of order');
  return { matrix: matrix.conditioning, inverse: smallest.inverse, gram };
}

/** Consecutive ranges of [0, count) with about equal sums of `weight` (at most `parts`, none empty). */
function evenRanges(count: number, parts: number, weight: (from: number, to: number) => number): { from: number; to: number }[] {
  const total = weight(0, count);
  const ranges: { from: number; to: number }[] = [];
  let from = 0;
  for (let to = 1; to <= count; to++) {
    const last = to === count;
    if (last || (ranges.length < parts - 1 && weight(0, to) >= (total * (ranges.length + 1)) / parts)) {
      ranges.push({ from, to });
      from = to;
    }
  }
  return ranges;
}

/** The rest's tasks for `threads` threads: groups of consecutive pairs, then ranges of rows; `gram` in shared memory. */
export function anglesTasksSpec(system: DenseSystem, gram: GramBlocks, threads: number): DenseAnalysisSpec {
  const { m, n } = system;
  const pairTasks: DenseAnalysisTask[] = evenRanges((m * (m - 1)) / 2, PAIR_GROUPS_PER_THREAD * threads, (from, to) => to - from).map(
    (pairs) => ({ kind: 'pairs', pairs }),
  );
  const rowTasks: DenseAnalysisTask[] = evenRanges(
    n,
    ROW_RANGES_PER_THREAD * threads,
    (from, to) => pairsOfRows(n, { from, to }) + to - from,
  ).map((rows) => ({ kind: 'local-angles', rows }));
  return { system, gram, tasks: [...pairTasks, ...rowTasks] };
}

/**
 * theta_ij of every pair from the Gram blocks, then the local angles, on `threads` threads; `system`
 * from sharedAnalysisSystem, `gram` from spectralOnThreadsWork. Reports 'principal-angles' while pairs are handed out, then 'local-angles'.
 */
export function* anglesOnThreadsWork(
  kernels: Kernels,
  system: DenseSystem,
  gram: GramBlocks,
  threads: number,
): Work<{ angles: PrincipalAngles; local: LocalAngles }> {
  const { m } = system;
  const totalPairs = (m * (m - 1)) / 2;
  const spec = anglesTasksSpec(system, gram, threads);
  const pairCount = spec.tasks.filter((task) => task.kind === 'pairs').length;
  const rowCount = spec.tasks.length - pairCount;
  const results = yield* runDenseTasksWork(kernels, spec, threads, (done) =>
    done < pairCount || rowCount === 0
      ? { phase: 'principal-angles', fraction: done / Math.max(1, pairCount) }
      : { phase: 'local-angles', fraction: (done - pairCount) / rowCount },
  );
  const pairTheta = new Float64Array(totalPairs);
  const pairCos = new Float64Array(totalPairs);
  const scans: LocalAnglesScan[] = [];
  let rowNorms: Float64Array = NOTHING;
  results.forEach((result, index) => {
    const task = spec.tasks[index];
    if (result.kind === 'pairs' && task.kind === 'pairs') {
      pairTheta.set(result.theta, task.pairs.from);
      pairCos.set(result.cos, task.pairs.from);
    } else if (result.kind === 'local-angles') {
      scans.push(result.scan);
      rowNorms = result.rowNorms;
    }
  });
  const angles = principalAnglesFromPairs(m, pairTheta, pairCos);
  return { angles, local: localAnglesFrom(mergeLocalAnglesScans(scans), rowNorms, system.partition) };
}
