/**
 * The analysis of a partitioned system: every heterogeneity
 * metric, both condition numbers, each algorithm's optimal parameters and rate, the paper's bounds
 * and the APC / D-HBM recommendation, assembled into the public `Analysis`.
 *
 * Two stages (spectralStageWork, then its rest()): first the spectral data every optimal parameter
 * and rate is a function of (what a run needs before its first iteration), then the rest, reusing
 * what the first stage computed. analyzeWork is the two one after the other.
 * Order of the work on dense storage (each phase reports its own fraction; the CSR path of
 * ./sparseAnalysis.ts reports the same phases without 'gram-blocks'):
 *  1. 'conditioning': kappa(A^T A) first, so a singular matrix fails before anything else is spent;
 *  2. 'gram-blocks': G_ij = Q_i^T Q_j once;
 *  3. 'conditioning': kappa(S) from the same blocks (lambda_max) and the LU of Q (lambda_min);
 *     the spectral data is complete here;
 *  4. 'principal-angles': theta_ij from the kept blocks;
 *  5. 'local-angles': phi_i, theta_min^(l), row norms (Theorem 4).
 */
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../algorithms/registry.js';
import type { SpectralData } from '../algorithms/types.js';
import { doneWork, runSync, type Work } from '../cooperative.js';
import { rowSpaceSystem, type DenseSystem, type DistributedSystem } from '../distributed/distributedSystem.js';
import type { CsrSystem } from '../distributed/sparseSystem.js';
import { isTall, leastSquaresPointsWork, sparseLeastSquaresPointsWork, type LeastSquaresPoints } from '../distributed/leastSquares.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import type { Partition } from '../problem.js';
import { computeBounds } from './bounds.js';
import { inverseLargestWork, matrixConditioningWork, type FactoredMatrix, type MatrixConditioning } from './conditioning.js';
import { basisFactoredMatrixWork, sConditioningWork, type DenseSSource, type SConditioning, type SEndVectors } from './kappaS.js';
import { anglesOnThreadsWork, denseAnalysisThreads, sharedAnalysisSystem, spectralOnThreadsWork } from './denseAnalysisTasks.js';
import { gramBlocksWork, gramIsIdentity, type RowGram } from './gramBlocks.js';
import { localAnglesWork, type LocalAngles } from './localAngles.js';
import { principalAnglesWork, thetaHFromRowGramWork, thetaHWork, type PrincipalAngles } from './principalAngles.js';
import { recommend } from './recommendation.js';
import { heterogeneityOf, inPhase, type AnalysisParts, type StagedParts } from './parts.js';
import {
  sparseAnglesOfPartitionWork,
  sparseLuContextWork,
  sparseSOfPartitionWork,
  sparseStagedPartsWork,
  type SparseLuContext,
} from './sparseAnalysis.js';
import { sparseAnalysisThreads, sparseStagedPartsOnThreadsWork } from './sparseAnalysisTasks.js';
import { tallSparseKappaSWork, tallSparseStagedPartsWork, tallSparseThetaHWork } from './tallSparseAnalysis.js';
import type { AlgorithmTuning, Analysis, Conditioning, Consistency, TallBounds } from './types.js';

export interface AnalyzeOptions {
  /** Error reduction factor for the predicted iteration counts (default 1e-8). */
  tolerance?: number;
  /** What the numerics run on (default: the selected backend's, ../linalg/kernels.ts). */
  kernels?: Kernels;
  /**
   * Receives the LU of A (with its solves) when a sparse analysis of a square A made it on the calling thread, for a
   * caller that factors A again after the analysis (the partition advisor, AdviseOptions.takeLu): without it the analysis
   * lets the LU go once S's ends are computed. Not called on a tall A (no LU) or when a solver thread made the LU.
   */
  keepLu?: (context: SparseLuContext) => void;
  /**
   * Receives a square dense A as the analysis factored it, A = D M (./conditioning.ts FactoredMatrix: the LU of the
   * machines' Q^T and their R_i), for the partition advisor, whose candidates' lambda_min(S) go through it
   * (AdviseOptions.takeFactored). Not called on a tall A or when the analysis ran on solver threads (the LU is a worker's).
   */
  keepFactored?: (factored: FactoredMatrix) => void;
}

export const DEFAULT_ANALYSIS_TOLERANCE = 1e-8;

/**
 * The analysis of a system on either storage: the choice is made here, by the system's type
 * (dense: Gram blocks, QR bases and LU; CSR: Krylov estimates on sparse operators, ./sparseAnalysis.ts).
 */
export function* analyzeWork(system: DistributedSystem, options: AnalyzeOptions = {}): Work<Analysis> {
  const staged = yield* spectralStageWork(system, options, true);
  return yield* staged.rest();
}

/**
 * The first stage of an analysis: the spectral data (L, mu, lambda_min(S), lambda_max(S)), and the
 * rest of the analysis to compute when wanted. rest() (call it once) reuses what the first stage
 * computed (the Gram blocks, the conditioning with its estimates; the sparse LU of A is not kept)
 * and returns what analyzeWork returns, value for value.
 */
export interface StagedAnalysis {
  readonly spectral: SpectralData;
  rest(): Work<Analysis>;
}

/**
 * `whole`: rest() follows at once (analyzeWork), so a sparse analysis on threads may compute the
 * principal angles beside its spectral data (./sparseAnalysisTasks.ts) and rest() only the local angles.
 */
export function* spectralStageWork(system: DistributedSystem, options: AnalyzeOptions = {}, whole = false): Work<StagedAnalysis> {
  const tolerance = options.tolerance ?? DEFAULT_ANALYSIS_TOLERANCE;
  const kernels = options.kernels ?? selectedKernels();
  if (isTall(system)) return yield* tallSpectralStageWork(kernels, system, tolerance);
  const staged =
    system.storage === 'csr'
      ? yield* csrStagedPartsWork(kernels, system, whole, options.keepLu)
      : yield* denseStagedPartsWork(kernels, system, options.keepFactored);
  return {
    spectral: spectralDataFrom(system.partition.m, staged.conditioning),
    *rest() {
      const parts = yield* staged.rest();
      yield { phase: 'analysis', fraction: 1 };
      return assembleAnalysis(system.n, system.partition, parts, tolerance);
    },
  };
}

/**
 * A tall system (N > n): on dense storage the dense analysis on each machine's basis of its row space,
 * on CSR storage the sparse one (./tallSparseAnalysis.ts, nothing N x n dense); then its consistency,
 * the machines' ranks, which bounds still hold (Bounds.tall) and, when the projection methods reach
 * another point than x_LS, by how much.
 */
function* tallSpectralStageWork(kernels: Kernels, system: DistributedSystem, tolerance: number): Work<StagedAnalysis> {
  if (system.storage === 'csr') {
    const { staged, normal } = yield* tallSparseStagedPartsWork(kernels, system);
    return {
      spectral: spectralDataFrom(system.partition.m, staged.conditioning),
      rest: () => tallRestWork(system, staged, sparseLeastSquaresPointsWork(system, normal), tolerance),
    };
  }
  const staged = yield* denseStagedPartsWork(kernels, system);
  return {
    spectral: spectralDataFrom(system.partition.m, staged.conditioning),
    rest: () => tallRestWork(system, staged, leastSquaresPointsWork(system, kernels), tolerance),
  };
}

function* tallRestWork(
  system: DistributedSystem,
  staged: StagedParts,
  pointsWork: Work<LeastSquaresPoints>,
  tolerance: number,
): Work<Analysis> {
  const parts = yield* staged.rest();
  const points = yield* pointsWork;
  yield { phase: 'analysis', fraction: 1 };
  const analysis = assembleAnalysis(system.n, system.partition, parts, tolerance, true);
  const consistency: Consistency = {
    consistent: points.consistent,
    leastSquaresResidual: points.leastSquaresResidual,
    weightedResidual: points.weightedResidual,
    weightedDistance: points.weightedDistance,
  };
  analysis.bounds.tall = TALL_BOUNDS;
  // Theorem 4 does not bound a tall A's kappa(A) (rows e1, e1, e2, e2: kappa(A) = 1, the bound infinite): not reported.
  analysis.bounds.theorem4KappaALowerBound = null;
  if (!points.consistent) {
    const note =
      `The system is inconsistent (|A x_LS - b| / |b| = ${points.leastSquaresResidual.toPrecision(3)}): DGD, D-NAG and D-HBM converge ` +
      `to the least-squares solution x_LS, APC, block Cimmino and MLM to the block-weighted solution x_W ` +
      `(|A x_W - b| / |b| = ${points.weightedResidual.toPrecision(3)}), which differs from x_LS by ` +
      `|x_W - x_LS| / |x_LS| = ${points.weightedDistance.toPrecision(3)}. If x_LS is what is wanted, the projection methods answer another question.`;
    analysis.recommendation.leastSquaresNote = note;
    analysis.recommendation.explanation = `${analysis.recommendation.explanation} ${note}`;
  }
  return {
    ...analysis,
    rows: system.A.rows,
    machineRanks: system.machines.map((machine) => machine.rank),
    consistency,
  };
}

const TALL_BOUNDS: TallBounds = {
  proposition1: true,
  proposition2: false,
  theorem2: false,
  theorem3: true,
  theorem4: false,
  table1: false,
  note:
    'A is tall (N > n): the paper proves its bounds for N = n. Proposition 1 and Theorem 3 still hold (on the bases of the ' +
    "machines' row spaces); Proposition 2, Theorem 2, Theorem 4 with its consequences and Corollary 1, and Table 1's bounds " +
    'built on them are not guaranteed (ash608 on 4 machines: theta_H = 0 yet kappa(S) = 2).',
};

export function analyze(system: DistributedSystem, options: AnalyzeOptions = {}): Analysis {
  return runSync(analyzeWork(system, options));
}

/** The sparse analysis' parts on the solver threads when the matrix is large enough (./sparseAnalysisTasks.ts), else on this one. */
function* csrStagedPartsWork(kernels: Kernels, system: CsrSystem, whole: boolean, keepLu: AnalyzeOptions['keepLu']): Work<StagedParts> {
  const threads = sparseAnalysisThreads(system);
  return threads > 1
    ? yield* sparseStagedPartsOnThreadsWork(kernels, system, threads, whole, keepLu)
    : yield* sparseStagedPartsWork(kernels, system, keepLu);
}

/** The dense analysis' conditioning first (kappa(A^T A), the Gram blocks, kappa(S)); the blocks kept for the angles. */
function* denseStagedPartsWork(kernels: Kernels, system: DenseSystem, keepFactored?: AnalyzeOptions['keepFactored']): Work<StagedParts> {
  const { partition } = system;

  const threads = denseAnalysisThreads(kernels, system);
  if (threads > 1) return yield* denseStagedPartsOnThreadsWork(kernels, system, threads);

  yield { phase: 'conditioning', fraction: 0 };
  const rowSpace = rowSpaceSystem(system);
  // A square A = D M: kappa(A^T A) through the LU of M = Q^T, which lambda_min(S) reads too (./conditioning.ts).
  const factored = system.A.rows === system.n ? yield* basisFactoredMatrixWork(kernels, rowSpace) : undefined;
  if (factored !== undefined) keepFactored?.(factored);
  const matrix = yield* inPhase(matrixConditioningWork(kernels, system.A, factored), 'conditioning', 0, 0.5);

  yield { phase: 'gram-blocks', fraction: 0 };
  const gram = yield* inPhase(gramBlocksWork(kernels, rowSpace.machines), 'gram-blocks', 0, 1);
  yield { phase: 'conditioning', fraction: 0.5 };
  const source: DenseSSource =
    factored === undefined
      ? { system: rowSpace, gram }
      : { gram, n: system.n, inverse: gramIsIdentity(gram) ? null : yield* inverseLargestWork(kernels, factored.basisLu) };
  const s = yield* inPhase(sConditioningWork(kernels, source), 'conditioning', 0.5, 1);

  function* rest(): Work<AnalysisParts> {
    yield { phase: 'principal-angles', fraction: 0 };
    const angles = yield* inPhase(principalAnglesWork(kernels, rowSpace.machines, gram), 'principal-angles', 0, 1);
    yield { phase: 'local-angles', fraction: 0 };
    const local = yield* inPhase(localAnglesWork(kernels, system.A, partition), 'local-angles', 0, 1);
    return denseAnalysisParts(angles, local, matrix, s);
  }
  return { conditioning: denseConditioning(matrix, s), rest };
}

/**
 * denseStagedPartsWork on `threads` threads (./denseAnalysisTasks.ts): the LUs of A and of Q^T side by side
 * with the Gram blocks, then the pairs' angles and the local angles' scan; the same values, in the same phases.
 */
function* denseStagedPartsOnThreadsWork(kernels: Kernels, system: DenseSystem, threads: number): Work<StagedParts> {
  const shared = sharedAnalysisSystem(rowSpaceSystem(system));
  yield { phase: 'conditioning', fraction: 0 };
  const { matrix, inverse, gram } = yield* inPhase(spectralOnThreadsWork(kernels, shared, threads), 'conditioning', 0, 0.5);
  yield { phase: 'gram-blocks', fraction: 1 };
  yield { phase: 'conditioning', fraction: 0.5 };
  const s = yield* inPhase(sConditioningWork(kernels, { gram, n: system.n, inverse }), 'conditioning', 0.5, 1);

  function* rest(): Work<AnalysisParts> {
    yield { phase: 'principal-angles', fraction: 0 };
    const { angles, local } = yield* anglesOnThreadsWork(kernels, shared, gram, threads);
    yield { phase: 'local-angles', fraction: 1 };
    return denseAnalysisParts(angles, local, matrix, s);
  }
  return { conditioning: denseConditioning(matrix, s), rest };
}

/** kappa(S) and theta_H of a partition, the values the analysis of that partition reports. */
export interface PartitionSpectrum {
  kappaS: number;
  thetaH: number;
}

/**
 * kappa(S) of the system's partition as analyzeWork computes it, without the rest of the analysis: for the partition
 * advisor (../partitioning/advisor.ts), which ranks candidates by it. On dense storage lambda_max(S) comes from Lanczos
 * through the machines' bases instead of the Gram blocks, and, given `factored` (a square A as another partition of it
 * factored it, A = D M; a tall A has none and does not read it), lambda_min(S) through that factorization instead of
 * the LU of this partition's Q^T, both runs started from `startVectors` when given (the same values to the Lanczos
 * runs' accuracy, ./kappaS.ts). On CSR storage `lu` is the LU of A. Both are shared by the candidates (A does not
 * change with the partition).
 */
export function* partitionKappaSWork(
  kernels: Kernels,
  system: DistributedSystem,
  shared: { lu?: SparseLuContext; factored?: FactoredMatrix; startVectors?: SEndVectors } = {},
): Work<number> {
  const { lu, factored, startVectors } = shared;
  if (system.storage === 'csr') {
    if (isTall(system)) return yield* tallSparseKappaSWork(kernels, system);
    const context = lu ?? (yield* sparseLuContextWork(system.A));
    yield { phase: 'conditioning', fraction: 0 };
    return (yield* inPhase(sparseSOfPartitionWork(kernels, system, context), 'conditioning', 0, 1)).kappaS.value;
  }
  // Through the machines' bases, without the Gram blocks the analysis builds for its angles (./kappaS.ts).
  yield { phase: 'conditioning', fraction: 0 };
  return (yield* inPhase(sConditioningWork(kernels, { bases: rowSpaceSystem(system), factored, startVectors }), 'conditioning', 0, 1))
    .kappaS;
}

/**
 * theta_H of the system's partition, the value analyzeWork reports (for the partition advisor's given and best
 * candidates): on CSR storage every overlapping pair's angle, on dense storage every pair's cosine and the accurate
 * angle of the pairs nearest parallel only (./principalAngles.ts thetaHWork); given the rows' Gram matrix (a square
 * dense A's), most cosines from it (thetaHFromRowGramWork), the same value.
 */
export function* partitionThetaHWork(kernels: Kernels, system: DistributedSystem, rowGram?: RowGram): Work<number> {
  if (system.storage === 'csr') {
    if (isTall(system)) return yield* tallSparseThetaHWork(kernels, system);
    return (yield* sparseAnglesOfPartitionWork(kernels, system)).thetaH;
  }
  const { machines } = rowSpaceSystem(system);
  if (rowGram !== undefined && rowGram.rows === system.A.rows && !isTall(system)) {
    yield { phase: 'principal-angles', fraction: 0 };
    const thetaH = yield* inPhase(
      thetaHFromRowGramWork(kernels, machines, rowGram, (i) => doneWork(machines[i])),
      'principal-angles',
      0,
      1,
    );
    if (thetaH !== null) return thetaH;
  }
  yield { phase: 'gram-blocks', fraction: 0 };
  const gram = yield* inPhase(gramBlocksWork(kernels, machines), 'gram-blocks', 0, 1);
  yield { phase: 'principal-angles', fraction: 0 };
  return yield* inPhase(thetaHWork(kernels, machines, gram), 'principal-angles', 0, 1);
}

/** The dense analysis' parts from its four computations (also combined by ./splitAnalysis.ts). */
export function denseAnalysisParts(
  angles: PrincipalAngles,
  local: LocalAngles,
  matrix: MatrixConditioning,
  s: SConditioning,
): AnalysisParts {
  return {
    heterogeneity: heterogeneityOf(angles, local),
    conditioning: denseConditioning(matrix, s),
    theorem4KappaALowerBound: local.theorem4KappaALowerBound,
  };
}

function denseConditioning(matrix: MatrixConditioning, s: SConditioning): Conditioning {
  return { kappaS: s.kappaS, lambdaMinS: s.lambdaMinS, lambdaMaxS: s.lambdaMaxS, kappaAtA: matrix.kappaAtA, L: matrix.L, mu: matrix.mu };
}

/**
 * The tail both storages share: each algorithm's optimal parameters and rate from the spectral
 * data, the paper's bounds and the recommendation.
 */
export function assembleAnalysis(n: number, partition: Partition, parts: AnalysisParts, tolerance: number, tall = false): Analysis {
  const { heterogeneity, conditioning, theorem4KappaALowerBound } = parts;
  const m = partition.m;
  const spectral = spectralDataFrom(m, conditioning);
  const rates = {} as Record<AlgorithmId, AlgorithmTuning>;
  for (const id of ALGORITHM_IDS) {
    const { rate, gap, parameters } = algorithms[id].optimal(spectral);
    rates[id] = { rate, gap, parameters: { ...parameters } };
  }
  const blockSizes = [...partition.sizes];
  const bounds = computeBounds({ n, m, blockSizes, heterogeneity, theorem4KappaALowerBound });
  const recommendation = recommend({ m, heterogeneity, conditioning, rates, tolerance, tall });
  return { n, m, blockSizes, heterogeneity, conditioning, rates, bounds, recommendation };
}

function spectralDataFrom(m: number, c: Conditioning): SpectralData {
  return { m, lambdaMinS: c.lambdaMinS, lambdaMaxS: c.lambdaMaxS, mu: c.mu, L: c.L };
}

/** The spectral quantities every optimal parameter and rate is a function of. */
export function spectralDataOf(analysis: Analysis): SpectralData {
  return spectralDataFrom(analysis.m, analysis.conditioning);
}
