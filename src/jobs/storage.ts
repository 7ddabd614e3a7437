/**
 * Which storage a job's matrix is computed on. Dense input (dense rows, COO, Matrix Market JSON,
 * generators) is dense, up to MAX_N. A stored matrix (POST /v1/matrices) is kept as CSR in the store
 * and read as CSR by the worker; a job computes on it as CSR once the solvers run a whole job on CSR
 * (the analysis and all six algorithms: so far createProblem and the gradient methods take CSR, the
 * analysis and the projection methods do not). Until then the worker densifies it, so it must fit
 * the dense limit MAX_N: a larger stored matrix is refused (413) when a job names it, and again by
 * the worker (whose MAX_N may differ). When the solvers take CSR, this answers 'csr' up to
 * MAX_N_SPARSE and ../store/readyJob.ts passes the CSR matrix through.
 */
import { ProblemTooLargeError } from '../solvers/errors.js';
import type { MatrixStorage } from './types.js';

/** The storage a job on a stored n x n matrix runs on; ProblemTooLargeError when none can hold it. */
export function storageOfStoredMatrix(matrixId: string, n: number, limits: { maxN: number }): MatrixStorage {
  if (n <= limits.maxN) return 'dense';
  throw new ProblemTooLargeError(
    `The stored matrix '${matrixId}' has n = ${n}; jobs compute on dense storage, at most n = ${limits.maxN} (MAX_N), ` +
      'until the analysis and the projection methods run on sparse (CSR) storage.',
    { n, maxN: limits.maxN, matrix: matrixId },
  );
}
