/**
 * Compressed sparse row storage, the sparse path's one matrix type (as SciPy's csr_matrix):
 * row k's entries are colIdx / values[rowPtr[k] .. rowPtr[k + 1]), column indices strictly
 * ascending within a row (no duplicates, explicit zeros allowed but never created here).
 * Int32 indices: nnz is limited far below 2^31 by MAX_NNZ.
 */
export interface CsrMatrix {
  readonly rows: number;
  readonly cols: number;
  /** Length rows + 1; rowPtr[0] = 0, rowPtr[rows] = nnz. */
  readonly rowPtr: Int32Array;
  /** Length nnz. */
  readonly colIdx: Int32Array;
  /** Length nnz. */
  readonly values: Float64Array;
}

export function nnzOf(a: CsrMatrix): number {
  return a.rowPtr[a.rows];
}
