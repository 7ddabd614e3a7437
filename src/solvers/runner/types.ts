/**
 * What a run of one algorithm takes and returns. The runner (convergence test, divergence test,
 * trace monitor, cancellation) is shared by every algorithm; see ./runAlgorithm.ts.
 * Field names of RunResult follow `Run` in docs/API.md.
 */
import type { AlgorithmId } from '../algorithms/registry.js';
import type { Parameters } from '../algorithms/types.js';

/** How a run ended, every status once (the API's Run.status enum is built from this list). */
export const RUN_STATUSES = ['converged', 'max-iterations', 'diverged', 'cancelled'] as const;
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
  /** Stop when the relative residual |A x - b| / |b| is at most this. */
  tolerance: number;
  maxIterations: number;
  /** User overrides, merged over the optimal parameters. */
  parameters?: Parameters;
  /** Most trace points kept (default DEFAULT_TRACE_CAP). */
  traceCap?: number;
  /** Checked every iteration; an aborted run ends with status 'cancelled'. */
  signal?: AbortSignal;
}

export interface RunResult {
  algorithm: AlgorithmId;
  status: RunStatus;
  /** Iterations performed. */
  iterations: number;
  /** Of the returned solution, recomputed directly as |A x - b| / |b| at the end. */
  relativeResidual: number;
  relativeError: number | null;
  /** Rate fitted to the tail of the trace (error when known, else residual); null when too short. */
  empiricalRate: number | null;
  /** Spectral radius of the iteration for the parameters used. */
  theoreticalRate: number;
  parameters: Parameters;
  wallTimeMs: number;
  /** Threads the iterations ran on (1 = the calling thread only; see src/solvers/parallel/threads.ts). */
  threads?: number;
  /** Why the run stopped, in words. */
  stopReason: string;
  solution: Float64Array;
  trace: Trace;
}
