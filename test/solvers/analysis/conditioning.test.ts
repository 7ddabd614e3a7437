import { Matrix } from 'ml-matrix';
import { expect, it } from 'vitest';
import { computeMatrixConditioning, type MatrixConditioning } from '../../../src/solvers/analysis/conditioning.js';
import { squareMatrixConditioningWork } from '../../../src/solvers/analysis/kappaS.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { describeEachBackend } from '../../support/backends.js';
import { randomRows, svdValues, systemOf } from '../../support/systems.js';

/** sigma_max, sigma_min, kappa(A^T A), L and mu against ml-matrix's SVD of the same rows. */
function expectSvdValues(c: MatrixConditioning, rows: number[][]): void {
  const s = svdValues(new Matrix(rows));
  const sMax = s[0];
  const sMin = s[s.length - 1];
  expect(Math.abs(c.sigmaMax - sMax) / sMax).toBeLessThan(1e-12);
  expect(Math.abs(c.sigmaMin - sMin) / sMin).toBeLessThan(1e-10);
  expect(Math.abs(c.kappaAtA - (sMax / sMin) ** 2) / c.kappaAtA).toBeLessThan(1e-10);
  expect(Math.abs(c.L - sMax * sMax) / (sMax * sMax)).toBeLessThan(1e-12);
  expect(Math.abs(c.mu - sMin * sMin) / (sMin * sMin)).toBeLessThan(1e-10);
}

describeEachBackend('kappa(A^T A) without forming A^T A', () => {
  for (const [n, mean] of [
    [40, 0],
    [90, 1],
  ] as const) {
    it(`matches ml-matrix's SVD on a random ${n} x ${n} matrix (mean ${mean})`, () => {
      const rows = randomRows(n, n + mean, mean);
      expectSvdValues(computeMatrixConditioning(fromRows(rows)), rows);
    });
  }

  // The analysis' route: A = D M with D = diag(R_i^T), M = Q^T, through the LU of M (machines of unequal sizes, rows interleaved).
  for (const [n, m, mean] of [
    [60, 4, 1],
    [90, 7, 0],
  ] as const) {
    it(`through the machines' bases matches ml-matrix's SVD (n = ${n}, m = ${m}, mean ${mean})`, () => {
      const rows = randomRows(n, n + m, mean);
      const assignment = Array.from({ length: n }, (_, k) => (k * 7 + (k % 3)) % m);
      const system = systemOf(rows, assignment, m);
      expectSvdValues(runSync(squareMatrixConditioningWork(selectedKernels(), system)), rows);
    });
  }

  it('matches the closed form of the sparse tridiagonal (-1, 2, -1) (sparse operator path)', () => {
    const n = 200;
    const rows = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 2 : Math.abs(i - j) === 1 ? -1 : 0)));
    const c = computeMatrixConditioning(fromRows(rows));
    const lambda = (k: number) => 4 * Math.sin((k * Math.PI) / (2 * n + 2)) ** 2;
    // SPD: singular values are the eigenvalues.
    expect(Math.abs(c.kappaAtA - (lambda(n) / lambda(1)) ** 2) / c.kappaAtA).toBeLessThan(1e-10);
  });

  for (const eps of [0.1, 1e-6]) {
    it(`matches Example 3: kappa(A^T A) = ((n - eps) / eps)^2 for J - eps I (eps = ${eps})`, () => {
      const n = 20;
      const a = fromRows(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 - eps : 1))));
      const e = 1 - (1 - eps); // the eps the stored matrix represents (exact, Sterbenz)
      const exact = ((n - e) / e) ** 2; // eigenvalues of J - eps I: n - eps (once) and -eps
      // sigma_min is known to relative ~kappa(A) eps.
      expect(Math.abs(computeMatrixConditioning(a).kappaAtA - exact) / exact).toBeLessThan(
        Math.max(1e-12, 10 * Number.EPSILON * ((n - e) / e)),
      );
    });
  }

  it('rejects a matrix with an exactly zero pivot', () => {
    const run = () =>
      computeMatrixConditioning(
        fromRows([
          [1, 2, 3],
          [2, 4, 6],
          [0, 1, 1],
        ]),
      );
    expect(run).toThrow(SingularMatrixError);
    expect(run).toThrow(/numerically singular.*condition number.*infinite/);
  });

  it('rejects a numerically singular matrix (sigma_min <= n eps sigma_max) and reports the estimated condition number', () => {
    let error: unknown;
    try {
      computeMatrixConditioning(
        fromRows([
          [1, 0],
          [0, 1e-17],
        ]),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SingularMatrixError);
    expect((error as Error).message).toMatch(/numerically singular/);
    expect((error as Error).message).toMatch(/1\.00e\+17/);
    expect((error as SingularMatrixError).details.conditionNumber).toBeCloseTo(1e17, -13);
    // A product of 10 x 9 and 9 x 10 factors has rank 9: rounding leaves sigma_min ~ eps sigma_max.
    const rng = new SeededRandom(2);
    const u = Array.from({ length: 10 }, () => Array.from({ length: 9 }, () => 2 * rng.nextDouble() - 1));
    const v = Array.from({ length: 9 }, () => Array.from({ length: 10 }, () => 2 * rng.nextDouble() - 1));
    expect(() => computeMatrixConditioning(fromRows(new Matrix(u).mmul(new Matrix(v)).to2DArray()))).toThrow(SingularMatrixError);
  });

  it('accepts an ill-conditioned but nonsingular matrix below the rank tolerance', () => {
    const c = computeMatrixConditioning(
      fromRows([
        [1, 0],
        [0, 1e-14],
      ]),
    );
    expect(Math.abs(c.kappaAtA - 1e28) / 1e28).toBeLessThan(1e-14);
  });
});
