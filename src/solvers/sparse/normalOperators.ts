/**
 * A^T A of a CSR A and its inverse as operators for the Lanczos runs (../eigen/lanczos.ts), nothing formed:
 * the products of kappa(A^T A) = L / mu (../analysis/conditioning.ts).
 */
import type { SymmetricOperator } from '../eigen/symmetricOperator.js';
import type { CsrMatrix } from './csr.js';
import { typescriptLuSolves, type LuSolves, type SparseLuFactorization } from './sparseLu.js';

/** v -> A^T (A v) in one pass over the rows of A, y = sum_k a_k (a_k . v) (square or not: size = cols). */
export function normalOperatorOfSparse(a: CsrMatrix): SymmetricOperator {
  const { rows, rowPtr, colIdx, values } = a;
  return {
    size: a.cols,
    apply(x, y) {
      y.fill(0, 0, a.cols);
      for (let i = 0; i < rows; i++) {
        const end = rowPtr[i + 1];
        let s = 0;
        for (let p = rowPtr[i]; p < end; p++) s += values[p] * x[colIdx[p]];
        if (s === 0) continue;
        for (let p = rowPtr[i]; p < end; p++) y[colIdx[p]] += values[p] * s;
      }
    },
  };
}

/** v -> (A^T A)^{-1} v = A^{-1} (A^{-T} v) through a sparse LU of A (its solves: the TypeScript ones unless given). */
export function inverseNormalOperatorOfSparse(f: SparseLuFactorization, solves: LuSolves = typescriptLuSolves(f)): SymmetricOperator {
  const t = new Float64Array(f.n);
  return {
    size: f.n,
    apply(x, y) {
      solves.solveTransposed(x, t);
      solves.solve(t, y);
    },
  };
}
