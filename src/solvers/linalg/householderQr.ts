/**
 * Thin Householder QR of M = A_i^T for a machine's rows A_i (p x c, row-major, p <= c).
 *
 * Because A_i is stored by rows, the columns of M are contiguous: every reflector and every update
 * runs over contiguous memory. The result is returned in the same transposed layout:
 *  - `q` (p x c, row-major): row k is the k-th orthonormal basis vector of the row space R(A_i),
 *    i.e. the k-th column of Q_i in the paper's notation (docs/SPEC.md, "Building blocks");
 *  - `r` (p x p, row-major, upper triangular) with A_i^T = Q_i R, i.e. A_i = R^T Q_i^T.
 * Householder (not Gram-Schmidt) keeps Q_i orthonormal to machine precision, which the principal
 * angles need down to 1e-7 rad and below.
 *
 * The factorization is the kernels' thinQrWork: the Householder loop of typescriptDenseKernels.ts, or
 * LAPACK's (dgeqrt3 panels + dlarfb, by panels, panelFactorizations.ts): A_i stored by rows is A_i^T
 * stored by columns, so it runs on a copy of the rows as they are. LAPACK leaves a column that is
 * already zero below the diagonal unreflected, where the loop reflects it, so the two may differ in the signs of matching rows of q and r; Q_i Q_i^T,
 * R^T R, the angles and every iteration are the same.
 */
import type { Work } from '../cooperative.js';
import type { Kernels } from './kernels.js';

export interface ThinQr {
  readonly p: number;
  readonly c: number;
  readonly q: Float64Array;
  readonly r: Float64Array;
}

export function* householderQrWork(kernels: Kernels, rowsOfA: Float64Array, p: number, c: number): Work<ThinQr> {
  if (p > c) throw new RangeError(`householderQr needs p <= c, got p=${p}, c=${c}`);
  // w[j*c + i] = M[i][j]; copied by slices of rows (a full 3312 x 3312 copy holds the thread ~40 ms).
  const w = new Float64Array(p * c);
  for (let k = 0; k < p; k += 256) {
    w.set(rowsOfA.subarray(k * c, Math.min(p, k + 256) * c), k * c);
    yield undefined;
  }
  const { q, r } = yield* kernels.dense.thinQrWork(w, p, c);
  return { p, c, q, r };
}

/**
 * Solve R^T y = b (forward substitution; R upper triangular p x p, row-major), reading b from
 * `bOffset`. Row-oriented: row k of R (contiguous) updates the remaining right-hand side, instead
 * of reading R by columns with stride p.
 */
export function solveRTransposed(
  r: Float64Array,
  p: number,
  b: ArrayLike<number>,
  y: Float64Array = new Float64Array(p),
  bOffset = 0,
): Float64Array {
  for (let j = 0; j < p; j++) y[j] = b[bOffset + j];
  for (let k = 0; k < p; k++) {
    const row = k * p;
    const yk = (y[k] /= r[row + k]);
    for (let j = k + 1; j < p; j++) y[j] -= r[row + j] * yk;
  }
  return y;
}

/** Solve R x = y in place (back substitution; R upper triangular p x p, row-major), on y[offset, offset + p). */
export function solveRInPlace(r: Float64Array, p: number, y: Float64Array, offset = 0): void {
  for (let k = p - 1; k >= 0; k--) {
    const row = k * p;
    let s = y[offset + k];
    for (let j = k + 1; j < p; j++) s -= r[row + j] * y[offset + j];
    y[offset + k] = s / r[row + k];
  }
}
