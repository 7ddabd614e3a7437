/**
 * The analysis on the sparse path: every field of the Analysis for a system whose
 * machines hold CSR rows (../distributed/sparseSystem.ts), without forming anything dense of size n
 * (nothing n x n, nothing n x p_i). The values are the dense path's, computed differently:
 *  - 'conditioning': sigma_max(A), sigma_min(A) and kappa(A^T A) = L / mu by Lanczos on A^T A and on
 *    (A^T A)^{-1} through one sparse LU of A (./conditioning.ts);
 *  - 'principal-angles': theta_ij = pi/2 exactly for pairs whose column supports are disjoint, and
 *    cos theta_ij = sigma_max(L_i^{-1} A_i A_j^T L_j^{-T}) with the sine route for tiny angles for the
 *    others (../sparse/spectrumOfS.ts), L_i the Cholesky factor of G_i = A_i A_i^T each machine already
 *    holds (factored once, with the system); the pairs are independent and, on a large matrix, run on
 *    the solver threads (../parallel/taskPool.ts: each thread its own solves and workspace, the same
 *    angles as on one thread);
 *  - 'conditioning': lambda_min(S) by shift-invert through the same LU of A; lambda_max(S) = 2 - lambda_min(S)
 *    when the machines' overlap graph is bipartite (contiguous strips of a banded matrix), else by
 *    Lanczos on the block-Jacobi-scaled Gram operator Lb^{-1} (A A^T) Lb^{-T} (./kappaS.ts);
 *  - 'local-angles': phi_i, theta_min^(l) and the row norms from the pairs of rows sharing a column
 *    (rows with disjoint supports are orthogonal), ./localAngles.ts.
 * Each iterative value carries how it was obtained and its error bound (Conditioning.estimates,
 * Heterogeneity.estimates). The rates, bounds and recommendation follow in ./analyze.ts, as for
 * dense storage. This is the one-thread order; on a large matrix ./sparseAnalysisTasks.ts runs the
 * same parts side by side on the solver threads.
 */
import { runSync, type Work } from '../cooperative.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { csrPairAngleWork } from './csrPairAngle.js';
import type { CsrSystem } from '../distributed/sparseSystem.js';
import { onKernels, runTasksWork, type TaskRunner } from '../parallel/taskPool.js';
import { threadsForAnalysisTasks } from '../parallel/threads.js';
import { nnzOf, type CsrMatrix } from '../sparse/csr.js';
import type { SpectralEstimate } from '../eigen/eigenvalueEstimate.js';
import { sparseMatrixConditioningWork } from './conditioning.js';
import {
  currentThreadGramSolver,
  gramFactorizer,
  currentThreadLuSolves,
  currentThreadNormalOperator,
  currentThreadSparseLuWork,
  type GramSolver,
  type StoredGramFactor,
} from '../machines/placement.js';
import { eigensolverOptionsOf, KrylovWorkspace, type LargestEigenvalueOptions, type SpectralMethod } from '../eigen/lanczos.js';
import {
  machineColumnSlots,
  overlapColourCount,
  overlappingMachinePairs,
  overlapTwoColouring,
  PairAngleContext,
  pairsByDimensionCount,
  type GramFactorSolves,
  type MachineColumnSlots,
  type SparsePairAngle,
} from '../sparse/spectrumOfS.js';
import type { LuSolves, SparseLuFactorization } from '../sparse/sparseLu.js';
import { multiplyLower, multiplyUpper, type CholeskyFactor } from '../sparse/sparseCholesky.js';
import { csrSSpectrumWork, lambdaMinSWork, type SSpectrum } from './kappaS.js';
import { localAnglesOfCsrWork } from './localAngles.js';
import { heterogeneityOf, inPhase, type AnalysisParts, type StagedParts } from './parts.js';
import type { AngleEstimate, AngleEstimates, Conditioning, Estimate, EstimateMethod } from './types.js';

/**
 * Stopping tolerance of the Lanczos runs on the spectrum (a relative residual bound, see
 * ../eigen/lanczos.ts): the reported bound is at most about this, and the values are
 * usually far closer (a Ritz value's error is of second order in its residual). 1e-10 costs twice
 * the iterations on clustered tops (20 strips of a 2-D Poisson matrix: ~9500 products for lambda_max(S)
 * against ~4500) for digits beyond what the rates and bounds need. The principal angles keep their
 * own default (relative to min(cos^2, sin^2), cheap: operators of size p_i).
 */
export const SPECTRUM_TOLERANCE = 1e-8;

/**
 * Lanczos vectors for S's spectrum (when lambda_max(S) is not had by reflection): the top of the
 * scaled Gram operator is a tight cluster (one eigenvalue just below 2 per boundary between strips),
 * which a larger basis resolves in fewer products (Poisson n = 40,000 in 20 strips: 2402 products
 * with 80 vectors, 4362 with the default 40; 16 s against 23 s), within a memory budget of
 * KRYLOV_BYTES: 80 vectors up to n ~ 400,000, the default 40 from n ~ 800,000 (n = 10^6 keeps its
 * memory).
 */
const S_BASIS_MIN = 40;
const S_BASIS_MAX = 80;
const KRYLOV_BYTES = 256 * 2 ** 20;
export const sBasisSize = (n: number): number => Math.max(S_BASIS_MIN, Math.min(S_BASIS_MAX, Math.floor(KRYLOV_BYTES / (8 * n))));

/** The public method names cover every method the sparse estimators report (compile-time check). */
const methodName = (method: SpectralMethod): EstimateMethod => method;

function estimateOf(e: SpectralEstimate): Estimate {
  return {
    method: methodName(e.method),
    relativeErrorBound: Number.isFinite(e.relativeErrorBound) ? e.relativeErrorBound : null,
    iterations: e.iterations,
    converged: e.converged,
  };
}

function angleEstimateOf(angle: SparsePairAngle): AngleEstimate {
  return {
    method: methodName(angle.method),
    // The bound is theta_hat minus a lower end computed in rounding: clamp the few-ulp negatives at 0.
    absoluteErrorBound: Number.isFinite(angle.absoluteErrorBound) ? Math.max(0, angle.absoluteErrorBound) : null,
    iterations: angle.iterations,
    converged: angle.converged,
  };
}

/** The machines' solves, and their release once the caller is done with them. */
export interface MachineGramSolves extends GramFactorSolves {
  /**
   * Lets go of the solvers made so far (later solves make new ones). On the native backend a solver holds its
   * factor until released or until Node runs its finalizer, on a later turn of the event loop: a computation that
   * goes through many systems at once (the partition advisor's candidates) would otherwise hold every one.
   */
  release(): void;
}

/**
 * Solves with the Cholesky factors the machines hold (B_i = P_i^T L, B_i B_i^T = G_i), on the current
 * backend; a machine's solver is made at its first solve (on the native backend the addon checks the
 * factor then), so machines that overlap no other, and block-diagonal systems, cost nothing.
 */
export function machineGramSolves(factors: readonly StoredGramFactor[]): MachineGramSolves {
  const solvers: (GramSolver | undefined)[] = new Array<GramSolver | undefined>(factors.length);
  const solverOf = (machine: number): GramSolver => (solvers[machine] ??= currentThreadGramSolver(factors[machine]));
  // The factors as operators (the pairs' shift-invert route), with this thread's work vector.
  const operators: (CholeskyFactor | undefined)[] = new Array<CholeskyFactor | undefined>(factors.length);
  const operatorOf = (machine: number): CholeskyFactor =>
    (operators[machine] ??= { ...factors[machine], work: new Float64Array(factors[machine].symbolic.n) });
  // A pair's shifts refactor one pattern (up to SHIFT_ROUNDS times), and strips' pairs often share it: one
  // analysis (ordering, elimination tree, L's pattern) serves them all on the TypeScript backend.
  const factorize = gramFactorizer({ last: null });
  return {
    solveL: (machine, b, y) => solverOf(machine).solveLower(b, y),
    solveLT: (machine, y, x) => solverOf(machine).solveUpper(y, x),
    factorValues: (machine) => factors[machine],
    joint: {
      multiplyL: (machine, u, out) => multiplyLower(operatorOf(machine), u, out),
      multiplyLT: (machine, y, out) => multiplyUpper(operatorOf(machine), y, out),
      factor: (g) => currentThreadGramSolver(factorize(g)),
    },
    release() {
      for (let machine = 0; machine < solvers.length; machine++) {
        solvers[machine]?.release();
        solvers[machine] = undefined;
      }
    },
  };
}

/** What the pairs' angles read (a worker thread gets one shared copy of it). */
export interface PairAnglesSpec {
  readonly slots: MachineColumnSlots;
  /** Machine i's Gram factor. */
  readonly factors: readonly StoredGramFactor[];
  /** The overlapping pairs (i, j), i < j, whose angle is computed, one after the other. */
  readonly pairs: Int32Array;
  /** The overlapping pairs whose row spaces intersect by a dimension count (theta_ij = 0 exactly, nothing computed). */
  readonly intersecting: Int32Array;
}

/** The pairs' angles of a system whose column slots are `slots`: the overlapping pairs and the machines' factors. */
export function pairAnglesSpec(system: CsrSystem, slots: MachineColumnSlots): PairAnglesSpec {
  const { computed, intersecting } = pairsByDimensionCount(slots);
  return { slots, factors: storedGramFactors(system), pairs: computed, intersecting };
}

/** The machines' factors of A_i A_i^T as a task's spec carries them (their symbolic analysis and values). */
export function storedGramFactors(system: CsrSystem): StoredGramFactor[] {
  return system.machines.map(({ gram: { symbolic, values } }): StoredGramFactor => ({ symbolic, values }));
}

/** A worker thread's context for its pairs, made at its first (a worker serves one analysis, then ends). */
let workerContext: { readonly spec: PairAnglesSpec; readonly context: PairAngleContext } | null = null;

/** Pair `q`'s angle on a worker thread (../parallel/taskWorker.ts): what the calling thread computes for it. */
export const runTask: TaskRunner = (spec, q) => {
  const pairs = spec as PairAnglesSpec;
  if (workerContext?.spec !== pairs)
    workerContext = { spec: pairs, context: new PairAngleContext(pairs.slots, machineGramSolves(pairs.factors)) };
  // The worker's backend is the plan's (../parallel/taskWorker.ts): its kernels compute what the calling thread's do.
  return runSync(csrPairAngleWork(selectedKernels(), workerContext.context, pairs.pairs[2 * q], pairs.pairs[2 * q + 1]));
};

export interface SparsePrincipalAngles {
  theta: number[][];
  thetaH: number;
  cosThetaH: number;
  thetaHPair: [number, number] | null;
  estimates: AngleEstimates;
}

const STRUCTURAL_RIGHT_ANGLE: SparsePairAngle = {
  theta: Math.PI / 2,
  cos: 0,
  method: 'structural',
  absoluteErrorBound: 0,
  iterations: 0,
  converged: true,
};

/** theta_ij = 0 exactly where a dimension count shows R(A_i) and R(A_j) share a direction (pairsByDimensionCount). */
const INTERSECTING_ROW_SPACES: SparsePairAngle = {
  theta: 0,
  cos: 1,
  method: 'dimension-count',
  absoluteErrorBound: 0,
  iterations: 0,
  converged: true,
};

/**
 * theta_ij for every pair: pi/2 where the supports are disjoint, Lanczos where they overlap; theta_H
 * and its pair chosen as on the dense path (the first pair in lexicographic order attaining the minimum).
 */
export function* sparsePrincipalAnglesWork(kernels: Kernels, spec: PairAnglesSpec, factors: GramFactorSolves): Work<SparsePrincipalAngles> {
  const { slots, pairs } = spec;
  const context = new PairAngleContext(slots, factors);
  const overlapping = pairs.length / 2;
  const angles = yield* runTasksWork({
    taskModule: import.meta.url,
    ...onKernels(kernels),
    tasks: overlapping,
    threads: threadsForAnalysisTasks(nnzOf(slots.a), overlapping),
    spec,
    runTask: (_, q) => csrPairAngleWork(kernels, context, pairs[2 * q], pairs[2 * q + 1]),
    progress: (done) => ({ phase: 'principal-angles', fraction: done / overlapping }),
  });
  return principalAnglesOfPairs(spec, angles);
}

/**
 * theta_ij of the spec's machines from its computed pairs' angles (`angles[q]` of pairs (pairs[2q], pairs[2q + 1])),
 * its intersecting pairs at 0 exactly, every other pair at pi/2.
 */
export function principalAnglesOfPairs(
  { slots, pairs, intersecting }: Pick<PairAnglesSpec, 'slots' | 'pairs' | 'intersecting'>,
  angles: readonly SparsePairAngle[],
): SparsePrincipalAngles {
  const m = slots.rowsOfMachine.length;
  const theta: number[][] = [];
  for (let i = 0; i < m; i++) theta.push(new Array<number>(m).fill(Math.PI / 2));
  for (let i = 0; i < m; i++) theta[i][i] = 0;
  const computed = new Map<number, SparsePairAngle>();
  for (let q = 0; q < intersecting.length; q += 2) {
    const i = intersecting[q];
    const j = intersecting[q + 1];
    theta[i][j] = theta[j][i] = 0;
    computed.set(i * m + j, INTERSECTING_ROW_SPACES);
  }
  const overlapping = pairs.length / 2;
  let maxBound = 0;
  let unconvergedPairs = 0;
  for (let q = 0; q < overlapping; q++) {
    const i = pairs[2 * q];
    const j = pairs[2 * q + 1];
    const angle = angles[q];
    theta[i][j] = theta[j][i] = angle.theta;
    computed.set(i * m + j, angle);
    maxBound = Math.max(maxBound, angle.absoluteErrorBound);
    if (!angle.converged) unconvergedPairs++;
  }
  let thetaH = Math.PI / 2;
  let thetaHPair: [number, number] | null = null;
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      if (thetaHPair === null || theta[i][j] < thetaH) {
        thetaH = theta[i][j];
        thetaHPair = [i, j];
      }
    }
  }
  const attained =
    thetaHPair === null ? STRUCTURAL_RIGHT_ANGLE : (computed.get(thetaHPair[0] * m + thetaHPair[1]) ?? STRUCTURAL_RIGHT_ANGLE);
  return {
    theta,
    thetaH,
    cosThetaH: attained.cos,
    thetaHPair,
    estimates: {
      thetaH: angleEstimateOf(attained),
      thetaMaxAbsoluteErrorBound: Number.isFinite(maxBound) ? maxBound : null,
      overlappingPairs: overlapping + intersecting.length / 2,
      intersectingPairs: intersecting.length / 2,
      unconvergedPairs,
    },
  };
}

/** What the S part of the sparse analysis reuses of the matrix' conditioning: the LU of A, its solves, the Krylov workspace. */
export interface SparseLuContext {
  readonly lu: SparseLuFactorization;
  readonly luSolves: LuSolves;
  readonly workspace: KrylovWorkspace;
}

/** The principal angles of the system's partition (every overlapping pair), as the analysis computes them. */
export function* sparseAnglesOfPartitionWork(kernels: Kernels, system: CsrSystem): Work<SparsePrincipalAngles> {
  const { A, partition } = system;
  yield { phase: 'principal-angles', fraction: 0 };
  const pairs = pairAnglesSpec(system, machineColumnSlots(A, partition.rowsOf));
  const factors = machineGramSolves(pairs.factors);
  try {
    return yield* inPhase(sparsePrincipalAnglesWork(kernels, pairs, factors), 'principal-angles', 0, 1);
  } finally {
    factors.release();
  }
}

/** S's ends of the system's partition through the LU of A, as the analysis computes them. */
export function* sparseSOfPartitionWork(
  kernels: Kernels,
  system: CsrSystem,
  context: SparseLuContext,
  /** lambda_min(S) of this partition already computed (sparseKappaSBoundsWork's): only lambda_max(S) is. */
  lambdaMinS?: SpectralEstimate,
): Work<SSpectrum> {
  const slots = machineColumnSlots(system.A, system.partition.rowsOf);
  const factors = machineGramSolves(system.machines.map((machine) => machine.gram));
  try {
    return yield* sSpectrumOfPartitionWork(kernels, system.A.rows, slots, factors, context, lambdaMinS);
  } finally {
    factors.release();
  }
}

/** Bounds on kappa(S): lower <= kappa(S) <= upper. */
export interface KappaSBounds {
  lower: number;
  /** null: lambda_min(S)'s run was stopped once `lower` sufficed (sparseKappaSBoundsWork's ruledOutWhen). */
  upper: number | null;
  /** Colours of the overlap graph's greedy colouring, lambda_max(S)'s upper bound (2: bipartite, lambda_max(S) = 2 - lambda_min(S)). */
  colours: number;
  /** lambda_min(S) as the analysis computes it (null: block-diagonal, S = I, or its run stopped early), for sparseSOfPartitionWork not to compute it again. */
  lambdaMinS: SpectralEstimate | null;
}

/**
 * kappa(S) bracketed without lambda_max(S)'s Lanczos run (the partition advisor's cheap pass): lambda_min(S) as the
 * analysis computes it (shift-invert through the LU of A: a few solve pairs), 1 <= lambda_max(S) (any vector of one
 * machine's row space has Rayleigh quotient >= 1) and lambda_max(S) <= the overlap graph's colours
 * (overlapColourCount), each end widened by lambda_min's error bound. Exact (lower = upper) when the overlap graph
 * is bipartite or empty.
 */
export function* sparseKappaSBoundsWork(
  kernels: Kernels,
  A: CsrMatrix,
  rowsOf: readonly Int32Array[],
  { lu, luSolves, workspace }: SparseLuContext,
  ruledOutWhen?: (kappaSAtLeast: number) => boolean,
): Work<KappaSBounds> {
  // The partition's rows alone: S^{-1} = A^{-1} Gb A^{-T} needs no machine's factor (./kappaS.ts inverseSOperator).
  const slots = machineColumnSlots(A, rowsOf);
  if (slots.blockDiagonal) return { lower: 1, upper: 1, colours: 1, lambdaMinS: null };
  const pairs = overlappingMachinePairs(slots);
  const colours = overlapTwoColouring(slots, pairs) === null ? overlapColourCount(slots, pairs) : 2;
  // A top Ritz value theta of S^{-1} is at most 1 / lambda_min(S), so kappa(S) >= theta (lambda_max(S) >= 1), or
  // >= 2 theta - 1 when bipartite (lambda_max(S) = 2 - lambda_min(S)). With `ruledOutWhen` the run stops once that lower
  // bound satisfies it: a partition far above the best (round-robin's at n = 10^6, native: 3 solve pairs of the LU of A,
  // 1.0 s, against 8 and 2.5 s to convergence).
  const lowerOf = (theta: number): number => (colours === 2 ? 2 * theta - 1 : theta);
  const abandonWhen = ruledOutWhen && ((theta: number) => ruledOutWhen(lowerOf(theta)));
  const lambdaMin = yield* lambdaMinSWork(slots, lu, { ...sOptionsOf(kernels, A.rows), abandonWhen }, workspace, luSolves);
  if (lambdaMin.abandoned) return { lower: lowerOf(1 / lambdaMin.value), upper: null, colours, lambdaMinS: null };
  const r = Math.min(lambdaMin.relativeErrorBound, 0.5);
  if (colours === 2) {
    const kappa = (2 - lambdaMin.value) / lambdaMin.value;
    return { lower: kappa * (1 - 2 * r), upper: kappa * (1 + 2 * r), colours, lambdaMinS: lambdaMin };
  }
  return { lower: 1 / (lambdaMin.value * (1 + r)), upper: colours / (lambdaMin.value * (1 - r)), colours, lambdaMinS: lambdaMin };
}

/** S's ends, as the analysis computes them, from the partition's column slots and the machines' factors. */
function sSpectrumOfPartitionWork(
  kernels: Kernels,
  n: number,
  slots: MachineColumnSlots,
  factors: GramFactorSolves,
  { lu, luSolves, workspace }: SparseLuContext,
  lambdaMinS?: SpectralEstimate,
): Work<SSpectrum> {
  return csrSSpectrumWork(slots, factors, { kind: 'lu', lu, luSolves, lambdaMinS }, sOptionsOf(kernels, n), workspace);
}

/** The options of S's Lanczos runs, the same for the bounds and the exact ends (so that lambda_min(S) of one serves the other). */
export function sOptionsOf(kernels: Kernels, n: number): LargestEigenvalueOptions {
  return { tolerance: SPECTRUM_TOLERANCE, basisSize: sBasisSize(n), ...eigensolverOptionsOf(kernels) };
}

/** The LU of A and what the S part needs of it, on the current thread. */
export function* sparseLuContextWork(A: CsrMatrix): Work<SparseLuContext> {
  const lu = yield* currentThreadSparseLuWork(A);
  return { lu, luSolves: currentThreadLuSolves(lu), workspace: new KrylovWorkspace() };
}

/**
 * The sparse analysis' conditioning first (the LU of A, L and mu, then S's ends: lambda_min(S) through
 * the same LU, lambda_max(S) by reflection or Lanczos), then in rest() the principal angles and the
 * local angles. The LU of A is not kept for the rest (it needs only the machines' factors and A), unless `keepLu`
 * takes it (../analysis/analyze.ts AnalyzeOptions.keepLu).
 */
export function* sparseStagedPartsWork(
  kernels: Kernels,
  system: CsrSystem,
  keepLu?: (context: SparseLuContext) => void,
): Work<StagedParts> {
  const { A, partition } = system;
  const workspace = new KrylovWorkspace();

  // One LU of A serves sigma_min(A) and lambda_min(S); a singular A fails here, before anything else.
  yield { phase: 'conditioning', fraction: 0 };
  const lu = yield* inPhase(currentThreadSparseLuWork(A), 'conditioning', 0, 0.15);
  const luSolves = currentThreadLuSolves(lu);
  const matrix = yield* inPhase(
    sparseMatrixConditioningWork(A, {
      factorization: lu,
      luSolves,
      normalOperator: currentThreadNormalOperator(A),
      workspace,
      lanczos: { tolerance: SPECTRUM_TOLERANCE, ...eigensolverOptionsOf(kernels) },
    }),
    'conditioning',
    0.15,
    0.5,
  );

  const slots = machineColumnSlots(A, partition.rowsOf);
  const pairs = pairAnglesSpec(system, slots);
  const factors = machineGramSolves(pairs.factors);
  yield { phase: 'conditioning', fraction: 0.5 };
  const context: SparseLuContext = { lu, luSolves, workspace };
  const s = yield* inPhase(sSpectrumOfPartitionWork(kernels, A.rows, slots, factors, context), 'conditioning', 0.5, 1);
  keepLu?.(context);
  return sparseStagedParts(kernels, system, pairs, factors, s, matrix);
}

/**
 * The staged parts of a sparse analysis (square or tall, ./tallSparseAnalysis.ts) from its spectral
 * estimates; rest() computes the principal angles on the pairs' operators and the local angles on A's rows.
 */
export function sparseStagedParts(
  kernels: Kernels,
  system: CsrSystem,
  pairs: PairAnglesSpec,
  factors: GramFactorSolves,
  s: SSpectrum,
  matrix: { readonly L: SpectralEstimate; readonly mu: SpectralEstimate; readonly kappaAtA: SpectralEstimate },
): StagedParts {
  const { A, partition } = system;
  const conditioning: Conditioning = {
    kappaS: s.kappaS.value,
    lambdaMinS: s.lambdaMinS.value,
    lambdaMaxS: s.lambdaMaxS.value,
    kappaAtA: matrix.kappaAtA.value,
    L: matrix.L.value,
    mu: matrix.mu.value,
    estimates: {
      kappaS: estimateOf(s.kappaS),
      lambdaMinS: estimateOf(s.lambdaMinS),
      lambdaMaxS: estimateOf(s.lambdaMaxS),
      kappaAtA: estimateOf(matrix.kappaAtA),
      L: estimateOf(matrix.L),
      mu: estimateOf(matrix.mu),
    },
  };

  function* rest(): Work<AnalysisParts> {
    yield { phase: 'principal-angles', fraction: 0 };
    const angles = yield* inPhase(sparsePrincipalAnglesWork(kernels, pairs, factors), 'principal-angles', 0, 1);

    yield { phase: 'local-angles', fraction: 0 };
    // A tall A: phi_i only (./localAngles.ts LocalAnglesScope), not Theorem 4's bound, which does not hold for it.
    const scope = A.rows > A.cols ? 'machine-rows' : 'all-rows';
    const local = yield* inPhase(localAnglesOfCsrWork(A, partition, scope), 'local-angles', 0, 1);

    return { heterogeneity: heterogeneityOf(angles, local), conditioning, theorem4KappaALowerBound: local.theorem4KappaALowerBound };
  }
  return { conditioning, rest };
}
