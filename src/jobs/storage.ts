/**
 * Which storage a job's matrix is computed on. Dense input (dense rows, COO, Matrix Market JSON,
 * generators) is dense, up to MAX_N. A stored matrix (POST /v1/matrices) is kept as CSR in the store
 * and computed on as CSR (the analysis and all six algorithms run on it, src/solvers/machines), never
 * densified: MAX_N_SPARSE bounds it, checked when a job names it and again by the worker (whose
 * limits may differ from the API's).
 */
import { ProblemTooLargeError } from '../solvers/errors.js';
import type { MatrixStorage } from './types.js';

/** The storage a job on a stored n x n matrix runs on; ProblemTooLargeError when none can hold it. */
export function storageOfStoredMatrix(matrixId: string, n: number, limits: { maxNSparse: number }): MatrixStorage {
  if (n <= limits.maxNSparse) return 'csr';
  throw new ProblemTooLargeError(
    `The stored matrix '${matrixId}' has n = ${n}; at most n = ${limits.maxNSparse} (MAX_N_SPARSE) is allowed.`,
    {
      n,
      maxNSparse: limits.maxNSparse,
      matrix: matrixId,
    },
  );
}
