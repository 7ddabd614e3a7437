/**
 * The result of the analysis of a partitioned system. Field names are the public contract
 * (`Analysis` in docs/API.md; src/api/schemas/analysis.ts is checked against these types at compile
 * time); the fixtures in test/reference/ use the same names.
 * All angles are in radians, indices 0-based.
 */
import type { AlgorithmId } from '../algorithms/registry.js';
import type { Parameters, RateBounds } from '../algorithms/types.js';

export interface Heterogeneity {
  /** Cross-machine angular heterogeneity theta_H = min_{i<j} theta_ij (pi/2 when m = 1). */
  thetaH: number;
  cosThetaH: number;
  /** The pair (i, j), i < j, attaining theta_H; null when m = 1. */
  thetaHPair: [number, number] | null;
  /** theta[i][j] = smallest principal angle between R(A_i) and R(A_j); 0 on the diagonal. */
  theta: number[][];
  /** phi[i] = smallest angle between two rows of A_i (null when p_i = 1). */
  phi: (number | null)[];
  /** min of the defined phi_i (null when none is defined). */
  phiMin: number | null;
  /** max_k |a_k| / min_k |a_k|. */
  rowNormRatio: number;
  /** How the principal angles were obtained: present on the sparse path (iterative), absent on the dense one. */
  estimates?: AngleEstimates;
}

/** How an iterative value was obtained (the sparse path, src/solvers/eigen/lanczos.ts). */
export const ESTIMATE_METHODS = [
  'lanczos',
  'lanczos-shift-invert',
  'lanczos-exhaustive',
  'ratio',
  'structural',
  'bipartite-reflection',
  'coupling-block',
  'dimension-count',
  'dense-bases',
] as const;
export type EstimateMethod = (typeof ESTIMATE_METHODS)[number];

export interface Estimate {
  method: EstimateMethod;
  /** |value - exact| <= relativeErrorBound |exact| from the Krylov residuals; null when no finite bound is known. */
  relativeErrorBound: number | null;
  /** Operator applications (both runs for a ratio). */
  iterations: number;
  /** The bound met the requested tolerance. */
  converged: boolean;
}

export interface AngleEstimate {
  method: EstimateMethod;
  /** |theta - exact| <= absoluteErrorBound (radians), from the Krylov residual; null when no finite bound is known. */
  absoluteErrorBound: number | null;
  iterations: number;
  converged: boolean;
}

export interface AngleEstimates {
  /** theta_H (the pair thetaHPair): 'structural' when its machines share no column (theta = pi/2 exactly). */
  thetaH: AngleEstimate;
  /** Largest absoluteErrorBound over all pairs of the theta matrix (0 when no supports overlap). */
  thetaMaxAbsoluteErrorBound: number | null;
  /** Pairs i < j whose column supports overlap (the others are pi/2 exactly, with no computation). */
  overlappingPairs: number;
  /**
   * Of those, the pairs whose ranks add up to more than the columns they touch: their row spaces intersect, theta_ij = 0
   * exactly, with no computation (a tall system's machines holding more samples than features).
   */
  intersectingPairs: number;
  /** Pairs whose iteration did not meet its tolerance. */
  unconvergedPairs: number;
}

export interface ConditioningEstimates {
  kappaS: Estimate;
  lambdaMinS: Estimate;
  lambdaMaxS: Estimate;
  kappaAtA: Estimate;
  L: Estimate;
  mu: Estimate;
}

export interface Conditioning {
  kappaS: number;
  lambdaMinS: number;
  lambdaMaxS: number;
  kappaAtA: number;
  /** sigma_max(A)^2 = lambda_max(A^T A). */
  L: number;
  /** sigma_min(A)^2 = lambda_min(A^T A). */
  mu: number;
  /** How each value was obtained and its error bound: present on the sparse path (iterative), absent on the dense one. */
  estimates?: ConditioningEstimates;
}

export interface AlgorithmTuning {
  rate: number;
  /** 1 - rate without cancellation (../algorithms/types.ts OptimalTuning): below 1 where the rate rounds to 1. */
  gap: number;
  parameters: Parameters;
}

export interface Bounds {
  /** Proposition 1: theta_H = pi/2 (total orthogonality) implies S = I, kappa(S) = 1, rho_APC = 0. */
  proposition1: { hypothesisHolds: boolean };
  /** Proposition 2: kappa(S) >= 1 / sin^2(theta_H); null when theta_H = 0 (row spaces that intersect: only on a tall system). */
  proposition2KappaSLowerBound: number | null;
  /** Theorem 2 (independent of m), best over the machines' p; null when its hypothesis fails for every p. */
  theorem2KappaSUpperBound: number | null;
  theorem2: { hypothesisHolds: boolean; p: number | null };
  /** Theorem 3 (independent of n): (1 + c) / (1 - c) with c = (m - 1) cos(theta_H); null when c >= 1. */
  theorem3KappaSUpperBound: number | null;
  theorem3: { hypothesisHolds: boolean; c: number };
  /**
   * Theorem 4: kappa(A) >= max_k |a_k| / min_l (|a_l| sin theta_min^(l)); null when a row lies in the span of
   * the other machines' rows (sin theta = 0: infinite, A singular when square; Theorem 4 assumes N = n).
   */
  theorem4KappaALowerBound: number | null;
  /** Consequences of Theorem 4 for kappa(A^T A): 1 / sin^2(phi_min) (null without phi_min) and ratio^2. */
  theorem4KappaAtALowerBounds: { phiMin: number | null; rowNormRatio: number };
  /** Table 1: bounds on each algorithm's optimal rate. */
  table1: Partial<Record<AlgorithmId, RateBounds>>;
  /** Present for a tall system (N > n): which bounds still hold there, the paper's proofs taking N = n. */
  tall?: TallBounds;
}

/**
 * Which of the paper's bounds hold on a tall system (N > n, full column rank, the bases Q_i of the
 * machines' row spaces). true: the proof carries over; false: it does not, and tall systems break it.
 */
export interface TallBounds {
  /** theta_H = pi/2 still gives S = I: the row spaces are orthogonal and span R^n. */
  proposition1: boolean;
  /** kappa(S) >= 1 / sin^2(theta_H) fails: row spaces of tall blocks may intersect (theta_H = 0) with kappa(S) finite. */
  proposition2: boolean;
  /** Its counting of dimensions (n - p) takes sum_i p_i = n. */
  theorem2: boolean;
  /** Gershgorin on Q^T Q: c < 1 forces sum_i rank_i = n, and kappa(S) <= (1 + c) / (1 - c) holds. */
  theorem3: boolean;
  /** kappa(A) >= ... uses that A^T has no null space; a tall A^T has one, so Theorem 4, its consequences and Corollary 1 fail. */
  theorem4: boolean;
  /** Table 1's bounds rest on Proposition 2 and Theorem 4 (lower bounds) and Theorem 3 (APC's upper bound): only the Theorem 3 ones hold. */
  table1: boolean;
  note: string;
}

/** A tall system's consistency (absent for a square one, whose unique solution every algorithm reaches). */
export interface Consistency {
  /** |A x_LS - b| / |b| <= 1e-10 (CONSISTENCY_TOLERANCE). */
  consistent: boolean;
  /** |A x_LS - b| / |b|, x_LS = argmin |A x - b|: where DGD, D-NAG and D-HBM converge. */
  leastSquaresResidual: number;
  /** |A x_W - b| / |b|, x_W the block-weighted solution: where APC, block Cimmino and MLM converge. */
  weightedResidual: number;
  /** |x_W - x_LS| / |x_LS| (0 to rounding for a consistent system). */
  weightedDistance: number;
}

export interface SufficientCondition {
  /** Corollary 1 applies when (m - 1) cos(theta_H) < 1 and phi_min is defined. */
  applicable: boolean;
  /** sin^2(phi_min) < (1 - c) / (1 + c): a certificate that APC is faster. False when not applicable. */
  holds: boolean;
  /** sin^2(phi_min), null when phi_min is undefined. */
  lhs: number | null;
  /** (1 - c) / (1 + c), null when c >= 1. */
  rhs: number | null;
}

/** Time to solution (./timeToSolution.ts): kernel throughputs measured on the backend a job runs on (./calibration.ts measureCalibration). */
export interface Calibration {
  backend: 'typescript' | 'native';
  /** The dense row kernels' fused pass (dot + axpy per entry) on a block larger than the last-level cache, flops per second. */
  flopsPerSecond: number;
  /** The same pass on a block that stays in the last-level cache (inCacheBytes), flops per second. */
  flopsPerSecondInCache: number;
  /** The dense product passes apart (X v, then the combination X^T w: Cimmino's A_i x and Q_i w), 2 flops an entry each, out of cache, flops per second. */
  productFlopsPerSecond: number;
  /** The same passes on a block of inCacheBytes, flops per second. */
  productFlopsPerSecondInCache: number;
  /** One entry of a pass over a machine's triangle R (the solve R^{-T} r, the combination R^T w; p (p + 1) / 2 entries each), seconds. */
  triangleEntrySeconds: number;
  /** The CSR gradient pass out of cache, bytes of the matrix (12 per stored entry) per second. */
  bytesPerSecond: number;
  /** The same pass on a matrix of inCacheBytes, bytes per second. */
  bytesPerSecondInCache: number;
  /**
   * The CSR projections' plain loops over A_i (A_i v, then A_i^T y: ./csrMachine.ts, TypeScript on every backend)
   * out of cache, bytes of the matrix (12 per stored entry, each loop) per second.
   */
  csrLoopBytesPerSecond: number;
  csrLoopBytesPerSecondInCache: number;
  /**
   * Solves with a Gram factor L_i (forward then backward sweep) by the kernel the machines use (the addon's on the
   * native backend, the TypeScript loops otherwise) out of cache, bytes of the factor (12 per entry, each sweep) per second.
   */
  factorBytesPerSecond: number;
  factorBytesPerSecondInCache: number;
  /** What each column of a factor costs a sweep beyond its entries' bytes (its loop's start, the diagonal), seconds. */
  factorColumnSeconds: number;
  /** Size of the in-cache blocks; the out-of-cache ones are outOfCacheBytes. A working set between the two is priced in between. */
  inCacheBytes: number;
  outOfCacheBytes: number;
  /** A plain loop over n-long vectors (timed: D-HBM's update, 40 bytes an entry; priced: the taskmaster's sums and updates, gathers), bytes per second. */
  vectorBytesPerSecond: number;
  /**
   * The gradient methods' step (the chunks' terms summed, x and its momentum updated: ../machines/gradientPass.ts advance)
   * as the backend runs it, bytes per second (16 an entry of a term, 40 an entry of x): the addon's on the native backend,
   * the WebAssembly one on the TypeScript backend, the TypeScript loops where WebAssembly is off.
   */
  stepBytesPerSecond: number;
  /** One entry of the CSR consensus taskmaster's measure-and-advance loop (a compensated sum and an offset's step), seconds. */
  consensusEntrySeconds: number;
  /** Fixed cost of one chunk's pass (a kernel call on a tiny block, averaged over many), seconds. */
  perMachineOverheadSeconds: number;
  /** A threaded run's start: its worker threads started, the data copied into shared memory (the last such start in this process, else a default). */
  threadStartSeconds: number;
  /** One phase's hand-over to the worker threads and barrier, per iteration of a threaded run (the last threaded run's in this process, else a default). */
  phaseSyncSeconds: number;
  /**
   * How much longer a threaded phase's chunks take side by side on the run's threads than one after another on one, for
   * runs on dense and on CSR machines (../parallel/engine.ts lastThreadSlowdown): the last measured in this process,
   * else 1.
   */
  threadSlowdown: { dense: number; csr: number };
  /** The runner's own work per iteration: the residual and consensus measures, the trace, the stopping tests (a documented constant, used where `overheads` is null). */
  runnerIterationSeconds: number;
  /**
   * Each algorithm's fixed costs per iteration beyond what the kernels' rates price, on each storage: what its
   * method and the runner do per iteration and per machine (calls, gathers, measures, the trace), measured on
   * tiny systems (measureOverheads); null when not measured.
   */
  overheads: IterationOverheads | null;
  /** When measured (ISO 8601); measured once per worker process and refreshed after refreshAfterSeconds or on a backend change. */
  measuredAt: string;
  refreshAfterSeconds: number;
}

/** Fixed seconds of an iteration: `perIteration + perMachine m` on a system of m machines. */
export interface FixedCost {
  perIteration: number;
  perMachine: number;
}

export type IterationOverheads = Record<AlgorithmId, { dense: FixedCost; csr: FixedCost }>;

/** A deployment described by the user: machines and their links. */
export interface Deployment {
  machineGflops: number;
  memoryBandwidthGBs: number;
  latencyMicroseconds: number;
  bandwidthGBs: number;
}

export interface AlgorithmTime {
  /** ceil(ln tol / ln rho) at the optimal rate; null when rho >= 1. */
  iterations: number | null;
  secondsPerIteration: number;
  /** The run's start before its first iteration (worker threads, the setup's first pass); 0 on a deployment. */
  startSeconds: number;
  /** startSeconds + iterations x secondsPerIteration; null when iterations is. */
  seconds: number | null;
  bytesPerIteration: number;
  messagesPerIteration: number;
}

export type AlgorithmTimes = Record<AlgorithmId, AlgorithmTime>;

export interface DeploymentTimes extends AlgorithmTimes {
  assumptions: Deployment;
}

export interface TimeToSolution extends AlgorithmTimes {
  calibration: Calibration;
  /** Present when the job described a deployment (options.deployment). */
  deployment?: DeploymentTimes;
}

/** APC or D-HBM by predicted seconds, here and on the deployment, and why that can differ from the rates. */
export interface FinishesFirst {
  here: 'apc' | 'dhbm';
  /** null when no deployment was described. */
  deployment: 'apc' | 'dhbm' | null;
  explanation: string;
}

export interface Recommendation {
  algorithm: 'apc' | 'dhbm';
  sufficientCondition: SufficientCondition;
  exact: {
    apcRate: number;
    dhbmRate: number;
    kappaS: number;
    kappaAtA: number;
    faster: 'apc' | 'dhbm';
    /** kappa(S) and kappa(A^T A) agree to rounding: the rates are equal (then D-HBM, the cheaper iteration, is named). */
    tie: boolean;
  };
  /** Predicted iterations to reduce the error by `tolerance`: ceil(ln(tol) / ln(rho)); null when rho >= 1. */
  predictedIterations: Partial<Record<AlgorithmId, number | null>>;
  tolerance: number;
  regime: string;
  regimeThresholds: { thetaH: number; phiMin: number };
  /** eps kappa(A), the relative residual double precision lets a run reach (null when kappa(A) is unknown); a tolerance below it is not reached. */
  attainableAccuracy: number | null;
  explanation: string;
  /** Which finishes first (present with timeToSolution). */
  finishesFirst?: FinishesFirst;
  /** Present for an inconsistent tall system: the projection methods reach x_W, not x_LS, and how far apart they are. */
  leastSquaresNote?: string;
}

export interface Analysis {
  n: number;
  m: number;
  blockSizes: number[];
  /** Rows N of A, present when A is tall (N > n): a least-squares problem. */
  rows?: number;
  /** dim R(A_i) per machine, present when A is tall (a machine may hold dependent rows). */
  machineRanks?: number[];
  /** Present when A is tall. */
  consistency?: Consistency;
  heterogeneity: Heterogeneity;
  conditioning: Conditioning;
  rates: Record<AlgorithmId, AlgorithmTuning>;
  bounds: Bounds;
  recommendation: Recommendation;
  /** Predicted seconds per algorithm here and on a described deployment (computed with the job's runs in mind). */
  timeToSolution?: TimeToSolution;
}
