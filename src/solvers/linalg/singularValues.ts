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
 * With the addon's kernels steps 1-2 are LAPACK's (dgeqrt3 + dlarfb, then dlabrd + dgemm and dgebrd,
 * by panels, panelFactorizations.ts; square matrices skip the QR), equally backward stable; step 3 is
 * the same bisection.
 */
import { runSync, type Work } from '../cooperative.js';
import type { DenseMatrix } from '../matrix.js';
import { norm2 } from '../matrix.js';
import { selectedKernels, type Kernels } from './kernels.js';
import { panelBidiagonalWork, panelQrWork } from './panelFactorizations.js';
import { tridiagonalEigenvalue } from './tridiagonal.js';

/** Multiply-adds between two yields (a few milliseconds). */
export const WORK_PER_YIELD = 1_000_000;

/**
 * R (p x p, row-major, upper triangular) of the thin QR of the c x p matrix M whose columns are the
 * p rows of `columns` (p x c, row-major, p <= c). Reflectors run over contiguous memory; Q is not
 * formed. `columns` is overwritten.
 */
export function* triangularFactorWork(columns: Float64Array, p: number, c: number): Work<Float64Array> {
  if (p > c) throw new RangeError(`triangularFactor needs p <= c, got p=${p}, c=${c}`);
  const w = columns;
  const r = new Float64Array(p * p);
  let pending = 0;
  for (let k = 0; k < p; k++) {
    const vk = k * c;
    const sigma = norm2(w, vk + k, c - k);
    const x0 = w[vk + k];
    const alpha = x0 >= 0 ? -sigma : sigma;
    r[k * p + k] = alpha;
    if (sigma !== 0) {
      w[vk + k] = x0 - alpha;
      // v^T v = 2 sigma (sigma + |x0|) exactly in exact arithmetic, without a second pass.
      const beta = 1 / (sigma * (sigma + Math.abs(x0)));
      for (let j = k + 1; j < p; j++) {
        const cj = j * c;
        let s = 0;
        for (let i = k; i < c; i++) s += w[vk + i] * w[cj + i];
        s *= beta;
        if (s === 0) continue;
        for (let i = k; i < c; i++) w[cj + i] -= s * w[vk + i];
      }
    }
    for (let j = k + 1; j < p; j++) r[k * p + j] = w[j * c + k];
    pending += (c - k) * (p - k);
    if (pending >= WORK_PER_YIELD) {
      pending = 0;
      yield undefined;
    }
  }
  return r;
}

/**
 * Upper bidiagonal form of a square row-major matrix (overwritten): diagonal d, superdiagonal e.
 * Left reflectors act on columns, right reflectors on rows; both updates run along rows.
 */
export function* bidiagonalizeWork(b: Float64Array, q: number): Work<{ d: Float64Array; e: Float64Array }> {
  const d = new Float64Array(q);
  const e = new Float64Array(Math.max(q - 1, 0));
  const v = new Float64Array(q);
  const acc = new Float64Array(q);
  let pending = 0;
  for (let k = 0; k < q; k++) {
    // Left reflector zeroing B[k+1.., k].
    let scale = 0;
    for (let i = k; i < q; i++) scale = Math.max(scale, Math.abs(b[i * q + k]));
    if (scale === 0) {
      d[k] = 0;
    } else {
      let ss = 0;
      for (let i = k; i < q; i++) {
        const t = b[i * q + k] / scale;
        v[i] = b[i * q + k];
        ss += t * t;
      }
      const sigma = scale * Math.sqrt(ss);
      const x0 = v[k];
      const alpha = x0 >= 0 ? -sigma : sigma;
      v[k] = x0 - alpha;
      const beta = 1 / (sigma * (sigma + Math.abs(x0)));
      d[k] = alpha;
      if (k + 1 < q) {
        acc.fill(0, k + 1, q);
        for (let i = k; i < q; i++) {
          const vi = v[i];
          if (vi === 0) continue;
          const ri = i * q;
          for (let j = k + 1; j < q; j++) acc[j] += vi * b[ri + j];
        }
        for (let i = k; i < q; i++) {
          const f = beta * v[i];
          if (f === 0) continue;
          const ri = i * q;
          for (let j = k + 1; j < q; j++) b[ri + j] -= f * acc[j];
        }
      }
    }
    if (k + 1 >= q) break;
    // Right reflector zeroing B[k, k+2..].
    const rk = k * q;
    const sigmaR = norm2(b, rk + k + 1, q - k - 1);
    if (sigmaR === 0) {
      e[k] = 0;
    } else {
      const y0 = b[rk + k + 1];
      const alphaR = y0 >= 0 ? -sigmaR : sigmaR;
      for (let j = k + 1; j < q; j++) v[j] = b[rk + j];
      v[k + 1] = y0 - alphaR;
      const betaR = 1 / (sigmaR * (sigmaR + Math.abs(y0)));
      e[k] = alphaR;
      for (let i = k + 1; i < q; i++) {
        const ri = i * q;
        let s = 0;
        for (let j = k + 1; j < q; j++) s += b[ri + j] * v[j];
        s *= betaR;
        if (s === 0) continue;
        for (let j = k + 1; j < q; j++) b[ri + j] -= s * v[j];
      }
    }
    pending += 2 * (q - k) * (q - k);
    if (pending >= WORK_PER_YIELD) {
      pending = 0;
      yield undefined;
    }
  }
  return { d, e };
}

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

/**
 * The largest and smallest singular values of a rows x cols row-major matrix (not modified).
 * The smallest is the min(rows, cols)-th one.
 */
export function* singularValueRangeWork(kernels: Kernels, data: Float64Array, rows: number, cols: number): Work<SingularValueRange> {
  const { d, e } = yield* bidiagonalOfWork(kernels, data, rows, cols);
  const q = d.length;
  return { largest: bidiagonalSingularValue(d, e, q - 1), smallest: bidiagonalSingularValue(d, e, 0) };
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
  for (let k = 0; k < q; k++) out[k] = bidiagonalSingularValue(d, e, q - 1 - k);
  return out;
}

/** An upper bidiagonal matrix: diagonal d, superdiagonal e. */
type Bidiagonal = { d: Float64Array; e: Float64Array };

/**
 * Upper bidiagonal (d, e) with the singular values of the c x p matrix whose columns are the p rows
 * of `columns` (p x c, row-major, p <= c; overwritten): R of its thin QR, then R bidiagonalized.
 */
export function* bidiagonalOfColumnsWork(kernels: Kernels, columns: Float64Array, p: number, c: number): Work<Bidiagonal> {
  const blas = kernels.blas;
  if (blas) {
    // Row-major storage is the column-major transpose: the same singular values. Square: no QR needed.
    if (p === c) return yield* panelBidiagonalWork(blas, columns, p);
    const { r } = yield* panelQrWork(blas, columns, p, c, false);
    return yield* panelBidiagonalWork(blas, r, p);
  }
  const r = yield* triangularFactorWork(columns, p, c);
  return yield* bidiagonalizeWork(r, p);
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
