/**
 * Dense Cholesky factorization G = R^T R (G p x p symmetric positive definite, row-major; R upper triangular with a
 * positive diagonal), right-looking by blocks of CHOLESKY_BLOCK rows: each block row is factored and solved in plain
 * loops (~p b^2 work), the trailing matrix updated by one product of the kernels (most of the p^3 / 3).
 *
 * Used where a machine's R is wanted from the Gram matrix of its rows, A_i A_i^T = R_i^T R_i (the R of A_i^T's QR up to
 * the signs of its rows), when that Gram matrix is at hand (../partitioning/advisor.ts).
 */
import type { Kernels } from './kernels.js';

const UNIT_ROUNDOFF = Number.EPSILON / 2;

/** Rows factored between two trailing updates. */
const CHOLESKY_BLOCK = 64;

/**
 * G's upper triangle overwritten by R (G = R^T R), its strict lower triangle by zeros; only the upper triangle is read.
 * false when a pivot is not positive (G not numerically positive definite); G is then left partly factored.
 * With `dropped` (p entries, zero), a pivot d_i at most 16 (i + 1) u of its diagonal G_ii (the up-looking sparse
 * factorization's limit, ../sparse/sparseCholesky.ts) drops row i instead: R's row i is zero and dropped[i] = 1, and
 * the later rows are eliminated against the kept ones only (for a Gram matrix: the rows within rounding of the span of
 * the rows kept before them). Such a factor is not for solves.
 */
export function choleskyUpperInPlace(kernels: Kernels, g: Float64Array, p: number, dropped?: Uint8Array): boolean {
  const diagonal = dropped === undefined ? null : Float64Array.from({ length: p }, (_, i) => g[i * p + i]);
  for (let k0 = 0; k0 < p; k0 += CHOLESKY_BLOCK) {
    const k1 = Math.min(p, k0 + CHOLESKY_BLOCK);
    // The block row [k0, k1), its columns from k0 on: the diagonal block's factor and R_kk^{-T} times the rest, by rows.
    for (let i = k0; i < k1; i++) {
      const ii = i * p + i;
      const pivot = g[ii];
      if (diagonal !== null && diagonal[i] > 0 && !(pivot > 16 * (i + 1) * UNIT_ROUNDOFF * diagonal[i])) {
        dropped![i] = 1;
        g.fill(0, ii, i * p + p);
        continue;
      }
      if (!(pivot > 0)) return false;
      const d = Math.sqrt(pivot);
      g[ii] = d;
      for (let j = i + 1; j < p; j++) g[i * p + j] /= d;
      // Rows i + 1 .. k1 - 1 of the block, from their diagonal on: less row i's part.
      for (let l = i + 1; l < k1; l++) {
        const f = g[i * p + l];
        if (f === 0) continue;
        const row = l * p;
        const from = i * p;
        for (let j = l; j < p; j++) g[row + j] -= f * g[from + j];
      }
    }
    // The trailing matrix [k1, p) x [k1, p) less R[k0:k1, k1:]^T R[k0:k1, k1:] (its lower part is not read).
    const w = p - k1;
    if (w > 0) {
      const panel = g.subarray(k0 * p + k1);
      kernels.dense.gemm(true, w, w, k1 - k0, -1, panel, p, panel, p, 1, g.subarray(k1 * p + k1), p);
    }
  }
  for (let i = 1; i < p; i++) g.fill(0, i * p, i * p + i);
  return true;
}
