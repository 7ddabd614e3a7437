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
 * matrices are never formed, so neither kappa is squared), O(N n^2). A CSR system is never read
 * densely: ./sparseLeastSquares.ts (a sparse Cholesky of A^T A with seminormal refinement for x_LS,
 * conjugate gradients on S = sum_i P_i for x_W).
 */
import { runSync, type Work } from '../cooperative.js';
import { householderQrWork } from '../linalg/householderQr.js';
import { selectedKernels, type Kernels } from '../linalg/kernels.js';
import { norm2, type DenseMatrix } from '../matrix.js';
import { multiply } from '../sparse/csr.js';
import type { DistributedSystem, CsrSystem } from '../machines/machineData.js';
import type { GramSolver } from '../machines/placement.js';
import { blockWeightedSolution, normalEquationsSolver, rowBasisMachines, sparseLeastSquaresWork } from './sparseLeastSquares.js';

/** A tall system is consistent when |A x_LS - b| / |b| is at most this. */
export const CONSISTENCY_TOLERANCE = 1e-10;

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
  /**
   * CSR only: the relative residual |S x_W - sum_i A_i^+ b_i| / |sum_i A_i^+ b_i| the conjugate gradients
   * reached (x_W's relative error is at most kappa(S) times it); null for dense storage (QR, no iteration).
   */
  blockWeightedSolveResidual: number | null;
}

export function isTall(system: Pick<DistributedSystem, 'A' | 'n'>): boolean {
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

function denseResidualOf(A: DenseMatrix, x: Float64Array, b: Float64Array): Float64Array {
  const { rows, cols, data } = A;
  const r = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let s = -b[i];
    for (let j = 0; j < cols; j++) s += data[i * cols + j] * x[j];
    r[i] = s;
  }
  return r;
}

function relativeNorm(r: Float64Array, b: Float64Array): number {
  const nb = norm2(b);
  return nb === 0 ? norm2(r) : norm2(r) / nb;
}

/** The points with their consistency fields, `residualOf(x)` = A x - b. */
function pointsOf(
  leastSquares: Float64Array,
  blockWeighted: Float64Array,
  b: Float64Array,
  residualOf: (x: Float64Array) => Float64Array,
  blockWeightedSolveResidual: number | null,
): LeastSquaresPoints {
  const leastSquaresResidual = relativeNorm(residualOf(leastSquares), b);
  const weightedResidual = relativeNorm(residualOf(blockWeighted), b);
  const difference = blockWeighted.map((v, j) => v - leastSquares[j]);
  const size = norm2(leastSquares);
  return {
    leastSquares,
    blockWeighted,
    consistent: leastSquaresResidual <= CONSISTENCY_TOLERANCE,
    leastSquaresResidual,
    weightedResidual,
    weightedDistance: size === 0 ? norm2(difference) : norm2(difference) / size,
    blockWeightedSolveResidual,
  };
}

/**
 * The points of a tall CSR system (./sparseLeastSquares.ts); `normal` the solver with A^T A's Cholesky
 * factor when the caller has it (the analysis factors it for mu).
 */
export function* sparseLeastSquaresPointsWork(
  system: CsrSystem,
  normal: GramSolver = normalEquationsSolver(system.A),
): Work<LeastSquaresPoints> {
  const { A, b, n } = system;
  const leastSquares = yield* sparseLeastSquaresWork(A, b, normal);
  const weighted = blockWeightedSolution(rowBasisMachines(system), n);
  yield undefined;
  const residualOf = (x: Float64Array): Float64Array => {
    const r = multiply(A, x);
    for (let i = 0; i < r.length; i++) r[i] -= b[i];
    return r;
  };
  return pointsOf(leastSquares, weighted.x, b, residualOf, weighted.solve.relativeResidual);
}

export function* leastSquaresPointsWork(system: DistributedSystem, kernels: Kernels = selectedKernels()): Work<LeastSquaresPoints> {
  if (system.storage === 'csr') return yield* sparseLeastSquaresPointsWork(system);
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
  return pointsOf(leastSquares, blockWeighted, b, (x) => denseResidualOf(A, x, b), null);
}

export function leastSquaresPoints(system: DistributedSystem, kernels: Kernels = selectedKernels()): LeastSquaresPoints {
  return runSync(leastSquaresPointsWork(system, kernels));
}
