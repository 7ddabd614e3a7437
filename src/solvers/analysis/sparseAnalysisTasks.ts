/**
 * The sparse analysis' independent parts on the solver threads (../parallel/taskPool.ts), as tasks:
 *  - 'lu-ends': the LU of A, then mu by shift-invert through it and lambda_min(S) through the same LU
 *    (the LU lives on the thread that made it: nothing of its size crosses threads);
 *  - 'L': lambda_max(A^T A) on the backend's fused CSR products;
 *  - 'lambda-max-s': lambda_max(S) by Lanczos on the scaled Gram operator, when it is not had by
 *    reflection (./kappaS.ts);
 *  - 'pair': one overlapping pair's principal angle (../sparse/spectrumOfS.ts), only when the whole
 *    analysis is wanted at once: the pairs then fill the time one thread would idle while the other
 *    finishes L or the LU's ends (at n = 10^6, L alone is ~3400 products).
 * On one thread these parts run one after the other (./sparseAnalysis.ts); each task runs the very
 * code of that path on the same inputs with the same options, so the values are the same.
 * On the native backend the task pool holds OpenBLAS to one thread while the tasks run (each task's passes
 * over its Lanczos basis call dgemv: two tasks each threading theirs would put twice the cores'
 * threads to spin against each other, as ../machines/blockPass.ts measured for dgemm).
 */
import { runSync, type Work, type WorkProgress } from '../cooperative.js';
import type { CsrSystem } from '../distributed/sparseSystem.js';
import { holdBlasToOneThread, selectedKernels, type Kernels } from '../linalg/kernels.js';
import { onKernels, runTasksWork, type TaskRunner } from '../parallel/taskPool.js';
import { threadsForAnalysisTasks } from '../parallel/threads.js';
import { sharedCopy } from '../parallel/workerThreads.js';
import type { StoredGramFactor } from '../machines/placement.js';
import { nnzOf } from '../sparse/csr.js';
import { conditionNumberEstimate, spectralEstimateOf, type SpectralEstimate } from '../eigen/eigenvalueEstimate.js';
import { inverseNormalOperatorOfSparse } from '../sparse/normalOperators.js';
import { conditioningOfEnds } from './conditioning.js';
import {
  eigensolverOptionsOf,
  KrylovWorkspace,
  largestEigenvalueWork,
  smallestEigenvalueByInverseWork,
  type LargestEigenvalueOptions,
} from '../eigen/lanczos.js';
import { currentThreadLuSolves, currentThreadNormalOperator, currentThreadSparseLuWork } from '../machines/placement.js';
import { machineColumnSlots, PairAngleContext, type MachineColumnSlots, type SparsePairAngle } from '../sparse/spectrumOfS.js';
import { lambdaMaxSByReflection, lambdaMaxSWork, lambdaMinSWork, reflectedLambdaMax } from './kappaS.js';
import { localAnglesOfCsrWork } from './localAngles.js';
import { csrPairAngleWork } from './csrPairAngle.js';
import { threadedMachineSolvesPass } from './scaledGramShard.js';
import { heterogeneityOf, inPhase, quietly, type AnalysisParts, type StagedParts } from './parts.js';
import {
  machineGramSolves,
  pairAnglesSpec,
  principalAnglesOfPairs,
  sBasisSize,
  sOptionsOf,
  sparseStagedParts,
  SPECTRUM_TOLERANCE,
  type PairAnglesSpec,
  type SparseLuContext,
  type SparsePrincipalAngles,
} from './sparseAnalysis.js';

export type SparseAnalysisTask =
  { readonly kind: 'lu-ends' } | { readonly kind: 'L' } | { readonly kind: 'lambda-max-s' } | { readonly kind: 'pair'; readonly q: number };

export type SparseAnalysisTaskResult =
  | { readonly kind: 'lu-ends'; readonly mu: SpectralEstimate; readonly lambdaMinS: SpectralEstimate }
  | { readonly kind: 'L'; readonly L: SpectralEstimate }
  | { readonly kind: 'lambda-max-s'; readonly lambdaMaxS: SpectralEstimate }
  | { readonly kind: 'pair'; readonly angle: SparsePairAngle };

/** What the tasks read (workers get it in shared memory); A is `pairs.slots.a`. */
export interface SparseAnalysisSpec {
  readonly pairs: PairAnglesSpec;
  readonly tasks: readonly SparseAnalysisTask[];
}

/** The solves and the pairs' context of one thread, made at its first task needing them. */
interface ThreadContext {
  readonly spec: SparseAnalysisSpec;
  pairContext: PairAngleContext | null;
  /** The calling thread's only: receives the LU of A if 'lu-ends' runs there (../analysis/analyze.ts AnalyzeOptions.keepLu). */
  readonly keepLu?: (context: SparseLuContext) => void;
}

function* sparseAnalysisTaskWork(
  kernels: Kernels,
  spec: SparseAnalysisSpec,
  index: number,
  context: ThreadContext,
): Work<SparseAnalysisTaskResult> {
  const task = spec.tasks[index];
  const { slots } = spec.pairs;
  const A = slots.a;
  // The options of the one-thread path (./sparseAnalysis.ts): L and mu on the default basis, S's ends on sBasisSize(n).
  const lanczos = { tolerance: SPECTRUM_TOLERANCE, ...eigensolverOptionsOf(kernels) };
  const sOptions = { ...lanczos, basisSize: sBasisSize(A.rows) };
  switch (task.kind) {
    case 'lu-ends': {
      const workspace = new KrylovWorkspace();
      const lu = yield* currentThreadSparseLuWork(A);
      const luSolves = currentThreadLuSolves(lu);
      const mu = spectralEstimateOf(
        yield* smallestEigenvalueByInverseWork(inverseNormalOperatorOfSparse(lu, luSolves), lanczos, workspace),
      );
      const lambdaMinS = yield* lambdaMinSWork(slots, lu, sOptions, workspace, luSolves);
      context.keepLu?.({ lu, luSolves, workspace });
      return { kind: task.kind, mu, lambdaMinS };
    }
    case 'L':
      return { kind: task.kind, L: spectralEstimateOf(yield* largestEigenvalueWork(currentThreadNormalOperator(A), lanczos)) };
    case 'lambda-max-s':
      return { kind: task.kind, lambdaMaxS: yield* lambdaMaxSWork(slots, machineGramSolves(spec.pairs.factors), sOptions) };
    case 'pair': {
      context.pairContext ??= new PairAngleContext(slots, machineGramSolves(spec.pairs.factors));
      const { pairs } = spec.pairs;
      return { kind: task.kind, angle: yield* csrPairAngleWork(kernels, context.pairContext, pairs[2 * task.q], pairs[2 * task.q + 1]) };
    }
  }
}

/** A worker thread's context (a worker serves one analysis, then ends). */
let workerContext: ThreadContext | null = null;

/** Task `index` on a worker thread (../parallel/taskWorker.ts): what the calling thread computes for it. */
export const runTask: TaskRunner = (spec, index) => {
  const tasks = spec as SparseAnalysisSpec;
  if (workerContext?.spec !== tasks) workerContext = { spec: tasks, pairContext: null };
  return runSync(sparseAnalysisTaskWork(selectedKernels(), tasks, index, workerContext));
};

/** Threads for the sparse analysis' parts of `system` (1: the one-thread path of ./sparseAnalysis.ts). */
export function sparseAnalysisThreads(system: CsrSystem): number {
  return threadsForAnalysisTasks(nnzOf(system.A), 2);
}

/** The tasks' results (OpenBLAS held to one thread meanwhile: ../parallel/taskPool.ts). */
function* runSparseTasksWork(
  kernels: Kernels,
  spec: SparseAnalysisSpec,
  threads: number,
  spectral: number,
  keepLu: ((context: SparseLuContext) => void) | undefined,
): Work<SparseAnalysisTaskResult[]> {
  const context: ThreadContext = { spec, pairContext: null, keepLu };
  return yield* runTasksWork({
    taskModule: import.meta.url,
    ...onKernels(kernels),
    tasks: spec.tasks.length,
    threads,
    spec,
    runTask: (s, index) => quietly(sparseAnalysisTaskWork(kernels, s, index, context)),
    progress: (done, isDone) => sparseTasksProgress(spectral, spec.tasks.length, done, isDone),
  });
}

/**
 * The progress of the analysis' tasks when `done` of `tasks` are done, the first `spectral` of them spectral. They
 * are handed out in order but run side by side: while a spectral task runs (the LU's ends outlast every pair on the
 * TypeScript backend at n = 10^6) the stage is 'conditioning', its fraction counting every task, so that it moves as
 * pairs finish beside it; then 'principal-angles', the fraction of the pairs done.
 */
export function sparseTasksProgress(spectral: number, tasks: number, done: number, isDone: (index: number) => boolean): WorkProgress {
  const pairs = tasks - spectral;
  let spectralDone = 0;
  for (let i = 0; i < spectral; i++) if (isDone(i)) spectralDone++;
  return spectralDone < spectral || pairs === 0
    ? { phase: 'conditioning', fraction: Math.min(1, done / tasks) }
    : { phase: 'principal-angles', fraction: (done - spectral) / pairs };
}

/** The tasks' results by kind (null: that task was not run); the pairs' angles in task order, that is by q. */
function taskResultsByKind(results: readonly SparseAnalysisTaskResult[]): {
  L: SpectralEstimate | null;
  ends: { mu: SpectralEstimate; lambdaMinS: SpectralEstimate } | null;
  lambdaMaxS: SpectralEstimate | null;
  angles: SparsePairAngle[];
} {
  let L: SpectralEstimate | null = null;
  let ends: { mu: SpectralEstimate; lambdaMinS: SpectralEstimate } | null = null;
  let lambdaMaxS: SpectralEstimate | null = null;
  const angles: SparsePairAngle[] = [];
  for (const result of results) {
    if (result.kind === 'L') L = result.L;
    else if (result.kind === 'lu-ends') ends = result;
    else if (result.kind === 'lambda-max-s') lambdaMaxS = result.lambdaMaxS;
    else angles.push(result.angle);
  }
  return { L, ends, lambdaMaxS, angles };
}

/**
 * lambda_max(S) of the system's partition and its principal angles: the partition advisor's exact kappa(S) (with the
 * lambda_min(S) it has) and theta_H of its likeliest best (`withAngles`; else lambda_max(S) alone). lambda_max(S)'s
 * Lanczos run first, each product's factor solves shared by the threads (./scaledGramShard.ts), then the pairs' angles
 * on one task pool of the same threads: both keep every thread busy (run as one task beside the pairs, lambda_max(S) was
 * the critical path: at n = 10^6, METIS's boxes, 181 products, ~50 s, while the pairs' ~37 s of CPU left a core idle
 * for ~18 s). With `ruledOutWhen` the run stops as soon as its top Ritz value (a lower bound on lambda_max(S)) satisfies
 * it: the advisor needs no more of a candidate that bound puts above the best, and then it gets no angles
 * (`lambdaMaxS.converged` false, its value that bound). Otherwise the values are sparseSOfPartitionWork's lambda_max(S)
 * and sparseAnglesOfPartitionWork's angles (the same code and options, to the bit on any number of threads). No LU of A
 * is needed. lambda_max(S) is null when had by reflection (./kappaS.ts: 2 - lambda_min(S)).
 */
export function* sparseLambdaMaxSAndAnglesWork(
  kernels: Kernels,
  system: CsrSystem,
  withAngles: boolean,
  ruledOutWhen?: (lambdaMaxSAtLeast: number) => boolean,
): Work<{ lambdaMaxS: SpectralEstimate | null; angles: SparsePrincipalAngles | null }> {
  const threads = sparseAnalysisThreads(system);
  const slots = machineColumnSlots(system.A, system.partition.rowsOf, threads > 1);
  // The machines' factors in shared memory once, for lambda_max(S)'s threads and the pairs' pool alike.
  const unshared = pairAnglesSpec(system, slots);
  const pairs = threads > 1 ? (sharedCopy(unshared) as PairAnglesSpec) : unshared;
  let lambdaMaxS: SpectralEstimate | null = null;
  if (!lambdaMaxSByReflection(slots)) {
    // Its Lanczos run reports no fraction: the phase says what runs.
    yield { phase: 'conditioning', fraction: 0 };
    const options = { ...sOptionsOf(kernels, slots.a.rows), abandonWhen: ruledOutWhen };
    lambdaMaxS = yield* lambdaMaxSOnThreadsWork(kernels, slots, pairs.factors, threads, options);
    yield { phase: 'conditioning', fraction: 1 };
    if (lambdaMaxS.abandoned) return { lambdaMaxS, angles: null };
  }
  const overlapping = withAngles ? pairs.pairs.length / 2 : 0;
  const tasks: SparseAnalysisTask[] = [];
  for (let q = 0; q < overlapping; q++) tasks.push({ kind: 'pair', q });
  const results = tasks.length === 0 ? [] : yield* runSparseTasksWork(kernels, { pairs, tasks }, threads, 0, undefined);
  const { angles } = taskResultsByKind(results);
  return { lambdaMaxS, angles: withAngles ? principalAnglesOfPairs(pairs, angles) : null };
}

/**
 * lambda_max(S) as the analysis computes it ('lambda-max-s'), its products' factor solves on `threads` threads (with
 * `options`: those of the analysis' run and the advisor's early stop, sparseLambdaMaxSAndAnglesWork).
 */
function* lambdaMaxSOnThreadsWork(
  kernels: Kernels,
  slots: MachineColumnSlots,
  factors: readonly StoredGramFactor[],
  threads: number,
  options: LargestEigenvalueOptions = sOptionsOf(kernels, slots.a.rows),
): Work<SpectralEstimate> {
  // OpenBLAS on one thread meanwhile, as a task pool holds it (../parallel/taskPool.ts TaskPlan.blasThreads): each
  // thread's CHOLMOD solves call BLAS, and the Lanczos basis' dgemv then sums in one order on one thread as on several.
  const releaseBlas = holdBlasToOneThread(kernels.blasThreads);
  const solves = threads === 1 ? machineGramSolves(factors) : null;
  const threaded = threads === 1 ? null : threadedMachineSolvesPass(slots, factors, kernels.backend, threads);
  try {
    return yield* lambdaMaxSWork(slots, threaded?.pass ?? solves!, options);
  } finally {
    threaded?.dispose();
    solves?.release();
    releaseBlas();
  }
}

/**
 * The tasks of the sparse analysis of `system`: 'lu-ends', 'L', 'lambda-max-s' unless lambda_max(S) is
 * had by reflection, then with `whole` one 'pair' per overlapping pair; its arrays in shared memory for a pool of
 * threads (`shared`).
 */
export function sparseAnalysisTasksSpec(system: CsrSystem, whole: boolean, shared = false): SparseAnalysisSpec {
  const slots = machineColumnSlots(system.A, system.partition.rowsOf, shared);
  const pairs = pairAnglesSpec(system, slots);
  const tasks: SparseAnalysisTask[] = [{ kind: 'lu-ends' }, { kind: 'L' }];
  if (!lambdaMaxSByReflection(slots)) tasks.push({ kind: 'lambda-max-s' });
  if (whole) for (let q = 0; q < pairs.pairs.length / 2; q++) tasks.push({ kind: 'pair', q });
  return { pairs, tasks };
}

/**
 * The sparse analysis' staged parts with its parts on `threads` threads (./sparseAnalysis.ts
 * sparseStagedPartsWork's values): L beside the LU's ends (and lambda_max(S)'s Lanczos when it runs);
 * with `whole`, the pairs' angles too, rest() then computing only the local angles.
 * A singular A throws as on one thread ('lu-ends' is the first task). `keepLu` receives the LU of A when the calling
 * thread made it (it takes the first task, so nearly always).
 */
export function* sparseStagedPartsOnThreadsWork(
  kernels: Kernels,
  system: CsrSystem,
  threads: number,
  whole: boolean,
  keepLu?: (context: SparseLuContext) => void,
): Work<StagedParts> {
  const { A, partition } = system;
  const spec = sparseAnalysisTasksSpec(system, whole, threads > 1);
  const { pairs } = spec;
  const { slots } = pairs;
  const reflected = lambdaMaxSByReflection(slots);

  yield { phase: 'conditioning', fraction: 0 };
  const results = yield* runSparseTasksWork(kernels, spec, threads, reflected ? 2 : 3, keepLu);
  const byKind = taskResultsByKind(results);
  const { L, ends, angles } = byKind;
  let { lambdaMaxS } = byKind;
  if (L === null || ends === null) throw new Error('sparseStagedPartsOnThreadsWork: a spectral task has no result');
  const matrix = conditioningOfEnds(A.rows, L, ends.mu);
  const { lambdaMinS } = ends;
  if (reflected) lambdaMaxS = reflectedLambdaMax(lambdaMinS);
  if (lambdaMaxS === null) throw new Error('sparseStagedPartsOnThreadsWork: lambda_max(S) has no result');
  const s = { lambdaMinS, lambdaMaxS, kappaS: conditionNumberEstimate(lambdaMaxS, lambdaMinS) };
  yield { phase: 'conditioning', fraction: 1 };

  const factors = machineGramSolves(pairs.factors);
  const staged = sparseStagedParts(kernels, system, pairs, factors, s, matrix);
  if (!whole) return staged;
  const principal = principalAnglesOfPairs(pairs, angles);
  function* rest(): Work<AnalysisParts> {
    yield { phase: 'principal-angles', fraction: 1 };
    yield { phase: 'local-angles', fraction: 0 };
    const local = yield* inPhase(localAnglesOfCsrWork(A, partition), 'local-angles', 0, 1);
    return {
      heterogeneity: heterogeneityOf(principal, local),
      conditioning: staged.conditioning,
      theorem4KappaALowerBound: local.theorem4KappaALowerBound,
    };
  }
  return { conditioning: staged.conditioning, rest };
}
