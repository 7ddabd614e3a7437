/**
 * The Gram matrix G_i = A_i A_i^T of one machine's rows (docs/SPEC.md: the projection
 * P_i = I - A_i^T (A_i A_i^T)^{-1} A_i), sparse: the p x p matrix in CSR with its FULL symmetric
 * pattern (both triangles, sorted columns), which is also its CSC form. sparseCholesky.ts reads it
 * as is; Lanczos-type operators can multiply with it directly.
 *
 * Computed row by row through the column structure (A_i^T, i.e. A_i in compressed columns):
 * row r of G is sum over the entries a_rk of row r of a_rk * (row k of A_i^T), accumulated in one
 * dense vector of length p (Gustavson's sparse product). No p x p or p x n dense intermediate.
 * G[r][c] and G[c][r] sum the same products a_rk a_ck in the same order (k ascending), so G is
 * exactly symmetric. O(nnz(A_i) + nnz(G_i) + flops), independent of the number of columns of A
 * (a wide A_i is first restricted to its column support).
 */
import { columnSupport, nnzOf, restrictColumns, transpose, type CsrMatrix } from './csr.js';

/** A A^T for an m x n CSR matrix A: m x m, full symmetric pattern, explicit zeros only where products cancel. */
export function gramMatrix(wide: CsrMatrix): CsrMatrix {
  // A machine's rows of a matrix with many more columns than entries: work on its column support.
  const a = wide.cols > 8 * (nnzOf(wide) + wide.rows) ? restrictColumns(wide, columnSupport(wide)) : wide;
  const m = a.rows;
  const { rowPtr, colIdx, values } = a;
  const at = transpose(a);
  const tPtr = at.rowPtr;
  const tIdx = at.colIdx;
  const tValues = at.values;

  // Symbolic pass: the pattern size of each row (marker stamped with the row).
  const mark = new Int32Array(m).fill(-1);
  const gPtr = new Int32Array(m + 1);
  for (let r = 0; r < m; r++) {
    let count = 0;
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
      const k = colIdx[p];
      for (let q = tPtr[k]; q < tPtr[k + 1]; q++) {
        const c = tIdx[q];
        if (mark[c] !== r) {
          mark[c] = r;
          count++;
        }
      }
    }
    gPtr[r + 1] = gPtr[r] + count;
  }

  // Numeric pass: accumulate, sort the row's columns, gather.
  const gIdx = new Int32Array(gPtr[m]);
  const gValues = new Float64Array(gPtr[m]);
  const accumulator = new Float64Array(m);
  mark.fill(-1);
  for (let r = 0; r < m; r++) {
    let end = gPtr[r];
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
      const k = colIdx[p];
      const ark = values[p];
      for (let q = tPtr[k]; q < tPtr[k + 1]; q++) {
        const c = tIdx[q];
        if (mark[c] !== r) {
          mark[c] = r;
          gIdx[end++] = c;
          accumulator[c] = ark * tValues[q];
        } else {
          accumulator[c] += ark * tValues[q];
        }
      }
    }
    gIdx.subarray(gPtr[r], end).sort();
    for (let q = gPtr[r]; q < end; q++) gValues[q] = accumulator[gIdx[q]];
  }
  return { rows: m, cols: m, rowPtr: gPtr, colIdx: gIdx, values: gValues };
}
