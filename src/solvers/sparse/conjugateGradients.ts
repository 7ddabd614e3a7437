/**
 * Conjugate gradients on a symmetric positive definite operator, to a relative residual
 * |Op x - rhs| <= tolerance |rhs| read from the TRUE residual at the end (the recurrence's drifts):
 * the solution's relative error is then at most kappa(Op) times that. Used where an operator is
 * applied but not formed (the tall analysis' S = sum_i P_i, ../analysis/tallSparseAnalysis.ts; the
 * pivot-dropping Cholesky's I + N^T N, ./droppingCholesky.ts).
 */
import type { SymmetricOperator } from '../eigen/symmetricOperator.js';
import { dot } from '../matrix.js';

export interface ConjugateGradientResult {
  /** The true relative residual |Op x - rhs| / |rhs| (for rhs = 0: |Op x|, 0 from the zero start). */
  relativeResidual: number;
  iterations: number;
  /** relativeResidual <= tolerance. */
  converged: boolean;
}

/** Workspace of one operator size, reused by every solve. */
export class ConjugateGradients {
  private readonly residual: Float64Array;
  private readonly direction: Float64Array;
  private readonly product: Float64Array;

  constructor(
    readonly op: SymmetricOperator,
    readonly tolerance: number,
    readonly maxIterations: number = 10 * op.size + 50,
  ) {
    this.residual = new Float64Array(op.size);
    this.direction = new Float64Array(op.size);
    this.product = new Float64Array(op.size);
  }

  /**
   * x = Op^{-1} rhs (x and rhs distinct arrays), starting from x = 0, or from x as given when `start` is
   * 'given' (a guess close to the answer: the pivot-dropping Cholesky's b_K, ./droppingCholesky.ts).
   */
  solve(rhs: Float64Array, x: Float64Array, start: 'zero' | 'given' = 'zero'): ConjugateGradientResult {
    const { op, residual, direction, product } = this;
    const n = op.size;
    const rhsNorm = Math.sqrt(dot(rhs, rhs));
    let rr: number;
    if (start === 'zero') {
      x.fill(0);
      if (rhsNorm === 0) return { relativeResidual: 0, iterations: 0, converged: true };
      residual.set(rhs);
      rr = rhsNorm * rhsNorm;
    } else {
      op.apply(x, product);
      for (let k = 0; k < n; k++) residual[k] = rhs[k] - product[k];
      rr = dot(residual, residual);
    }
    direction.set(residual);
    let iterations = 0;
    // A little below the tolerance, so the true residual (which the recurrence's trails by rounding) meets it.
    const target = 0.5 * this.tolerance * rhsNorm;
    while (iterations < this.maxIterations && Math.sqrt(rr) > target) {
      op.apply(direction, product);
      iterations++;
      const curvature = dot(direction, product);
      if (!(curvature > 0)) break;
      const alpha = rr / curvature;
      for (let k = 0; k < n; k++) {
        x[k] += alpha * direction[k];
        residual[k] -= alpha * product[k];
      }
      const next = dot(residual, residual);
      const beta = next / rr;
      rr = next;
      for (let k = 0; k < n; k++) direction[k] = residual[k] + beta * direction[k];
    }
    op.apply(x, product);
    let trueResidual = 0;
    for (let k = 0; k < n; k++) trueResidual += (rhs[k] - product[k]) ** 2;
    const relativeResidual = rhsNorm > 0 ? Math.sqrt(trueResidual) / rhsNorm : Math.sqrt(trueResidual);
    return { relativeResidual, iterations, converged: relativeResidual <= this.tolerance };
  }
}
