import type { CsrMatrix } from '../../src/solvers/sparse/csr.js';

/** |A|_1 |A|_inf >= |A|_2^2 = lambda_max(A^T A): step sizes from it keep every gradient method stable. */
export function normProductBound(a: CsrMatrix): number {
  const columnSums = new Float64Array(a.cols);
  let rowMax = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) {
      s += Math.abs(a.values[e]);
      columnSums[a.colIdx[e]] += Math.abs(a.values[e]);
    }
    rowMax = Math.max(rowMax, s);
  }
  return rowMax * Math.max(...columnSums);
}
