/**
 * Thin Householder QR of M = A_i^T for a machine's rows A_i (p x c, row-major, p <= c).
 *
 * Because A_i is stored by rows, the columns of M are contiguous: every reflector and every update
 * below runs over contiguous memory. The result is returned in the same transposed layout:
 *  - `q` (p x c, row-major): row k is the k-th orthonormal basis vector of the row space R(A_i),
 *    i.e. the k-th column of Q_i in the paper's notation (docs/SPEC.md, "Building blocks");
 *  - `r` (p x p, row-major, upper triangular) with A_i^T = Q_i R, i.e. A_i = R^T Q_i^T.
 * Householder (not Gram-Schmidt) keeps Q_i orthonormal to machine precision, which the principal
 * angles need down to 1e-7 rad and below.
 *
 * With the addon's kernels the same factorization is LAPACK's (dgeqrt3 panels + dlarfb, by panels,
 * panelFactorizations.ts): A_i stored by rows is A_i^T stored by columns, so it runs on a copy of the
 * rows as they are. LAPACK leaves a column that is already zero below the diagonal unreflected, where
 * the loop below reflects it, so the two may differ in the signs of matching rows of q and r; Q_i Q_i^T,
 * R^T R, the angles and every iteration are the same.
 */
import type { Work } from '../cooperative.js';
import { norm2 } from '../matrix.js';
import type { Kernels } from './kernels.js';
import { panelQrWork } from './panelFactorizations.js';

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
  const blas = kernels.blas;
  if (blas) {
    const { q, r } = yield* panelQrWork(blas, w, p, c, true);
    return { p, c, q: q!, r };
  }
  const beta = new Float64Array(p); // H_k = I - beta_k v_k v_k^T, v_k stored in w[k*c + k .. k*c + c)
  const r = new Float64Array(p * p);

  for (let k = 0; k < p; k++) {
    const vk = k * c;
    const sigma = norm2(w, vk + k, c - k);
    const x0 = w[vk + k];
    // alpha = -sign(x0) |x|: the reflector maps x to alpha e_1 without cancellation.
    const alpha = x0 >= 0 ? -sigma : sigma;
    if (sigma === 0) {
      beta[k] = 0;
      r[k * p + k] = 0;
    } else {
      w[vk + k] = x0 - alpha;
      let vv = 0;
      for (let i = k; i < c; i++) vv += w[vk + i] * w[vk + i];
      beta[k] = 2 / vv;
      r[k * p + k] = alpha;
      for (let j = k + 1; j < p; j++) {
        const cj = j * c;
        let s = 0;
        for (let i = k; i < c; i++) s += w[vk + i] * w[cj + i];
        s *= beta[k];
        for (let i = k; i < c; i++) w[cj + i] -= s * w[vk + i];
      }
    }
    for (let j = k + 1; j < p; j++) r[k * p + j] = w[j * c + k];
    yield undefined;
  }

  // Q_i = H_0 H_1 ... H_{p-1} [I_p; 0]: column k is e_k with H_k ... H_0 applied in that order
  // (H_j with j > k leaves e_k unchanged because v_j vanishes above index j).
  const q = new Float64Array(p * c);
  for (let k = 0; k < p; k++) {
    const qk = k * c;
    q[qk + k] = 1;
    for (let j = k; j >= 0; j--) {
      if (beta[j] === 0) continue;
      const vj = j * c;
      let s = 0;
      for (let i = j; i < c; i++) s += w[vj + i] * q[qk + i];
      s *= beta[j];
      for (let i = j; i < c; i++) q[qk + i] -= s * w[vj + i];
    }
    yield undefined;
  }
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
