/**
 * The two points the algorithms converge to on a tall system (N > n) whose equations need not be
 * consistent:
 *  - x_LS = argmin |A x - b|, the least-squares solution: the fixed point of the gradient methods
 *    (DGD, D-NAG, D-HBM), whose steps are x -= alpha sum_i A_i^T (A_i x - b_i);
 *  - x_W = argmin sum_i |Q_i^T x - Q_i^T A_i^+ b_i|^2, the block-weighted solution: the fixed point
 *    of the projection methods (APC, block Cimmino, MLM), where sum_i A_i^+ (A_i x - b_i) = 0. For
 *    machines of full row rank, A_i^+ = A_i^T (A_i A_i^T)^{-1} and this is
 *    argmin sum_i |L_i^{-1} (A_i x - b_i)|^2 with L_i L_i^T = A_i A_i^T; for one with dependent rows
 *    A_i^+ is the pseudo-inverse (every machine's solution set is its local least-squares set).
 * Both are the unique solution x* when the system is consistent. Each comes from a Householder QR
 * of a tall matrix: A for x_LS, the stacked bases Q^T = [Q_1^T; ...; Q_m^T] for x_W (n x n
 * matrices are never formed, so neither kappa is squared). Dense: O(N n^2); a CSR system is read
 * densely (at most MAX_TALL_DENSE_ENTRIES entries).
 */
import { runSync, type Work } from '../cooperative.js';
import { ProblemTooLargeError } from '../errors.js';
import { householderQrWork } from '../linalg/householderQr.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { norm2, type DenseMatrix } from '../matrix.js';
import { csrToDense } from '../sparse/csr.js';
import type { DistributedSystem, SolverSystem } from '../machines/machineData.js';
import { buildDistributedSystemWork } from './distributedSystem.js';

/** A tall system is consistent when |A x_LS - b| / |b| is at most this. */
export const CONSISTENCY_TOLERANCE = 1e-10;

/** Most entries (N n) of a tall CSR system read densely for its least-squares points and its analysis: 128 MiB. */
export const MAX_TALL_DENSE_ENTRIES = 2 ** 24;

export interface LeastSquaresPoints {
  /** argmin |A x - b|. */
  leastSquares: Float64Array;
  /** The projection methods' fixed point (module comment). */
  blockWeighted: Float64Array;
  /** leastSquaresResidual <= CONSISTENCY_TOLERANCE. */
  consistent: boolean;
  /** |A x_LS - b| / |b|. */
  leastSquaresResidual: number;
  /** |A x_W - b| / |b|. */
  weightedResidual: number;
  /** |x_W - x_LS| / |x_LS|. */
  weightedDistance: number;
}

export function isTall(system: SolverSystem): boolean {
  return system.A.rows > system.n;
}

/** argmin |M x - rhs| for a tall M of full column rank: M = Q R (Householder), x = R^{-1} Q^T rhs. */
export function* denseLeastSquaresWork(kernels: Kernels, M: DenseMatrix, rhs: Float64Array): Work<Float64Array> {
  const { rows, cols: n, data } = M;
  // The QR factors the transpose of its argument's rows: pass M^T (n x N) to factor M itself.
  const transposed = new Float64Array(n * rows);
  for (let i = 0; i < rows; i++) for (let j = 0; j < n; j++) transposed[j * rows + i] = data[i * n + j];
  yield undefined;
  const { q, r } = yield* householderQrWork(kernels, transposed, n, rows);
  const x = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let s = 0;
    const off = k * rows;
    for (let i = 0; i < rows; i++) s += q[off + i] * rhs[i];
    x[k] = s;
  }
  for (let k = n - 1; k >= 0; k--) {
    let s = x[k];
    for (let j = k + 1; j < n; j++) s -= r[k * n + j] * x[j];
    x[k] = s / r[k * n + k];
  }
  return x;
}

/** The system on dense storage (itself when it is; a CSR one read densely, within MAX_TALL_DENSE_ENTRIES). */
export function* denseSystemWork(kernels: Kernels, system: SolverSystem): Work<DistributedSystem> {
  if (system.storage === 'dense') return system;
  const { rows, cols } = system.A;
  if (rows * cols > MAX_TALL_DENSE_ENTRIES) {
    throw new ProblemTooLargeError(
      `The tall sparse system is ${rows} x ${cols}; its least-squares analysis reads it densely, which is done up to ${MAX_TALL_DENSE_ENTRIES} entries.`,
      { rows, cols, maxEntries: MAX_TALL_DENSE_ENTRIES },
    );
  }
  const A = csrToDense(system.A);
  return yield* buildDistributedSystemWork({ n: system.n, A, b: system.b, xTrue: system.xTrue, partition: system.partition }, kernels);
}

function relativeResidualOf(A: DenseMatrix, x: Float64Array, b: Float64Array): number {
  const { rows, cols, data } = A;
  const r = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let s = -b[i];
    for (let j = 0; j < cols; j++) s += data[i * cols + j] * x[j];
    r[i] = s;
  }
  const nb = norm2(b);
  return nb === 0 ? norm2(r) : norm2(r) / nb;
}

export function* leastSquaresPointsWork(solverSystem: SolverSystem, kernels: Kernels = selectedKernels()): Work<LeastSquaresPoints> {
  const system = yield* denseSystemWork(kernels, solverSystem);
  const { A, b, n } = system;
  const leastSquares = yield* denseLeastSquaresWork(kernels, A, b);
  // Q^T stacked (N x n: a machine's rows at its offset, zero rows for its dependent rows) and its Q_i^T A_i^+ b_i.
  const N = A.rows;
  const basis = new Float64Array(N * n);
  const coordinates = new Float64Array(N);
  let offset = 0;
  for (const machine of system.machines) {
    const { p, c, q, cols, qtx0 } = machine;
    for (let k = 0; k < p; k++) {
      const row = (offset + k) * n;
      for (let t = 0; t < c; t++) basis[row + cols[t]] = q[k * c + t];
      coordinates[offset + k] = qtx0[k];
    }
    offset += p;
    yield undefined;
  }
  const blockWeighted = yield* denseLeastSquaresWork(kernels, { rows: N, cols: n, data: basis }, coordinates);
  const leastSquaresResidual = relativeResidualOf(A, leastSquares, b);
  const weightedResidual = relativeResidualOf(A, blockWeighted, b);
  const difference = blockWeighted.map((v, j) => v - leastSquares[j]);
  const size = norm2(leastSquares);
  return {
    leastSquares,
    blockWeighted,
    consistent: leastSquaresResidual <= CONSISTENCY_TOLERANCE,
    leastSquaresResidual,
    weightedResidual,
    weightedDistance: size === 0 ? norm2(difference) : norm2(difference) / size,
  };
}

export function leastSquaresPoints(system: SolverSystem, kernels: Kernels = selectedKernels()): LeastSquaresPoints {
  return runSync(leastSquaresPointsWork(system, kernels));
}
