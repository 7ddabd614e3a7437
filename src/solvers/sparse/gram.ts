/**
 * The Gram matrix G_i = A_i A_i^T of one machine's rows (docs/SPEC.md: the projection
 * P_i = I - A_i^T (A_i A_i^T)^{-1} A_i), sparse: the p x p matrix in CSR with its FULL symmetric
 * pattern (both triangles, sorted columns), which is also its CSC form. sparseCholesky.ts reads it
 * as is; Lanczos-type operators can multiply with it directly.
 *
 * Computed row by row through the column structure (A_i^T, i.e. A_i in compressed columns):
 * row r of G is sum over the entries a_rk of row r of a_rk * (row k of A_i^T), accumulated in one
 * dense vector of length p (Gustavson's sparse product), in one pass into a buffer that grows when a
 * row's bound (the sum of its columns' entry counts) does not fit. No p x p or p x n dense
 * intermediate. The rows come out with their columns unsorted; transposing the result sorts them
 * (a counting sort by column) and, G being symmetric, is G again: G[c][r] and G[r][c] sum the same
 * products a_rk a_ck in the same order (k ascending along sorted rows), so G is exactly symmetric
 * and equal to what sorting each row would give, bit for bit.
 * The columns of A_i are taken on the range they span (a machine's rows of a banded or grid matrix
 * span few of A's columns), and on their column support when that range is much wider than the
 * entries. O(nnz(A_i) + nnz(G_i) + flops + span), independent of the number of columns of A.
 */
import { columnSupport, restrictColumns, type CsrMatrix } from './csr.js';

/** A range of columns wider than this many times (entries + rows) is compressed to the column support first. */
const WIDE = 8;

/** A A^T for an m x n CSR matrix A: m x m, full symmetric pattern, explicit zeros only where products cancel. */
export function gramMatrix(wide: CsrMatrix): CsrMatrix {
  const m = wide.rows;
  const nnz = wide.rowPtr[m];
  let low = wide.cols;
  let high = -1;
  for (let q = 0; q < nnz; q++) {
    const k = wide.colIdx[q];
    if (k < low) low = k;
    if (k > high) high = k;
  }
  if (high < low) return { rows: m, cols: m, rowPtr: new Int32Array(m + 1), colIdx: new Int32Array(0), values: new Float64Array(0) };
  if (high - low + 1 > WIDE * (nnz + m)) return productOfRows(restrictColumns(wide, columnSupport(wide)), 0, wide.cols);
  return productOfRows(wide, low, high - low + 1);
}

/** G = A A^T for A whose columns lie in [low, low + span). */
function productOfRows(a: CsrMatrix, low: number, span: number): CsrMatrix {
  const m = a.rows;
  const { rowPtr, colIdx, values } = a;
  const nnz = rowPtr[m];
  // A^T on the span: the rows holding each column, ascending, with their values.
  const tPtr = new Int32Array(span + 1);
  for (let q = 0; q < nnz; q++) tPtr[colIdx[q] - low + 1]++;
  for (let k = 0; k < span; k++) tPtr[k + 1] += tPtr[k];
  const next = tPtr.slice(0, span);
  const tIdx = new Int32Array(nnz);
  const tValues = new Float64Array(nnz);
  for (let r = 0; r < m; r++) {
    for (let q = rowPtr[r]; q < rowPtr[r + 1]; q++) {
      const t = next[colIdx[q] - low]++;
      tIdx[t] = r;
      tValues[t] = values[q];
    }
  }

  // Rows of G, columns unsorted, into a growing buffer.
  let capacity = Math.max(16, 4 * (nnz + m));
  let uIdx = new Int32Array(capacity);
  let uValues = new Float64Array(capacity);
  const uPtr = new Int32Array(m + 1);
  const mark = new Int32Array(m).fill(-1);
  const accumulator = new Float64Array(m);
  let end = 0;
  for (let r = 0; r < m; r++) {
    let bound = 0;
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
      const k = colIdx[p] - low;
      bound += tPtr[k + 1] - tPtr[k];
    }
    if (end + Math.min(bound, m) > capacity) {
      capacity = Math.max(2 * capacity, end + Math.min(bound, m));
      const idx = new Int32Array(capacity);
      idx.set(uIdx.subarray(0, end));
      uIdx = idx;
      const vals = new Float64Array(capacity);
      vals.set(uValues.subarray(0, end));
      uValues = vals;
    }
    const start = end;
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
      const k = colIdx[p] - low;
      const ark = values[p];
      for (let q = tPtr[k]; q < tPtr[k + 1]; q++) {
        const c = tIdx[q];
        if (mark[c] !== r) {
          mark[c] = r;
          uIdx[end++] = c;
          accumulator[c] = ark * tValues[q];
        } else {
          accumulator[c] += ark * tValues[q];
        }
      }
    }
    for (let q = start; q < end; q++) uValues[q] = accumulator[uIdx[q]];
    uPtr[r + 1] = end;
  }

  // The transpose of the unsorted rows: G with sorted rows (G is symmetric).
  const gPtr = new Int32Array(m + 1);
  for (let q = 0; q < end; q++) gPtr[uIdx[q] + 1]++;
  for (let c = 0; c < m; c++) gPtr[c + 1] += gPtr[c];
  const fill = gPtr.slice(0, m);
  const gIdx = new Int32Array(end);
  const gValues = new Float64Array(end);
  for (let r = 0; r < m; r++) {
    for (let q = uPtr[r]; q < uPtr[r + 1]; q++) {
      const t = fill[uIdx[q]]++;
      gIdx[t] = r;
      gValues[t] = uValues[q];
    }
  }
  return { rows: m, cols: m, rowPtr: gPtr, colIdx: gIdx, values: gValues };
}
