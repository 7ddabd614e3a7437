/**
 * The cheap path of a study sample: only the quantities the rates need, not a full analysis.
 *
 * Experiment 1 needs kappa(S) and kappa(A^T A), not the m(m-1)/2 principal angles, phi_i or the
 * bounds that dominate a full analysis at n = 120 (~8x the time). Both come from the extreme
 * singular values of one n x n matrix each (docs/SPEC.md, "Building blocks"):
 *  - kappa(A^T A) = (sigma_max(A) / sigma_min(A))^2, L = sigma_max^2, mu = sigma_min^2;
 *  - S = sum_i Q_i Q_i^T = Q Q^T with Q = [Q_1 ... Q_m] (n x n because sum p_i = n), so the
 *    eigenvalues of S are the squared singular values of Q: lambda_max(S) = sigma_max(Q)^2 and
 *    lambda_min(S) = sigma_min(Q)^2, unsquared until the end (no Gram matrix is formed).
 * Q_i is each machine's Householder basis (the full analysis' own factorization), and the extreme
 * singular values come from one bidiagonalization and Sturm counts on its bidiagonal
 * (linalg/singularValues.ts' squareSingularValueRangeInPlace; kappa(S) through ../analysis/kappaS.ts). The rates and the recommendation then follow from the
 * algorithms' own formulas, so every value here is the full analysis' value to rounding (checked
 * against `analyze` in test/solvers/studies/sampleMetrics.test.ts).
 */
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../algorithms/registry.js';
import type { OptimalTuning, SpectralData } from '../algorithms/types.js';
import { sConditioningWork } from '../analysis/kappaS.js';
import { fasterOfApcAndDhbm } from '../analysis/recommendation.js';
import { runSync } from '../cooperative.js';
import { conditionNumber } from '../eigen/eigenvalueEstimate.js';
import { householderQrWork } from '../linalg/householderQr.js';
import type { Kernels } from '../linalg/kernels.js';
import { singularValueRange, squareSingularValueRangeInPlace, type SingularValueRange } from '../linalg/singularValues.js';
import type { DenseMatrix } from '../matrix.js';
import type { Partition } from '../problem.js';

export interface MatrixConditioningValues {
  kappaAtA: number;
  L: number;
  mu: number;
}

/** The part of an analysis the cheap path computes, under the same field names (metric paths read both alike). */
export interface ConditioningAnalysis {
  conditioning: MatrixConditioningValues & { kappaS: number; lambdaMinS: number; lambdaMaxS: number };
  rates: Record<AlgorithmId, OptimalTuning>;
  recommendation: {
    algorithm: 'apc' | 'dhbm';
    exact: { apcRate: number; dhbmRate: number; kappaS: number; kappaAtA: number; faster: 'apc' | 'dhbm'; tie: boolean };
  };
}

/**
 * Scratch arrays of one n, reused from sample to sample (a study computes thousands of samples of the
 * same n; fresh n x n arrays per call cost a tenth of the time in garbage collection at n = 120).
 * Every function here fills what it reads before reading it, and none calls another while it holds them.
 */
class Scratch {
  readonly square: Float64Array;
  readonly tau: Float64Array;
  readonly d: Float64Array;
  readonly e: Float64Array;

  constructor(readonly n: number) {
    this.square = new Float64Array(n * n);
    this.tau = new Float64Array(n);
    this.d = new Float64Array(n);
    this.e = new Float64Array(Math.max(1, n));
  }
}

let scratch: Scratch | null = null;
/** Largest n whose scratch is kept between samples (a larger matrix's arrays are its own, not held after it). */
const KEPT_SCRATCH_MAX_N = 512;

function scratchFor(n: number): Scratch {
  if (n > KEPT_SCRATCH_MAX_N) return new Scratch(n);
  if (scratch?.n !== n) scratch = new Scratch(n);
  return scratch;
}

/** The extreme singular values of the square row-major n x n `data` (not modified), on a copy bidiagonalized at once. */
export function extremeSingularValues(kernels: Kernels, data: Float64Array, n: number): SingularValueRange {
  const work = scratchFor(n);
  work.square.set(data.subarray(0, n * n));
  return squareSingularValueRangeInPlace(kernels, work.square, n, work.d, work.e);
}

/** sigma_max(A)^2 / sigma_min(A)^2 and its two ends; a tall A's sigma_min is its n-th singular value. */
export function matrixConditioning(kernels: Kernels, a: DenseMatrix): MatrixConditioningValues {
  if (a.rows < a.cols) throw new RangeError('matrixConditioning needs a square or tall matrix');
  const { largest, smallest } =
    a.rows === a.cols ? extremeSingularValues(kernels, a.data, a.rows) : singularValueRange(a.data, a.rows, a.cols, kernels);
  const L = largest * largest;
  const mu = smallest * smallest;
  return { kappaAtA: (largest / smallest) ** 2, L, mu };
}

/** Copy rows `rows` of the n-column row-major `data` to `out` from row `at` on: one block copy when they are consecutive. */
function copyRows(data: Float64Array, n: number, rows: Int32Array, out: Float64Array, at: number): void {
  const first = rows[0];
  if (rows[rows.length - 1] === first + rows.length - 1) {
    // Ascending and distinct (Partition.rowsOf), so first..last is the whole run.
    out.set(data.subarray(first * n, (first + rows.length) * n), at * n);
    return;
  }
  for (let k = 0; k < rows.length; k++) out.set(data.subarray(rows[k] * n, rows[k] * n + n), (at + k) * n);
}

/**
 * lambda_min(S) and lambda_max(S) as the squared extreme singular values of Q = [Q_1 ... Q_m], by
 * ../analysis/kappaS.ts from Q^T (the machines' Householder bases, no Gram blocks). One machine (m = 1) holds all n rows, so Q = Q_1 is orthogonal and S = I: both are 1 (what the
 * factorization below returns to rounding, since a Householder Q is orthogonal whatever A's rank).
 */
export function sExtremes(kernels: Kernels, a: DenseMatrix, partition: Partition): { lambdaMinS: number; lambdaMaxS: number } {
  const n = a.cols;
  // Q is n x n only when sum p_i = n; a tall system's machines may hold dependent rows (the full analysis' row-space bases).
  if (a.rows !== n) throw new RangeError('sExtremes needs a square matrix; a tall system takes the full analysis');
  if (partition.m === 1 && partition.sizes[0] === n) return { lambdaMinS: 1, lambdaMaxS: 1 };
  const work = scratchFor(n);
  // Row k of `basis` is a basis vector of some R(A_i): basis = Q^T, whose singular values are Q's.
  const basis = work.square;
  let row = 0;
  for (let i = 0; i < partition.m; i++) {
    const p = partition.sizes[i];
    copyRows(a.data, n, partition.rowsOf[i], basis, row);
    // A_i stored by rows is A_i^T (n x p) stored by columns: its Householder Q, in place.
    kernels.dense.orthonormalizeRows(basis, row, p, n, work.tau);
    row += p;
  }
  const { lambdaMinS, lambdaMaxS } = runSync(
    sConditioningWork(kernels, { basisRows: { rows: n, cols: n, data: basis }, bidiagonal: work }),
  );
  return { lambdaMinS, lambdaMaxS };
}

/** Rates, parameters and the exact APC / D-HBM comparison from the spectral data, as the full analysis derives them. */
export function conditioningAnalysis(
  m: number,
  matrix: MatrixConditioningValues,
  s: { lambdaMinS: number; lambdaMaxS: number },
): ConditioningAnalysis {
  const spectral: SpectralData = { m, lambdaMinS: s.lambdaMinS, lambdaMaxS: s.lambdaMaxS, mu: matrix.mu, L: matrix.L };
  const rates = Object.fromEntries(ALGORITHM_IDS.map((id) => [id, algorithms[id].optimal(spectral)])) as Record<AlgorithmId, OptimalTuning>;
  const kappaS = conditionNumber(s.lambdaMaxS, s.lambdaMinS);
  const { kappaAtA } = matrix;
  // The full analysis' rule: equal to rounding is a tie, and a tie names D-HBM.
  const { faster, tie } = fasterOfApcAndDhbm(kappaS, kappaAtA);
  return {
    conditioning: { ...matrix, kappaS, ...s },
    rates,
    recommendation: {
      algorithm: faster,
      exact: { apcRate: rates.apc.rate, dhbmRate: rates.dhbm.rate, kappaS, kappaAtA, faster, tie },
    },
  };
}

let cheapPaths: Set<string> | null = null;

/** Whether a metric path is one the cheap path computes. */
export function isConditioningPath(path: string): boolean {
  if (!cheapPaths) {
    const sample = conditioningAnalysis(2, { kappaAtA: 4, L: 4, mu: 1 }, { lambdaMinS: 0.5, lambdaMaxS: 1.5 });
    cheapPaths = new Set();
    const walk = (value: unknown, path: string): void => {
      if (value !== null && typeof value === 'object')
        for (const [key, child] of Object.entries(value)) walk(child, path ? `${path}.${key}` : key);
      else cheapPaths!.add(path);
    };
    walk(sample, '');
  }
  return cheapPaths.has(path);
}

/**
 * The smallest principal angle between the row spaces of two p x n blocks (rows of `first` and
 * `second`), as atan2(sin, cos) (docs/SPEC.md: accurate for tiny angles): cos = sigma_max(Q_1^T Q_2),
 * sin = sigma_min(Q_2 - Q_1 (Q_1^T Q_2)), the sines of the principal angles being the singular
 * values of the part of R(A_2)'s basis outside R(A_1).
 */
export function smallestPrincipalAngle(kernels: Kernels, first: Float64Array, second: Float64Array, p: number, n: number): number {
  const q1 = runSync(householderQrWork(kernels, first, p, n)).q;
  const q2 = runSync(householderQrWork(kernels, second, p, n)).q;
  // cross[k][l] = <q2_k, q1_l>
  const cross = new Float64Array(p * p);
  for (let k = 0; k < p; k++)
    for (let l = 0; l < p; l++) {
      let dot = 0;
      for (let j = 0; j < n; j++) dot += q2[k * n + j] * q1[l * n + j];
      cross[k * p + l] = dot;
    }
  const residual = q2.slice();
  for (let k = 0; k < p; k++)
    for (let l = 0; l < p; l++) {
      const c = cross[k * p + l];
      for (let j = 0; j < n; j++) residual[k * n + j] -= c * q1[l * n + j];
    }
  const cos = singularValueRange(cross, p, p, kernels).largest;
  const sin = singularValueRange(residual, p, n, kernels).smallest;
  return Math.atan2(sin, cos);
}
