/**
 * The sparse LU of A on the native backend's sparse part (UMFPACK, native/src/lu_native.c), adopted as an
 * ordinary SparseLuFactorization (../sparse/sparseLu.ts adoptLu: the same layout, the same pivot test, the
 * same SingularMatrixError), so the shift-invert solves of the analysis do not depend on where it was
 * computed. UMFPACK's objects are freed inside the call. placement.ts decides when this is used.
 */
import type { NativeSparse } from '../linalg/backend.js';
import { transpose, type CsrMatrix } from '../sparse/csr.js';
import { adoptLu, type SparseLuFactorization } from '../sparse/sparseLu.js';
import { NotSquareError } from '../errors.js';

export function factorLuNative(sparse: NativeSparse, a: CsrMatrix): SparseLuFactorization {
  if (a.rows !== a.cols) throw new NotSquareError(a.rows, a.cols);
  // A's compressed columns are the compressed rows of A^T (transpose sorts each row's indices).
  const columns = transpose(a);
  return adoptLu(a, sparse.umfpackLu(a.rows, columns.rowPtr, columns.colIdx, columns.values));
}
