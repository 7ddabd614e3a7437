import type { SymmetricOperator } from '../../src/solvers/eigen/lanczos.js';

/** The symmetric operator x -> A x of a dense n x n row-major A, by the plain loop (an independent reference). */
export function denseOperator(a: Float64Array, n: number): SymmetricOperator {
  return {
    size: n,
    apply(x, y) {
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let j = 0; j < n; j++) s += a[i * n + j] * x[j];
        y[i] = s;
      }
    },
  };
}
