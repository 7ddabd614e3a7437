/**
 * The LU of a symmetric positive definite A from its sparse Cholesky factor (./sparseCholesky.ts):
 * P A P^T = C C^T is P A P^T = L U with L = C D^{-1} (unit lower) and U = D C^T, D = diag(C), the LU
 * that diagonal pivoting gives, in the layout of every LU here (LuFactorArrays), so that its solves,
 * native and TypeScript, and its transfer to solver threads stay those of ./sparseLu.ts.
 *
 * Why: the Cholesky does half the flops of the left-looking LU on the same fill-reducing order (AMD
 * on the pattern, the LU's symmetric strategy) and no pivot search. On the 2-D Poisson matrix
 * n = 10^6 this route takes 46 s where the LU takes 198 s, for the same 89 million entries of L + U
 * (bench/sparseLuProfile.ts). MATLAB's backslash and SuiteSparse (CHOLMOD before
 * UMFPACK) make the same choice: a symmetric matrix with a positive diagonal is tried by Cholesky first.
 *
 * A symmetric matrix that is not numerically positive definite (a pivot d_k <= 16 c_k u A_kk, the
 * Cholesky's test) gives null, and the caller factors it by LU with pivoting. The native backend takes
 * the same route with CHOLMOD's factor (../machines/placement.ts).
 */
import type { Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import type { CsrMatrix } from './csr.js';
import { isSortedSymmetricPattern } from './ordering.js';
import { analyzeCholesky, refactorCholeskyWork, type CholeskyFactor, type CholeskySymbolic } from './sparseCholesky.js';
import type { LuFactorArrays } from '../linalg/backend.js';

/** The LU of a Cholesky factor: a SparseLuFactorization (./sparseLu.ts) with the 'cholesky' strategy, declared here so that neither file imports the other's. */
export interface CholeskyLu extends LuFactorArrays {
  readonly n: number;
  readonly ordering: 'cholesky';
  /** No threshold: every pivot is on the diagonal. */
  readonly pivotThreshold: 0;
}

/** Whether A is square with a sorted symmetric pattern, equal mirrored values and a positive diagonal: a candidate for Cholesky. */
export function isSymmetricWithPositiveDiagonal(a: CsrMatrix): boolean {
  if (!isSortedSymmetricPattern(a)) return false;
  const n = a.rows;
  const { rowPtr, colIdx, values } = a;
  // Row by row, the mirror (j, i) of each entry (i, j) is the next unread entry of row j (the pattern is sorted and symmetric).
  const cursor = rowPtr.slice(0, n);
  for (let i = 0; i < n; i++) {
    let diagonal = false;
    for (let q = rowPtr[i]; q < rowPtr[i + 1]; q++) {
      const j = colIdx[q];
      const mirror = cursor[j]++;
      if (j === i) diagonal = values[q] > 0;
      else if (values[mirror] !== values[q]) return false;
    }
    if (!diagonal) return false;
  }
  return true;
}

/**
 * P A P^T = L U from the Cholesky factor of A (module comment); null when A is no candidate
 * (isSymmetricWithPositiveDiagonal) or not numerically positive definite, for the caller's LU with pivoting.
 * The factor is `cholesky`'s when given (the native backend's CHOLMOD, ../machines/placement.ts), else computed
 * here, cooperatively.
 */
export function* positiveDefiniteLuWork(a: CsrMatrix, cholesky?: (a: CsrMatrix) => CholeskyFactor): Work<CholeskyLu | null> {
  if (!isSymmetricWithPositiveDiagonal(a)) return null;
  let factor: CholeskyFactor;
  try {
    factor = cholesky === undefined ? yield* choleskyWork(a) : cholesky(a);
  } catch (error) {
    if (error instanceof SingularMatrixError) return null;
    throw error;
  }
  yield undefined;
  return luOfCholesky(factor);
}

/** The TypeScript up-looking Cholesky of A, yielding as it goes. */
function* choleskyWork(a: CsrMatrix): Work<CholeskyFactor> {
  const analysis = analyzeCholesky(a);
  yield undefined;
  const factor: CholeskyFactor = { symbolic: analysis, values: new Float64Array(analysis.nnzL), work: new Float64Array(a.rows), analysis };
  yield* refactorCholeskyWork(factor, a);
  return factor;
}

/**
 * The LU of P A P^T = C C^T from C (a factor computed here or adopted from CHOLMOD): L = C D^{-1} takes C's
 * arrays (its values overwritten: the factor is spent), U = D C^T is built.
 */
function luOfCholesky(factor: { readonly symbolic: CholeskySymbolic; readonly values: Float64Array }): CholeskyLu {
  const { n, colPtr, rowIdx, nnzL, ordering } = factor.symbolic;
  const c = factor.values;
  // U = D C^T by columns: column i of U is row i of C (entries C(i, j), j <= i) times D_j, rows ascending, the diagonal last.
  const uColPtr = new Int32Array(n + 1);
  for (let p = 0; p < nnzL; p++) uColPtr[rowIdx[p] + 1]++;
  for (let i = 0; i < n; i++) uColPtr[i + 1] += uColPtr[i];
  const uRowIdx = new Int32Array(nnzL);
  const uValues = new Float64Array(nnzL);
  const next = uColPtr.slice(0, n);
  for (let j = 0; j < n; j++) {
    const d = c[colPtr[j]];
    for (let p = colPtr[j]; p < colPtr[j + 1]; p++) {
      const t = next[rowIdx[p]]++;
      uRowIdx[t] = j;
      uValues[t] = c[p] * d;
    }
  }
  // L = C D^{-1} in place: C's columns already hold the diagonal first and rows ascending in the pivot order.
  for (let j = 0; j < n; j++) {
    const d = c[colPtr[j]];
    c[colPtr[j]] = 1;
    for (let p = colPtr[j] + 1; p < colPtr[j + 1]; p++) c[p] /= d;
  }
  // Rows and columns are pivoted alike: row perm[k] of A is row k of P A, column k of A P^T is column perm[k].
  return {
    n,
    lColPtr: colPtr,
    lRowIdx: rowIdx,
    lValues: c,
    uColPtr,
    uRowIdx,
    uValues,
    rowPivot: ordering.inverse,
    columnOrder: ordering.perm,
    ordering: 'cholesky',
    pivotThreshold: 0,
  };
}
