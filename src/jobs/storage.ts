/**
 * Which storage a job's matrix is computed on, decided once when the job is created (and reported
 * by every job as `storage`):
 * - dense rows, the Matrix Market array format and generators are dense, up to MAX_N;
 * - a stored matrix (POST /v1/matrices) is CSR, up to MAX_N_SPARSE, checked when a job names it and
 *   again by the worker (whose limits may differ from the API's);
 * - a coordinate input (COO triplets, Matrix Market coordinate text) is parsed to CSR (limits
 *   MAX_N_SPARSE and MAX_NNZ) and stays CSR when it is sparse: at most SPARSE_DENSITY of its n^2
 *   entries stored, or n above MAX_N (no dense storage can hold it). Otherwise (a small, dense-ish
 *   coordinate list) it is densified and runs on the dense path, which is then both cheaper and exact
 *   where the sparse path estimates (Lanczos) or refuses nearly dependent machine rows.
 * CSR computes on the analysis and all six algorithms without densifying (src/solvers/machines).
 */
import { ProblemTooLargeError } from '../solvers/errors.js';
import type { MatrixStorage } from './types.js';

/**
 * Most stored entries, as a fraction of n^2, of a coordinate input that runs on CSR. The dense path
 * holds each machine's rows and the orthonormal basis Q_i of their span, about 16 n^2 bytes; CSR holds
 * 12 bytes per entry plus each machine's Gram factor, and its passes cost O(nnz + fill) instead of
 * O(n^2). At 5% the CSR arrays are ~1/25 of the dense ones, a margin for the factors' fill.
 */
export const SPARSE_DENSITY = 0.05;

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

/**
 * The storage of a coordinate input already parsed to CSR (n x n, nnz stored entries, so within
 * MAX_N_SPARSE and MAX_NNZ): 'csr' when nnz <= SPARSE_DENSITY n^2 or n > maxN, else 'dense'.
 */
export function storageOfCoordinateMatrix(n: number, nnz: number, limits: { maxN: number }): MatrixStorage {
  return n > limits.maxN || nnz <= SPARSE_DENSITY * n * n ? 'csr' : 'dense';
}

/** The worker's check of a job's own CSR input against its MAX_N_SPARSE. */
export function checkCsrJobSize(jobId: string, n: number, limits: { maxNSparse: number }): void {
  if (n <= limits.maxNSparse) return;
  throw new ProblemTooLargeError(`The matrix of job '${jobId}' has n = ${n}; at most n = ${limits.maxNSparse} (MAX_N_SPARSE) is allowed.`, {
    n,
    maxNSparse: limits.maxNSparse,
  });
}
