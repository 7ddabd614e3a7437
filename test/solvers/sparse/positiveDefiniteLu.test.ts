import { describe, expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { csrFromDense, multiply, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { isSymmetricWithPositiveDiagonal, positiveDefiniteLuWork } from '../../../src/solvers/sparse/positiveDefiniteLu.js';
import { factorNonzeros, sparseLu, sparseLuSolve, sparseLuSolveTransposed } from '../../../src/solvers/sparse/sparseLu.js';
import { namedMatrix, relativeResidual, shiftedDiagonal, sinVector } from './spectraSupport.js';

const EPS = Number.EPSILON;
const sparseOf = (rows: number[][]): CsrMatrix => csrFromDense(fromRows(rows));

/** P A Q - L U, densely, relative to max |A|. */
function factorizationError(a: CsrMatrix, f: ReturnType<typeof sparseLu>): number {
  const n = a.rows;
  const lu = new Float64Array(n * n);
  // (L U)(:, k) = sum over U(j, k) of L(:, j) U(j, k).
  for (let k = 0; k < n; k++) {
    for (let pu = f.uColPtr[k]; pu < f.uColPtr[k + 1]; pu++) {
      const j = f.uRowIdx[pu];
      for (let pl = f.lColPtr[j]; pl < f.lColPtr[j + 1]; pl++) lu[f.lRowIdx[pl] * n + k] += f.lValues[pl] * f.uValues[pu];
    }
  }
  const columnOf = new Int32Array(n);
  for (let k = 0; k < n; k++) columnOf[f.columnOrder[k]] = k;
  let scale = 0;
  for (let i = 0; i < n; i++) {
    for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) {
      lu[f.rowPivot[i] * n + columnOf[a.colIdx[p]]] -= a.values[p];
      scale = Math.max(scale, Math.abs(a.values[p]));
    }
  }
  return lu.reduce((m, v) => Math.max(m, Math.abs(v)), 0) / scale;
}

describe('the LU of a symmetric positive definite matrix by Cholesky', () => {
  it('is taken for SPD matrices by default: P A P^T = L U with diagonal pivots, the fill of the pivoting LU', () => {
    for (const a of [poisson2d(12), namedMatrix('bcsstk03'), namedMatrix('gr_30_30')]) {
      const f = sparseLu(a);
      expect(f.ordering).toBe('cholesky');
      // Rows and columns pivoted alike.
      for (let i = 0; i < a.rows; i++) expect(f.columnOrder[f.rowPivot[i]]).toBe(i);
      expect(factorizationError(a, f)).toBeLessThan(1e3 * EPS);
      // L unit lower, U upper with a positive diagonal (U = D C^T: U(k, k) = C(k, k)^2).
      for (let k = 0; k < a.rows; k++) {
        expect(f.lValues[f.lColPtr[k]]).toBe(1);
        expect(f.uValues[f.uColPtr[k + 1] - 1]).toBeGreaterThan(0);
      }
      // No more fill than the LU with the symmetric strategy on the same order (the same where it keeps every pivot on the diagonal).
      expect(factorNonzeros(f)).toBeLessThanOrEqual(factorNonzeros(sparseLu(a, { ordering: 'symmetric' })));
    }
  });

  it('solves with A and A^T to a residual at rounding level (1138_bus, n = 1138)', () => {
    const a = namedMatrix('1138_bus');
    const n = a.rows;
    const f = sparseLu(a);
    expect(f.ordering).toBe('cholesky');
    const b = multiply(a, sinVector(n));
    const x = new Float64Array(n);
    sparseLuSolve(f, b, x, new Float64Array(n));
    expect(relativeResidual(a, x, b)).toBeLessThan(n * EPS);
    sparseLuSolveTransposed(f, b, x, new Float64Array(n));
    expect(relativeResidual(a, x, b, true)).toBeLessThan(n * EPS);
  });

  it('falls back to the pivoting LU for a symmetric matrix with a positive diagonal that is indefinite', () => {
    // Poisson shifted by 3.9, inside its spectrum (0, 8): the diagonal stays positive (0.1), the matrix is indefinite.
    const a = poisson2d(10);
    const shifted = shiftedDiagonal(a, 3.9);
    expect(isSymmetricWithPositiveDiagonal(shifted)).toBe(true);
    expect(runSync(positiveDefiniteLuWork(shifted))).toBeNull();
    const f = sparseLu(shifted);
    expect(f.ordering).toBe('symmetric');
    const b = multiply(shifted, sinVector(a.rows));
    const x = new Float64Array(a.rows);
    sparseLuSolve(f, b, x, new Float64Array(a.rows));
    expect(relativeResidual(shifted, x, b)).toBeLessThan(1e-13);
  });

  it('is not tried on unsymmetric values, a nonpositive diagonal, a missing mirror or an unsorted row', () => {
    expect(isSymmetricWithPositiveDiagonal(poisson2d(5))).toBe(true);
    expect(isSymmetricWithPositiveDiagonal(convectionDiffusion2d(5, 1))).toBe(false);
    expect(
      isSymmetricWithPositiveDiagonal(
        sparseOf([
          [2, 1],
          [1, 0],
        ]),
      ),
    ).toBe(false);
    expect(
      isSymmetricWithPositiveDiagonal(
        sparseOf([
          [2, 1],
          [1, -1],
        ]),
      ),
    ).toBe(false);
    expect(
      isSymmetricWithPositiveDiagonal(
        sparseOf([
          [2, 1],
          [0, 1],
        ]),
      ),
    ).toBe(false);
    expect(
      isSymmetricWithPositiveDiagonal(
        sparseOf([
          [2, 1],
          [1.0000000000000002, 1],
        ]),
      ),
    ).toBe(false);
    const unsorted: CsrMatrix = {
      rows: 2,
      cols: 2,
      rowPtr: Int32Array.of(0, 2, 4),
      colIdx: Int32Array.of(1, 0, 0, 1),
      values: Float64Array.of(1, 2, 1, 2),
    };
    expect(isSymmetricWithPositiveDiagonal(unsorted)).toBe(false);
    // An explicit strategy, pivot threshold or column order is the pivoting LU's.
    expect(sparseLu(poisson2d(5), { ordering: 'symmetric' }).ordering).toBe('symmetric');
    expect(sparseLu(poisson2d(5), { pivotThreshold: 1 }).ordering).toBe('symmetric');
  });

  it('yields during the numeric factorization (a job can be cancelled and report progress in it)', () => {
    const work = positiveDefiniteLuWork(poisson2d(150));
    let yields = 0;
    let step = work.next();
    for (; !step.done; step = work.next()) yields++;
    expect(step.value).not.toBeNull();
    // ~1.5e7 multiply-adds at 2^22 per slice, plus the analysis and the conversion to L and U.
    expect(yields).toBeGreaterThanOrEqual(5);
  });
});
