/**
 * The independent rows S of a CSR machine whose rows are dependent, and b_S' = A_S x_0 (x_0 = A_i^+ b_i, the minimum-norm
 * local least-squares solution), streamed over its rows: memory O(rank c) for any number of rows p. The TypeScript
 * backend's route where that basis is small enough (./sparseSystem.ts rowSpaceRoute); the native one runs SuiteSparseQR.
 *
 * 1. S: ./rowSpace.ts rankRevealingRows (the dense path's rank-revealing Gram-Schmidt, at RANK_TOLERANCE) on the rows
 *    densified one at a time, with U (rank x c, orthonormal rows) spanning R(A_i).
 * 2. x_0 = U^T y, y = argmin |Z y - b_i|, Z = A_i U^T (p x rank: row k holds row k's coordinates in the basis; what a
 *    dependent row has outside the span is below RANK_TOLERANCE of its norm, as in the dense path's R_i = Q_i^T A_i^T).
 *    By Householder QR streamed over blocks of rows (a sequential TSQR): [R; Z_block] = Q' R', d' = Q'^T [d; b_block],
 *    R (rank x rank) and d (rank) kept between blocks; the kept rows come first, so R is nonsingular from the start.
 *    Then y = R^{-1} d.
 * 3. b_S' = A_S x_0.
 */
import type { Work } from '../cooperative.js';
import type { Kernels } from '../linalg/kernels.js';
import { multiply, selectRows, type CsrMatrix } from '../sparse/csr.js';
import { rankRevealingRows } from './rowSpace.js';

/** Rows of a streamed block, in multiples of the rank (a block's QR costs ~2 rank^2 (rank + block) flops). */
const BLOCK_PER_RANK = 4;

/** S (local indices, ascending) and b_S' of the p x c block `a` (CSR, every row nonzero) with right-hand side b. */
export function* streamedRowBasisWork(kernels: Kernels, a: CsrMatrix, b: Float64Array): Work<{ rows: Int32Array; rhs: Float64Array }> {
  const { rows: p, cols: c, rowPtr, colIdx, values } = a;
  const scatter = (k: number, v: Float64Array, offset: number): void => {
    for (let e = rowPtr[k]; e < rowPtr[k + 1]; e++) v[offset + colIdx[e]] = values[e];
  };
  const { rows, basis } = rankRevealingRows(kernels, p, c, (k, v) => {
    v.fill(0);
    scatter(k, v, 0);
  });
  yield undefined;
  const rank = rows.length;
  if (rank === 0) return { rows, rhs: new Float64Array(0) };
  // The kept rows first (Z_S is nonsingular), then the others.
  const kept = new Uint8Array(p);
  for (const k of rows) kept[k] = 1;
  const order = Int32Array.from({ length: p }, (_, t) => t).sort((u, v) => kept[v] - kept[u] || u - v);
  const block = Math.max(rank, BLOCK_PER_RANK * rank);
  const width = rank + block;
  const dense = new Float64Array(block * c);
  // M^T for M = [R; Z_block] ((rank + block) x rank): rank rows of length `width`.
  const stacked = new Float64Array(rank * width);
  const rhs = new Float64Array(width);
  let r: Float64Array | null = null;
  const d = new Float64Array(rank);
  for (let start = 0; start < p; start += block) {
    const count = Math.min(block, p - start);
    dense.fill(0);
    for (let t = 0; t < count; t++) scatter(order[start + t], dense, t * c);
    stacked.fill(0);
    // Row i of M^T: R's column i (R[u][i], u <= i), then Z_block's column i (row i of U times the block's rows).
    if (r !== null) for (let i = 0; i < rank; i++) for (let u = 0; u <= i; u++) stacked[i * width + u] = r[u * rank + i];
    kernels.dense.multiplyByTransposeRows(basis, dense, c, 0, rank, count, stacked.subarray(rank), width);
    rhs.fill(0);
    rhs.set(d);
    for (let t = 0; t < count; t++) rhs[rank + t] = b[order[start + t]];
    // M^T = R'^T q, i.e. M = q^T R': Q'^T = q (rank x width), d' = q [d; b_block].
    const qr = yield* kernels.dense.thinQrWork(stacked, rank, width);
    kernels.dense.multiplyByTransposeRows(qr.q, rhs, width, 0, rank, 1, d, 1);
    r = qr.r;
  }
  // y = R^{-1} d in place (R upper triangular, row-major), x_0 = U^T y, then b_S' = A_S x_0.
  kernels.dense.solveRBlock(r!, rank, d, 1);
  const x0 = new Float64Array(c);
  kernels.dense.combineRows(basis, c, rank, d, x0);
  return { rows, rhs: multiply(selectRows(a, rows), x0, new Float64Array(rank)) };
}
