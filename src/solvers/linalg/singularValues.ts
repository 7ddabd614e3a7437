/**
 * Singular values of small and medium dense matrices without squaring:
 *   1. Householder QR of the tall orientation, keeping only R (p x p);
 *   2. Householder bidiagonalization of R (Golub-Kahan), R = U B V^T;
 *   3. bisection on the Golub-Kahan tridiagonal [[0, B], [B^T, 0]] (eigenvalues +-sigma_i).
 * Steps 1-2 are normwise backward stable: every singular value is obtained to an absolute error of
 * a few eps * sigma_max, which is what the principal angles need (sin(theta) of a 1e-7 angle to
 * 1e-12 absolute: forming A^T A would leave only eps / sin(theta) ~ 1e-9). Step 3 is relatively
 * accurate for the bidiagonal (Demmel-Kahan), so matrices that the Householder steps map
 * exactly (diagonal and permuted-diagonal, triangular with graded rows) keep even their tiny singular
 * values to high relative accuracy.
 *
 * Steps 1-2 are the kernels' bidiagonalOfColumnsWork: the loops of typescriptDenseKernels.ts, or
 * LAPACK's (dgeqrt3 + dlarfb, then dlabrd + dgemm and dgebrd, by panels, panelFactorizations.ts;
 * square matrices skip the QR), equally backward stable; step 3 is the same bisection.
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseMatrix } from '../matrix.js';
import type { Bidiagonal } from './denseKernels.js';
import { selectedKernels, type Kernels } from './kernels.js';
import { tridiagonalEigenvalue } from './tridiagonal.js';

export { WORK_PER_YIELD } from './typescriptFactorizations.js';

/**
 * Singular value number `index` (0 = smallest) of the upper bidiagonal (d, e), by bisection on
 * its Golub-Kahan tridiagonal (zero diagonal, off-diagonal d0, e0, d1, e1, ...).
 */
export function bidiagonalSingularValue(d: Float64Array, e: Float64Array, index: number): number {
  const q = d.length;
  if (q === 1) return Math.abs(d[0]);
  const zero = new Float64Array(2 * q);
  const off = new Float64Array(2 * q - 1);
  for (let i = 0; i < q; i++) {
    off[2 * i] = d[i];
    if (i < q - 1) off[2 * i + 1] = e[i];
  }
  // Eigenvalues of the 2q x 2q tridiagonal are -sigma (indices < q) and +sigma (indices >= q).
  return Math.max(0, tridiagonalEigenvalue(zero, off, 2 * q, q + index));
}

export interface SingularValueRange {
  largest: number;
  smallest: number;
}

const EPS = Number.EPSILON;
const SAFE_MIN = 2.2250738585072014e-308;
const MAX_PASSES = 1500;

/** An interval [lo, hi] holding one eigenvalue of the Golub-Kahan tridiagonal, and its ascending index. */
interface Bracket {
  lo: number;
  hi: number;
  index: number;
  done: boolean;
}

function converged(bracket: Bracket, floor: number): boolean {
  const width = bracket.hi - bracket.lo;
  return width <= 2 * EPS * Math.max(Math.abs(bracket.lo), Math.abs(bracket.hi)) || width <= floor;
}

/** Two points dividing the bracket in three: geometric when it spans orders of magnitude above zero (tiny values in O(log log) passes). */
function divisionPoints(bracket: Bracket): [number, number] {
  const { lo, hi } = bracket;
  if (lo > 0 && hi > 4 * lo) {
    const logLo = Math.log(lo);
    const logHi = Math.log(hi);
    const first = Math.exp((2 * logLo + logHi) / 3);
    const second = Math.exp((logLo + 2 * logHi) / 3);
    if (lo < first && first < second && second < hi) return [first, second];
  }
  const third = (hi - lo) / 3;
  return [lo + third, hi - third];
}

/** Narrow a bracket with the Sturm counts at its two division points (count > index: the eigenvalue lies below the point). */
function narrow(bracket: Bracket, first: number, second: number, countFirst: number, countSecond: number): void {
  if (countFirst > bracket.index) bracket.hi = first;
  else if (countSecond > bracket.index) {
    bracket.lo = first;
    bracket.hi = second;
  } else bracket.lo = second;
}

/**
 * The largest and smallest singular values of an upper bidiagonal matrix B (diagonal d, superdiagonal
 * e), the two the range of singular values needs (singularValueRangeWork, the study samples).
 *
 * Same method and accuracy as bidiagonalSingularValue (Sturm counts on the
 * Golub-Kahan tridiagonal [[0, B], [B^T, 0]], whose eigenvalues are -sigma_i and +sigma_i, each
 * interval narrowed to a relative width of 2 eps, geometric division points for intervals spanning
 * orders of magnitude), but both values in one pass and by trisection: every pass runs four
 * independent Sturm recurrences side by side (two division points per value), which a CPU overlaps,
 * since each recurrence is a chain of dependent divisions. One pass narrows each interval three-fold
 * instead of two-fold, and costs about one recurrence: ~2.5x faster than two bisections at n = 120.
 *
 * sigma_max(B) and sigma_min(B) of the q x q upper bidiagonal with diagonal d[0..q) and superdiagonal
 * e[0..q-1) (e may be longer; the rest is not read).
 */
export function bidiagonalExtremes(d: Float64Array, e: Float64Array, q: number): SingularValueRange {
  if (q === 1) return { largest: Math.abs(d[0]), smallest: Math.abs(d[0]) };
  const k = 2 * q;
  // Squared off-diagonal of the Golub-Kahan tridiagonal: d0, e0, d1, e1, ..., d_{q-1}.
  const off2 = new Float64Array(k - 1);
  let radius = 0;
  let maxOff2 = 1;
  for (let i = 0; i < k - 1; i++) {
    const value = (i & 1) === 0 ? d[i >> 1] : e[i >> 1];
    off2[i] = value * value;
    maxOff2 = Math.max(maxOff2, off2[i]);
  }
  // Gershgorin: every eigenvalue lies in [-radius, radius] (zero diagonal).
  for (let i = 0; i < k; i++) {
    const left = i > 0 ? Math.sqrt(off2[i - 1]) : 0;
    const right = i < k - 1 ? Math.sqrt(off2[i]) : 0;
    radius = Math.max(radius, left + right);
  }
  const pivmin = SAFE_MIN * maxOff2;
  const margin = 2 * EPS * radius + 2 * pivmin;
  const floor = 4 * pivmin;
  // Ascending indices: -sigma_i below q, +sigma_i from q; the largest is the last. sigma_max is at
  // least every |entry| (sqrt(maxOff2) unless all are below 1); sigma_min at most |d_0| and |d_{q-1}|
  // (B e_1 = d_0 e_1, e_q^T B = d_{q-1} e_q^T).
  let largestEntry = 0;
  for (let i = 0; i < k - 1; i++) largestEntry = Math.max(largestEntry, off2[i]);
  const smallestBound = Math.min(Math.abs(d[0]), Math.abs(d[q - 1]));
  const largest: Bracket = { lo: Math.sqrt(largestEntry) - margin, hi: radius + margin, index: k - 1, done: false };
  const smallest: Bracket = { lo: -margin, hi: Math.min(radius, smallestBound) + margin, index: q, done: false };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    largest.done ||= converged(largest, floor);
    smallest.done ||= converged(smallest, floor);
    if (largest.done && smallest.done) break;
    const [x0, x1] = divisionPoints(largest);
    const [x2, x3] = divisionPoints(smallest);
    if (!(largest.lo < x0 && x0 < x1 && x1 < largest.hi)) largest.done = true;
    if (!(smallest.lo < x2 && x2 < x3 && x3 < smallest.hi)) smallest.done = true;
    // Four Sturm recurrences q_i = -x - off2_{i-1} / q_{i-1}, interleaved.
    let q0 = -x0;
    let q1 = -x1;
    let q2 = -x2;
    let q3 = -x3;
    if (Math.abs(q0) <= pivmin) q0 = -pivmin;
    if (Math.abs(q1) <= pivmin) q1 = -pivmin;
    if (Math.abs(q2) <= pivmin) q2 = -pivmin;
    if (Math.abs(q3) <= pivmin) q3 = -pivmin;
    let c0 = q0 < 0 ? 1 : 0;
    let c1 = q1 < 0 ? 1 : 0;
    let c2 = q2 < 0 ? 1 : 0;
    let c3 = q3 < 0 ? 1 : 0;
    for (let i = 1; i < k; i++) {
      const o = off2[i - 1];
      q0 = -x0 - o / q0;
      q1 = -x1 - o / q1;
      q2 = -x2 - o / q2;
      q3 = -x3 - o / q3;
      if (Math.abs(q0) <= pivmin) q0 = -pivmin;
      if (Math.abs(q1) <= pivmin) q1 = -pivmin;
      if (Math.abs(q2) <= pivmin) q2 = -pivmin;
      if (Math.abs(q3) <= pivmin) q3 = -pivmin;
      if (q0 < 0) c0++;
      if (q1 < 0) c1++;
      if (q2 < 0) c2++;
      if (q3 < 0) c3++;
    }
    if (!largest.done) narrow(largest, x0, x1, c0, c1);
    if (!smallest.done) narrow(smallest, x2, x3, c2, c3);
  }
  return {
    largest: Math.max(0, 0.5 * (largest.lo + largest.hi)),
    smallest: Math.max(0, 0.5 * (smallest.lo + smallest.hi)),
  };
}

/**
 * The extreme singular values of the square row-major n x n `matrix`, which is overwritten: one
 * bidiagonalization at once (kernels.dense.bidiagonalOfSquare; on the native kernels a single dgebrd up to
 * n = 512, at n = 120 ~2.5x faster than the sliced panels of singularValueRangeWork, made for large
 * matrices), then its bidiagonal's two ends; d of length n, e of length max(1, n).
 */
export function squareSingularValueRangeInPlace(
  kernels: Kernels,
  matrix: Float64Array,
  n: number,
  d: Float64Array,
  e: Float64Array,
): SingularValueRange {
  kernels.dense.bidiagonalOfSquare(matrix, n, d, e);
  return bidiagonalExtremes(d, e, n);
}

/**
 * The largest and smallest singular values of a rows x cols row-major matrix (not modified).
 * The smallest is the min(rows, cols)-th one.
 */
export function* singularValueRangeWork(kernels: Kernels, data: Float64Array, rows: number, cols: number): Work<SingularValueRange> {
  const { d, e } = yield* bidiagonalOfWork(kernels, data, rows, cols);
  return bidiagonalExtremes(d, e, d.length);
}

export function singularValueRange(
  data: Float64Array,
  rows: number,
  cols: number,
  kernels: Kernels = selectedKernels(),
): SingularValueRange {
  return runSync(singularValueRangeWork(kernels, data, rows, cols));
}

/** All singular values of a dense matrix, descending (min(rows, cols) of them). */
export function singularValues(a: DenseMatrix, kernels: Kernels = selectedKernels()): Float64Array {
  const { d, e } = runSync(bidiagonalOfWork(kernels, a.data, a.rows, a.cols));
  const q = d.length;
  const out = new Float64Array(q);
  for (let k = 1; k < q - 1; k++) out[k] = bidiagonalSingularValue(d, e, q - 1 - k);
  // The two ends by the routine that computes them for the range, so both report the same values.
  const { largest, smallest } = bidiagonalExtremes(d, e, q);
  out[0] = largest;
  out[q - 1] = smallest;
  return out;
}

/**
 * Upper bidiagonal (d, e) with the singular values of the c x p matrix whose columns are the p rows
 * of `columns` (p x c, row-major, p <= c; overwritten): R of its thin QR, then R bidiagonalized.
 */
export function* bidiagonalOfColumnsWork(kernels: Kernels, columns: Float64Array, p: number, c: number): Work<Bidiagonal> {
  return yield* kernels.dense.bidiagonalOfColumnsWork(columns, p, c);
}

/** Bidiagonal with the singular values of the rows x cols matrix `data` (copied, not modified). */
function* bidiagonalOfWork(kernels: Kernels, data: Float64Array, rows: number, cols: number): Work<{ d: Float64Array; e: Float64Array }> {
  if (rows === 0 || cols === 0) throw new RangeError('singular values of an empty matrix');
  // The singular values of X and X^T agree; the QR wants the short side as the number of rows
  // of its `columns` argument.
  let columns: Float64Array;
  let p: number;
  let c: number;
  if (rows <= cols) {
    columns = Float64Array.from(data.subarray(0, rows * cols));
    p = rows;
    c = cols;
  } else {
    p = cols;
    c = rows;
    columns = new Float64Array(p * c);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) columns[j * c + i] = data[i * cols + j];
  }
  return yield* bidiagonalOfColumnsWork(kernels, columns, p, c);
}
