/**
 * What a run of one algorithm takes and returns. The runner (convergence test, divergence test,
 * trace monitor, cancellation) is shared by every algorithm; see ./runAlgorithm.ts.
 * Field names of RunResult follow `Run` in docs/API.md.
 */
import type { AlgorithmId } from '../algorithms/registry.js';
import type { Parameters } from '../algorithms/types.js';

/**
 * How a run ended, every status once (the API's Run.status enum is built from this list); the rules
 * are those of ./runAlgorithm.ts (in the spirit of PETSc's KSPConvergedReason).
 */
export const RUN_STATUSES = ['converged', 'max-iterations', 'max-wall-time', 'diverged', 'stagnated', 'non-finite', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * Per-iteration record of a run, down-sampled to at most `cap` points. Points are stored at the
 * iteration numbers in `iteration` (ascending); the first (0, the initial estimate) and the last
 * iteration of the run are always kept.
 */
export interface Trace {
  iteration: Int32Array;
  /** |A x - b| / |b| of the taskmaster's estimate. */
  relativeResidual: Float64Array;
  /** |x - x*| / |x*| when the true solution is known, else null. */
  relativeError: Float64Array | null;
  /** max_i |x_i - xbar| for consensus methods (APC, MLM), else null. */
  consensusDistance: Float64Array | null;
  /** Iterations the run performed (the last recorded iteration). */
  totalIterations: number;
  /** Most points kept. */
  cap: number;
  /** True when points were dropped to respect `cap`. */
  downsampled: boolean;
}

export interface RunOptions {
  /**
   * The residual test (SciPy's rtol and atol): |A x - b| <= max(tolerance |b|, absoluteTolerance),
   * i.e. the relative residual |A x - b| / |b| at most this, or the absolute one at most absoluteTolerance.
   */
  tolerance: number;
  /** |A x - b| at most this also passes the residual test (default 0: the relative test alone). */
  absoluteTolerance?: number;
  /**
   * When given, converging also needs |x - x*| / |x*| <= errorTolerance (every test asked for must
   * pass); the true solution must be known (InvalidParameterError otherwise).
   */
  errorTolerance?: number;
  maxIterations: number;
  /** Stop with status 'max-wall-time' once the run has taken this long (ms; its time before a resumption counts). */
  maxWallTimeMs?: number;
  /**
   * Stop with status 'diverged' once the relative residual exceeds this times its initial value
   * (PETSc's dtol; default DEFAULT_DIVERGENCE_TOLERANCE = 1e5). At least 1.
   */
  divergenceTolerance?: number;
  /**
   * Stop with status 'stagnated' once the residual stalls near the attainable accuracy (default true).
   * false runs to the other rules (a benchmark to the iteration cap, for instance).
   */
  stopOnStagnation?: boolean;
  /** x(0) (length n): where the run starts (APC and MLM start each machine at its projection); default 0. */
  initialGuess?: Float64Array;
  /** User overrides, merged over the optimal parameters. */
  parameters?: Parameters;
  /** Most trace points kept (default DEFAULT_TRACE_CAP). */
  traceCap?: number;
  /** Checked every iteration; an aborted run ends with status 'cancelled'. */
  signal?: AbortSignal;
}

/**
 * Where a run on a tall system converges: the least-squares solution x_LS (DGD, D-NAG, D-HBM) or the
 * block-weighted solution x_W (APC, block Cimmino, MLM); the same point when the system is consistent.
 */
export type RunTarget = 'least-squares' | 'block-weighted';

export interface RunResult {
  algorithm: AlgorithmId;
  status: RunStatus;
  /** Iterations performed. */
  iterations: number;
  /** Of the returned solution, recomputed directly as |A x - b| / |b| at the end. */
  relativeResidual: number;
  /**
   * |x - x*| / |x*|: x* the true solution when known; on a tall system the run's target when the
   * system is inconsistent (or when no true solution is known).
   */
  relativeError: number | null;
  /** Present for a tall system (N > n): the point this run converges to. */
  target?: RunTarget;
  /** Rate fitted to the tail of the trace (error when known, else residual); null when too short. */
  empiricalRate: number | null;
  /** Spectral radius of the iteration for the parameters used. */
  theoreticalRate: number;
  parameters: Parameters;
  wallTimeMs: number;
  /** Threads the iterations ran on (1 = the calling thread only; see src/solvers/parallel/threads.ts). */
  threads?: number;
  /** Why the run stopped, in words (with the diagnosis of a residual that grew, when there is one). */
  stopReason: string;
  /**
   * The accuracy a relative residual can be expected to reach in double precision, eps kappa(A)
   * (kappa(A) = sqrt(L / mu)): a run whose residual stops improving near it ends 'stagnated'.
   */
  attainableAccuracy: number;
  /** The largest relative residual after the start, when it exceeded the initial one; null when it never grew. */
  growth: ResidualGrowth | null;
  solution: Float64Array;
  trace: Trace;
}

/** A relative residual that rose above its initial value, and what the theory says of it. */
export interface ResidualGrowth {
  /** The largest relative residual seen, and the iteration it was seen at. */
  peakRelativeResidual: number;
  peakIteration: number;
  /** Its ratio to the initial relative residual. */
  factor: number;
  /**
   * 'transient': the spectral radius is < 1 and the method (D-HBM, D-NAG) is known to grow before it
   * falls; 'divergence': the spectral radius is >= 1 for these parameters; 'unexplained' otherwise.
   */
  cause: 'transient' | 'divergence' | 'unexplained';
  /** The predicted largest growth factor of the error's modes (an estimate, see ../algorithms/transient.ts), when the theory gives one. */
  predictedFactor: number | null;
  /** The iteration at which that largest growth is predicted. */
  predictedIteration: number | null;
}
