/**
 * The rows of a machine's block A_i (p x c) that span its row space, and the right-hand side of those rows
 * that keeps its local least-squares solutions, from a sparse Cholesky factorization of G_i = A_i A_i^T
 * that drops dependent rows (./sparseCholesky.ts, option `dropped`): the TypeScript backend's answer where
 * the native one runs SuiteSparseQR (native/src/spqr_native.c) and the machine's row-space basis is too large to
 * stream (../distributed/streamedRowBasis.ts), and the fallback of both for rows within ~1e-7 rad of the others.
 * Nothing p x c, nor p x p, is dense. Its rows are kept greedily: on many random sparse rows they grow so
 * ill-conditioned that rounding can keep a dependent row (the reason the streamed route exists).
 *
 * Which rows: up-looking Cholesky of P G_i P^T (AMD ordering). The pivot d_k of row k is sin^2 of the angle
 * between row k of A_i and the span of the rows kept before it, times G_kk; the row is dropped when
 * d_k <= DROP_TOLERANCE(k) G_kk with the factorization's own limit, 16 c_k u (c_k the terms summed into d_k,
 * u = 2^-53): below it the pivot cannot be told from rounding, i.e. rows within ~1e-7 rad (sqrt(16 c_k u))
 * of the span of the others. That is coarser than the dense path's Gram-Schmidt (1e-10 rad, which does not
 * square the condition number): a row between the two is dependent here and independent there.
 *
 * The right-hand side: with K the kept pivots and D the dropped ones, L~ = L[:, K] (p x r, its rows in pivot
 * order) satisfies G_i = L~ L~^T and A_i = M A_S, M = L~ L~_K^{-1} (M_K = I: each row of A_i as a
 * combination of the kept rows A_S). A local least-squares solution x_0 has A_i x_0 = M z with
 * z = A_S x_0 = argmin_z |M z - b_i|, i.e. z minimizes |z - b_K|^2 + |N z - b_D|^2, N = L~_D L~_K^{-1}:
 * (I + N^T N) z = b_K + N^T b_D, solved by conjugate gradients (the matrix is >= I, its condition number
 * 1 + |N|^2; a consistent b_i is already the answer z = b_K, found at the first residual). N and N^T are
 * applied with one sweep over L each. b_S' = z then makes {x : A_S x = b_S'} the set of local least-squares
 * solutions, as in ./../distributed/rowSpace.ts.
 */
import { SingularMatrixError } from '../errors.js';
import type { CsrMatrix } from './csr.js';
import { ConjugateGradients } from './conjugateGradients.js';
import { analyzeCholesky, factorCholesky } from './sparseCholesky.js';

/** Relative residual |(I + N^T N) z - rhs| / |rhs| the conjugate gradients stop at. */
const CG_TOLERANCE = 1e-14;
/** Accepted when the iterations run out above CG_TOLERANCE: still ~1e-10 of |z| for |N| <= 100. */
const CG_ACCEPTED = 1e-10;

export interface GramRowBasis {
  /** Kept rows, local indices ascending. */
  readonly rows: Int32Array;
  /** b_S' = A_S A_i^+ b_i, aligned with rows. */
  readonly rhs: Float64Array;
}

/** Independent rows and b_S' of the machine whose Gram matrix is g (full symmetric pattern) and right-hand side b. */
export function gramRowBasis(g: CsrMatrix, b: Float64Array): GramRowBasis {
  const p = g.rows;
  const dropped = new Uint8Array(p);
  const factor = factorCholesky(g, analyzeCholesky(g), { dropped });
  const { colPtr, rowIdx, ordering } = factor.symbolic;
  const lValues = factor.values;
  const perm = ordering.perm;
  // v in pivot order; y = N z: forward sweep solving L~_K u = z over the kept columns, the dropped rows gathering -L~_D u.
  const sweep = new Float64Array(p);
  const applyN = (z: Float64Array, out: Float64Array): void => {
    for (let k = 0; k < p; k++) sweep[k] = dropped[k] === 1 ? 0 : z[k];
    for (let j = 0; j < p; j++) {
      if (dropped[j] === 1) continue;
      const u = sweep[j] / lValues[colPtr[j]];
      sweep[j] = u;
      for (let q = colPtr[j] + 1; q < colPtr[j + 1]; q++) sweep[rowIdx[q]] -= lValues[q] * u;
    }
    for (let k = 0; k < p; k++) out[k] = dropped[k] === 1 ? -sweep[k] : 0;
  };
  // out = N^T w = L~_K^{-T} L~_D^T w: backward sweep, t_i = w_i on D and -y_i on K, y_j = (sum_{i > j} L_ij t_i) / L_jj.
  const applyNt = (w: Float64Array, out: Float64Array): void => {
    for (let k = 0; k < p; k++) sweep[k] = dropped[k] === 1 ? w[k] : 0;
    for (let j = p - 1; j >= 0; j--) {
      if (dropped[j] === 1) continue;
      let s = 0;
      for (let q = colPtr[j] + 1; q < colPtr[j + 1]; q++) s += lValues[q] * sweep[rowIdx[q]];
      sweep[j] = -s / lValues[colPtr[j]];
    }
    for (let k = 0; k < p; k++) out[k] = dropped[k] === 1 ? 0 : -sweep[k];
  };
  // Vectors of length p in pivot order; the K entries carry z, the D entries N z (zero elsewhere).
  const bPivot = new Float64Array(p);
  for (let k = 0; k < p; k++) bPivot[k] = b[perm[k]];
  const apply = (z: Float64Array, out: Float64Array, work: Float64Array): void => {
    applyN(z, work);
    applyNt(work, out);
    for (let k = 0; k < p; k++) if (dropped[k] === 0) out[k] += z[k];
  };
  const work = new Float64Array(p);
  const rhs = new Float64Array(p);
  const bD = new Float64Array(p);
  for (let k = 0; k < p; k++) if (dropped[k] === 1) bD[k] = bPivot[k];
  applyNt(bD, rhs);
  for (let k = 0; k < p; k++) if (dropped[k] === 0) rhs[k] += bPivot[k];
  const z = new Float64Array(p);
  for (let k = 0; k < p; k++) if (dropped[k] === 0) z[k] = bPivot[k];
  const rank = p - dropped.reduce((s, d) => s + d, 0);
  // The solver stops its recurrence at half its tolerance: CG_TOLERANCE |rhs|.
  const solver = new ConjugateGradients({ size: p, apply: (x, y) => apply(x, y, work) }, 2 * CG_TOLERANCE, 3 * rank + 50);
  const { relativeResidual } = solver.solve(rhs, z, 'given');
  if (!(relativeResidual <= CG_ACCEPTED) && rhs.some((v) => v !== 0)) {
    throw new SingularMatrixError(
      `The dependent rows of this block are combinations of its other rows with coefficients too large for their ` +
        `least-squares right-hand side (conjugate gradients reached a relative residual of ` +
        `${relativeResidual.toPrecision(3)}).`,
      { rows: p, rank },
    );
  }
  const kept: number[] = [];
  for (let k = 0; k < p; k++) if (dropped[k] === 0) kept.push(k);
  kept.sort((u, v) => perm[u] - perm[v]);
  return { rows: Int32Array.from(kept, (k) => perm[k]), rhs: Float64Array.from(kept, (k) => z[k]) };
}
