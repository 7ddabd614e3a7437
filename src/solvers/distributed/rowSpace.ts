/**
 * The row space of a machine whose rows are linearly dependent (possible on a tall system of full
 * column rank): which rows span it, an orthonormal basis of it, and the machine's local
 * least-squares solution in that basis. Shared by the dense machines (./distributedSystem.ts) and the
 * CSR ones (./sparseSystem.ts, on the machine's column support).
 */
import type { Work } from '../cooperative.js';
import { householderQrWork } from '../linalg/householderQr.js';
import type { Kernels } from '../linalg/kernels.js';
import { norm2 } from '../matrix.js';

/**
 * A row is taken as dependent on a machine's earlier rows when the part of it orthogonal to them is
 * at most this fraction of its norm (an angle below ~1e-10 rad to their span).
 */
export const RANK_TOLERANCE = 1e-10;

/**
 * Rows of a p x c row-major block that are linearly independent of the rows before them, greedily
 * in row order (rankRevealingRows). Local indices, ascending.
 */
export function independentRows(kernels: Kernels, a: Float64Array, p: number, c: number): Int32Array {
  return rankRevealingRows(kernels, p, c, (k, v) => v.set(a.subarray(k * c, (k + 1) * c))).rows;
}

/**
 * The rows of a p x c block (row k written into v by `fill`) that are linearly independent of the rows before them,
 * greedily in row order, and an orthonormal basis of their span: a rank-revealing Gram-Schmidt, each row orthogonalized
 * twice against the rows kept by the backend's classical Gram-Schmidt pass; row k is dependent when what is left of it is
 * at most RANK_TOLERANCE |a_k|. Past c kept rows the rest are dependent and not read. Memory: the basis (rank x c).
 */
export function rankRevealingRows(
  kernels: Kernels,
  p: number,
  c: number,
  fill: (k: number, v: Float64Array) => void,
): { rows: Int32Array; basis: Float64Array } {
  // The kept rows' orthonormal basis, row by row (at most c of them).
  const basis = new Float64Array(Math.min(p, c) * c);
  const h = new Float64Array(Math.min(p, c));
  const kept: number[] = [];
  const v = new Float64Array(c);
  for (let k = 0; k < p && kept.length < c; k++) {
    fill(k, v);
    const size = norm2(v);
    if (size === 0) continue;
    for (let pass = 0; pass < 2; pass++) kernels.dense.projectOut(basis, c, kept.length, v, h);
    const left = norm2(v);
    if (left <= RANK_TOLERANCE * size) continue;
    const u = basis.subarray(kept.length * c, (kept.length + 1) * c);
    for (let t = 0; t < c; t++) u[t] = v[t] / left;
    kept.push(k);
  }
  return { rows: Int32Array.from(kept), basis: basis.subarray(0, kept.length * c) };
}

export interface RowSpaceBasis {
  /** Q_i^T (rank x c, row-major): the Householder QR of the independent rows, A_S^T = Q_i R_S. */
  readonly q: Float64Array;
  /** R_i = Q_i^T A_i^T (rank x p, row-major): A_i = R_i^T Q_i^T, every row of A_i in the basis. */
  readonly reduced: Float64Array;
  /**
   * Q_i^T A_i^+ b_i (length rank), A_i^+ the pseudo-inverse: the coordinates of the machine's
   * minimum-norm local least-squares solution, argmin_y |R_i^T y - b_i| by the QR of R_i^T.
   */
  readonly qtx0: Float64Array;
}

export function* rowSpaceBasisWork(
  kernels: Kernels,
  a: Float64Array,
  p: number,
  c: number,
  independent: Int32Array,
  b: Float64Array,
): Work<RowSpaceBasis> {
  const rank = independent.length;
  const selected = new Float64Array(rank * c);
  for (let t = 0; t < rank; t++) selected.set(a.subarray(independent[t] * c, (independent[t] + 1) * c), t * c);
  const { q } = yield* householderQrWork(kernels, selected, rank, c);
  yield undefined;
  // R_i = Q_i^T A_i^T: row t is A_i q_t, the backend's product of the rank rows of Q_i^T with A_i's p rows.
  const reduced = new Float64Array(rank * p);
  kernels.dense.multiplyByTransposeRows(q, a, c, 0, rank, p, reduced, p);
  yield undefined;
  // R_i^T = U T (QR of the p x rank matrix R_i^T, stored as its rank rows), y = T^{-1} U^T b_i.
  const { q: u, r: triangle } = yield* householderQrWork(kernels, reduced, rank, p);
  const y = new Float64Array(rank);
  for (let t = 0; t < rank; t++) {
    let s = 0;
    for (let j = 0; j < p; j++) s += u[t * p + j] * b[j];
    y[t] = s;
  }
  for (let t = rank - 1; t >= 0; t--) {
    let s = y[t];
    for (let v = t + 1; v < rank; v++) s -= triangle[t * rank + v] * y[v];
    y[t] = s / triangle[t * rank + t];
  }
  return { q, reduced, qtx0: y };
}
