/**
 * Which jobs are predicted small, from their size alone (nothing has run yet): an upper estimate of
 * a job's floating-point work, compared with SMALL_JOB_MAX_FLOPS. A key's first pending job, when
 * small, is queued for the workers' small-job slots (./fairShare.ts), so it starts at once even
 * while another key's long jobs hold every other slot.
 *
 * The estimate: the analysis (every job runs one: eigenvalue problems and principal angles on n x n
 * matrices, counted as ANALYSIS_FLOPS_PER_N3 n^3) plus, per algorithm, maxIterations iterations of
 * ITERATION_FLOPS_PER_ENTRY flops per stored entry of A (n^2 dense, nnz sparse). Iterations are
 * counted up to maxIterations: a solve that meets its tolerance earlier was smaller than predicted,
 * never larger. Measured on the native backend (2 cores), the analysis at n = 1000 takes 0.36 s and
 * one APC iteration at n = 300 45 us, about 3 and 2 times faster than these constants imply, so a
 * job at the default limit (1e9) runs well under a second; the TypeScript backend is 5-8 times slower.
 * A job on a stored matrix (POST /v1/matrices) is never small here: its nnz is not in the request.
 */
import { nnzOf } from '../../solvers/sparse/csr.js';
import type { JobSpec } from '../types.js';

const ANALYSIS_FLOPS_PER_N3 = 10;
const ITERATION_FLOPS_PER_ENTRY = 4;

/** Upper estimate of the job's floating-point work; Infinity when its size is not known from the request. */
export function predictedFlops(spec: Pick<JobSpec, 'n' | 'matrix' | 'algorithms' | 'options'>): number {
  const { n, matrix } = spec;
  if (matrix.kind === 'stored') return Infinity;
  const entries = matrix.kind === 'csr' ? nnzOf(matrix.A) : n * n;
  const analysis = ANALYSIS_FLOPS_PER_N3 * n ** 3;
  return analysis + spec.algorithms.length * spec.options.maxIterations * ITERATION_FLOPS_PER_ENTRY * entries;
}

export function isSmallJob(spec: Pick<JobSpec, 'n' | 'matrix' | 'algorithms' | 'options'>, maxFlops: number): boolean {
  return predictedFlops(spec) <= maxFlops;
}
