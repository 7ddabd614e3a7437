/**
 * One interface for the six distributed solvers, in the spirit of PETSc's KSP or SciPy's iterative
 * solvers: an algorithm file defines only the method (its iteration, its optimal tuning, its rate
 * and the paper's Table 1 bounds on that rate); the convergence test, the divergence test, the
 * trace monitor, progress and cancellation live in `../runner/`, shared by all.
 * The registry (`./registry.ts`) maps the public ids to these definitions.
 */
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import type { TransientPrediction } from './transient.js';

export type Parameters = Record<string, number>;

/** The spectral quantities that determine every optimal parameter and rate (docs/SPEC.md, "The six algorithms"). */
export interface SpectralData {
  /** Number of machines. */
  readonly m: number;
  /** Extreme eigenvalues of S = sum_i Q_i Q_i^T. */
  readonly lambdaMinS: number;
  readonly lambdaMaxS: number;
  /** mu = lambda_min(A^T A), L = lambda_max(A^T A). */
  readonly mu: number;
  readonly L: number;
}

/** The heterogeneity quantities the paper's Table 1 bounds are written in. */
export interface HeterogeneityForBounds {
  readonly m: number;
  readonly thetaH: number;
  readonly cosThetaH: number;
  /** Null when every machine holds a single row. */
  readonly phiMin: number | null;
  /** max_k |a_k| / min_k |a_k|. */
  readonly rowNormRatio: number;
}

export interface OptimalTuning {
  readonly rate: number;
  /**
   * 1 - rate, computed without cancellation: where kappa is beyond ~1/eps the rate rounds to 1, and the gap still says
   * how far below 1 it is (DGD on a matrix of kappa(A^T A) = 2.6e26: rate 1, gap 7.8e-27).
   */
  readonly gap: number;
  readonly parameters: Parameters;
}

/** Table 1 of the paper for one algorithm. Bounds whose hypothesis fails are null. */
export interface RateBounds {
  /** Best (largest) valid lower bound on the optimal rate. */
  readonly lower: number | null;
  /** Upper bound on the optimal rate (projection methods; needs (m-1) cos(theta_H) < 1). */
  readonly upper: number | null;
  /** Whether the hypothesis of the upper bound holds (false when there is no upper bound). */
  readonly upperHypothesisHolds: boolean;
  /** Each individual bound by name, e.g. { rowNormRatio: 0.97, phiMin: 0.95 } for the gradient methods. */
  readonly lowerBounds: Readonly<Record<string, number | null>>;
}

/**
 * The state machine of one algorithm on one system: the taskmaster's estimate and each machine's
 * local state, advanced one iteration at a time. A method touches machine i's data only through
 * `system.machines[i]` (its own rows, basis and factor); the taskmaster only combines vectors.
 */
export interface IterativeMethod {
  /** The taskmaster's current estimate of x*. Owned by the method: read it between steps, never write. */
  readonly estimate: Float64Array;
  /**
   * |A estimate - b|^2 for the current estimate, as the machines measure it (sum over machines of
   * |A_i estimate - b_i|^2). Methods compute it as a by-product of their step where they can (one
   * pass over the data per iteration); it must be valid right after construction and after each step.
   */
  residualNormSquared(): number;
  /** max_i |x_i - estimate| for consensus methods (each machine keeps its own x_i); null otherwise. */
  consensusDistance(): number | null;
  /** Advance one iteration. */
  step(): void;
  /**
   * The state after the last step, as copies: the estimate and whatever else the iteration carries
   * (D-HBM's momentum, APC's machine estimates, the measures of the last step), all that restore()
   * needs for the next step to be the one this method would take (../runner/snapshot.ts).
   */
  state(): Float64Array[];
  /**
   * Puts back a state() taken from a method created with the same system and parameters (on any
   * thread count). Throws SnapshotMismatchError when the arrays do not have this method's lengths.
   */
  restore(state: readonly Float64Array[]): void;
  /** Threads one iteration runs on (1: the calling thread only); see ../parallel/engine.ts. */
  readonly threads?: number;
  /**
   * Releases what the method holds beyond memory (its worker threads). Idempotent; the method
   * cannot step afterwards. The runner calls it when a run ends, however it ends; whoever creates
   * a method outside the runner should call it too (an undisposed method's threads end only when
   * it is garbage-collected).
   */
  dispose?(): void;
}

export interface DistributedAlgorithm {
  /** Public id, e.g. 'apc'. */
  readonly id: string;
  /** Display name, e.g. 'Accelerated Projection-based Consensus'. */
  readonly name: string;
  readonly family: 'projection' | 'gradient';
  /** Names of the tunable parameters in the paper's order, e.g. ['gamma', 'eta']; [] for none. */
  readonly parameterNames: readonly string[];
  /** Optimal parameters and the optimal rate (the table of docs/SPEC.md). */
  optimal(spectral: SpectralData): OptimalTuning;
  /**
   * Asymptotic rate (spectral radius of the error iteration) for the given parameters, from the
   * extreme eigenvalues; >= 1 means the iteration does not converge. Equals `optimal().rate` at the
   * optimal parameters.
   */
  rate(spectral: SpectralData, parameters: Parameters): number;
  /** Throws InvalidParameterError when a parameter is outside the domain the iteration is defined on. */
  validateParameters(parameters: Parameters): void;
  /** The paper's Table 1 bounds on this algorithm's optimal rate. */
  rateBounds(h: HeterogeneityForBounds): RateBounds;
  /**
   * Set up the iteration (machines' initial estimates and factors) on a system, from x(0) =
   * initialGuess (length n; default 0). Projection-consensus methods (APC, MLM) start machine i at the
   * projection of the guess onto its solution set, x_i(0) = x0 + A_i^+ (b_i - A_i x0).
   */
  create(system: DistributedSystem, parameters: Parameters, initialGuess?: Float64Array): IterativeMethod;
  /**
   * The predicted transient growth of the error's modes for these parameters (./transient.ts), for
   * the methods that have one (D-HBM, D-NAG); absent for the others, null when rho >= 1.
   */
  transientGrowth?(spectral: SpectralData, parameters: Parameters): TransientPrediction | null;
}
