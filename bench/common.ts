/**
 * What the benchmark's processes exchange: the problem file both sides read (bench/reference.py
 * reads the same JSON) and the stage report each side prints on stdout as one JSON object.
 * Times are in seconds everywhere (NumPy's time.perf_counter unit).
 */

/** problem.json: written once per problem by bench/run.ts; read by bench/stages.ts and bench/reference.py. */
export interface ProblemFile {
  name: string;
  /** Raw float64 little-endian, n * n, row-major. */
  matrixFile: string;
  /** Raw int32 little-endian, length n: the machine of each row. */
  assignmentFile: string;
  n: number;
  m: number;
  /** Relative residual |A x - b| / |b| at which a full solve stops. */
  tolerance: number;
  /** Same iteration cap on both sides. */
  maxSolveIterations: number;
  /** Same wall-clock budget per full solve on both sides (checked after every iteration). */
  solveBudgetSeconds: number;
  /**
   * Single iterations: untimed warm-up steps (at least this many, for at least
   * iterationWarmupSeconds), then the best of iterationRepeats timed steps.
   */
  iterationWarmup: number;
  iterationWarmupSeconds: number;
  iterationRepeats: number;
  /** Setup and analysis: best of this many runs (1 at large n). */
  expensiveRepeats: number;
  /** Streaming passes over A: best of this many. */
  streamRepeats: number;
}

export const STAGE_NAMES = ['setup', 'analysis', 'streamMatrix', 'apcIteration', 'dhbmIteration', 'apcSolve', 'dhbmSolve'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** converged: tolerance met; max-iterations: the shared cap; budget: the wall-clock budget ran out first. */
export type SolveStop = 'converged' | 'max-iterations' | 'budget' | 'diverged';

export interface SolveReport {
  iterations: number;
  relativeResidual: number;
  stop: SolveStop;
  seconds: number;
}

/** The analysis values compared across sides and backends. */
export interface AnalysisValues {
  thetaH: number;
  phiMin: number | null;
  rowNormRatio: number;
  theorem4KappaALowerBound: number | null;
  kappaS: number;
  lambdaMinS: number;
  lambdaMaxS: number;
  kappaAtA: number;
  apc: { rate: number; gamma: number; eta: number };
  dhbm: { rate: number; alpha: number; beta: number };
}

/** Seconds spent in each part of the analysis (same split on both sides). */
export interface AnalysisPhases {
  /** sigma_max and sigma_min of A (ours: Lanczos + LU; NumPy: SVD of A). */
  kappaAtA: number;
  /** Gram blocks Q_i^T Q_j and the principal angles from them. */
  principalAngles: number;
  /** lambda_max and lambda_min of S (ours: Lanczos on the Gram blocks + LU of Q; NumPy: eigvalsh of S). */
  kappaS: number;
  /** phi_i, theta_min^(l), row norms (the n x n scan of row cosines). */
  localAngles: number;
}

export interface SideReport {
  /** 'typescript' | 'native' for bench/stages.ts, 'numpy' for bench/reference.py. */
  side: string;
  /** Library versions and settings of this side (NumPy/OpenBLAS, Node, threads, ...). */
  environment: Record<string, string | number | null>;
  stages: Record<StageName, number>;
  analysisPhases: AnalysisPhases;
  /** Streaming passes over A by kernel (seconds); stages.streamMatrix is the fastest. */
  stream: Record<string, number>;
  values: AnalysisValues;
  apcSolve: SolveReport;
  dhbmSolve: SolveReport;
  /**
   * TypeScript backend only: the same single iterations with its WebAssembly kernels off, i.e. the
   * plain TypeScript loops (what LINALG_WASM=off runs; seconds).
   */
  plainLoops?: { apcIteration: number; dhbmIteration: number };
  peakRssBytes: number;
  /** RSS before the matrix was read (runtime and libraries). */
  baselineRssBytes: number;
  /** RSS high-water mark after the analysis minus the RSS just before it: what the analysis holds beyond A and the machines' data. */
  analysisGrowthBytes: number;
}

/** Bytes per entry of the dense matrix, for the streaming bandwidth. */
export const FLOAT64_BYTES = 8;

export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  if (s >= 100) return `${s.toFixed(0)} s`;
  if (s >= 1) return `${s.toFixed(2)} s`;
  if (s >= 1e-3) return `${(s * 1e3).toFixed(s >= 0.1 ? 0 : s >= 0.01 ? 1 : 2)} ms`;
  return `${(s * 1e6).toFixed(0)} µs`;
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

export function formatRatio(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '—';
  if (r >= 10) return r.toFixed(0);
  return r >= 0.1 ? r.toFixed(2) : r.toPrecision(2);
}

/** A short exponential (1.5e-3), 0 as '0', '—' for a missing or non-finite value. */
export function formatExponential(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return '—';
  return x === 0 ? '0' : x.toExponential(1);
}

/** The stages of a sparse problem (bench/sparseStages.ts and reference.py's sparse branch). */
export const SPARSE_STAGE_NAMES = ['setup', 'analysis', 'dhbmIteration', 'apcIteration'] as const;
export type SparseStageName = (typeof SPARSE_STAGE_NAMES)[number];

/** One side of a sparse problem: stages it ran (the analysis only where the problem file asks for it). */
export interface SparseSideReport {
  side: string;
  environment: Record<string, string | number | null>;
  stages: Partial<Record<SparseStageName, number>>;
  /** The analysis values both sides compute (null without the analysis). */
  values: { kappaS: number; lambdaMinS: number; lambdaMaxS: number; kappaAtA: number; thetaH: number } | null;
  peakRssBytes: number;
  baselineRssBytes: number;
  /** reference.py: D-HBM's gradient on the whole CSR matrix and per machine on its column support (seconds); the faster is the stage. */
  dhbmVariants?: Record<string, number>;
}
