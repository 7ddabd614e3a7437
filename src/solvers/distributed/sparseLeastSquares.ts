/**
 * The two points of a tall CSR system (./leastSquares.ts) without any N x n dense matrix:
 *  - x_LS from the normal equations A^T A x = A^T b, factored by a sparse Cholesky (CHOLMOD on the
 *    native backend, ../sparse/sparseCholesky.ts on the TypeScript one, by blocks where its factor fills), then corrected seminormal
 *    refinement (x += (R^T R)^{-1} A^T (b - A x), the residual taken from A itself): the plain normal
 *    equations lose kappa(A)^2 eps, each correction multiplies the error by ~kappa(A)^2 eps again, so
 *    while kappa(A)^2 eps << 1 a few bring x_LS to the accuracy of a QR of A (Bjorck, "Numerical methods
 *    for least squares problems", 6.6.5). A^T A is n x n with the fill of its Cholesky factor: affordable
 *    when A's columns couple locally (banded, grids) or n is moderate; a matrix without full column rank
 *    (a nonpositive pivot, i.e. kappa(A) beyond ~1/sqrt(eps)) is refused as singular.
 *  - x_W from sum_i A_i^+ (A_i x - b_i) = 0, i.e. S x = sum_i A_i^+ b_i with S = sum_i P_i (P_i the
 *    projector onto machine i's row space, applied as A_i^T G_i^{-1} A_i with the Cholesky factor of
 *    G_i = A_i A_i^T the machine holds; A_S, b_S' for a machine with dependent rows), by conjugate
 *    gradients to a relative residual of BLOCK_WEIGHTED_TOLERANCE: x_W's relative error is at most
 *    kappa(S) times that (kappa(S) is the analysis' heterogeneity, usually below 10^3).
 */
import type { Work } from '../cooperative.js';
import { SingularMatrixError } from '../errors.js';
import { currentThreadGramSolver, gramFactorizer, type GramSolver } from '../machines/placement.js';
import type { CsrSystem } from '../machines/machineData.js';
import { ConjugateGradients, type ConjugateGradientResult } from '../sparse/conjugateGradients.js';
import { multiply, multiplyTransposed, transpose, type CsrMatrix } from '../sparse/csr.js';
import { gramMatrix } from '../sparse/gram.js';
import type { SymmetricOperator } from '../eigen/symmetricOperator.js';

/** Relative residual of S x_W = sum_i A_i^+ b_i the conjugate gradients stop at. */
export const BLOCK_WEIGHTED_TOLERANCE = 1e-13;
/** Most corrected seminormal corrections of x_LS (each gains ~-log10(kappa(A)^2 eps) digits). */
const MAX_SEMINORMAL_CORRECTIONS = 4;

/** Solves with the Cholesky factor of A^T A (n x n), on the current backend. */
export function normalEquationsSolver(a: CsrMatrix): GramSolver {
  try {
    return currentThreadGramSolver(gramFactorizer()(gramMatrix(transpose(a))));
  } catch (error) {
    if (!(error instanceof SingularMatrixError)) throw error;
    throw new SingularMatrixError(
      `The tall matrix A (${a.rows} x ${a.cols}) is numerically rank-deficient: the Cholesky factorization of A^T A met a ` +
        'nonpositive pivot, so the least-squares solution is not unique to working precision.',
      { ...error.details, rows: a.rows, columns: a.cols },
    );
  }
}

/** argmin |A x - b| by the normal equations' factor and corrected seminormal refinement (module comment). */
export function* sparseLeastSquaresWork(a: CsrMatrix, b: Float64Array, normal: GramSolver): Work<Float64Array> {
  const n = a.cols;
  const x = new Float64Array(n);
  const correction = new Float64Array(n);
  const residual = b.slice();
  for (let step = 0; step <= MAX_SEMINORMAL_CORRECTIONS; step++) {
    multiplyTransposed(a, residual, correction);
    normal.solve(correction, correction);
    let dx = 0;
    let xx = 0;
    for (let j = 0; j < n; j++) {
      x[j] += correction[j];
      dx += correction[j] * correction[j];
      xx += x[j] * x[j];
    }
    yield undefined;
    if (step > 0 && dx <= (4 * Number.EPSILON) ** 2 * xx) break;
    multiply(a, x, residual);
    for (let i = 0; i < residual.length; i++) residual[i] = b[i] - residual[i];
  }
  return x;
}

/** One machine's rows the projection methods use (A_S and b_S' when it has dependent rows) and its Gram solver. */
export interface RowBasisMachine {
  readonly a: CsrMatrix;
  readonly b: Float64Array;
  readonly gram: GramSolver;
  /** Refinement corrections per solve with G_i (../distributed/sparseSystem.ts). */
  readonly refinement: number;
}

export function rowBasisMachines(system: CsrSystem): RowBasisMachine[] {
  return system.machines.map((machine) => ({
    a: machine.projection?.a ?? machine.a,
    b: machine.projection?.b ?? machine.b,
    gram: currentThreadGramSolver(machine.gram),
    refinement: machine.gramRefinement,
  }));
}

/** t = G^{-1} r for a machine's G = A A^T, refined as the machine's solves are (residuals from A, not from G). */
function solveGram(machine: RowBasisMachine, r: Float64Array, t: Float64Array, work: Float64Array, rows: Float64Array): void {
  machine.gram.solve(r, t);
  for (let step = 0; step < machine.refinement; step++) {
    multiplyTransposed(machine.a, t, work);
    multiply(machine.a, work, rows);
    for (let k = 0; k < rows.length; k++) rows[k] = r[k] - rows[k];
    machine.gram.solve(rows, rows);
    for (let k = 0; k < rows.length; k++) t[k] += rows[k];
  }
}

type PseudoInverseSum = (rowValues: (i: number, into: Float64Array) => void, out: Float64Array) => void;

/** out = sum_i A_i^T G_i^{-1} v_i, v_i machine i's values set by `rowValues`; the buffers allocated once. */
function pseudoInverseSum(machines: readonly RowBasisMachine[], n: number): PseudoInverseSum {
  const work = new Float64Array(n);
  const largest = machines.reduce((p, machine) => Math.max(p, machine.a.rows), 0);
  const values = new Float64Array(largest);
  const solved = new Float64Array(largest);
  const refined = new Float64Array(largest);
  return (rowValues, out) => {
    out.fill(0);
    machines.forEach((machine, i) => {
      const p = machine.a.rows;
      const v = values.subarray(0, p);
      const t = solved.subarray(0, p);
      rowValues(i, v);
      solveGram(machine, v, t, work, refined.subarray(0, p));
      multiplyTransposed(machine.a, t, work);
      for (let j = 0; j < n; j++) out[j] += work[j];
    });
  };
}

/** S = sum_i P_i = sum_i A_i^T G_i^{-1} A_i over the machines' row bases, n x n, applied (never formed). */
export function projectorSumOperator(machines: readonly RowBasisMachine[], n: number): SymmetricOperator {
  const sum = pseudoInverseSum(machines, n);
  return {
    size: n,
    apply(v, out) {
      sum((i, into) => multiply(machines[i].a, v, into), out);
    },
  };
}

export interface BlockWeightedSolution {
  x: Float64Array;
  solve: ConjugateGradientResult;
}

/** x_W: S x = sum_i A_i^+ b_i by conjugate gradients (module comment). */
export function blockWeightedSolution(machines: readonly RowBasisMachine[], n: number): BlockWeightedSolution {
  const rhs = new Float64Array(n);
  pseudoInverseSum(machines, n)((i, into) => into.set(machines[i].b), rhs);
  const x = new Float64Array(n);
  const solve = new ConjugateGradients(projectorSumOperator(machines, n), BLOCK_WEIGHTED_TOLERANCE).solve(rhs, x);
  return { x, solve };
}
