/**
 * The blocked dense Cholesky factorization of ../../../src/solvers/linalg/cholesky.ts against ml-matrix's, on each
 * backend (its trailing updates are the kernels' products): sizes below, at and across its blocks of 64 rows.
 */
import { CholeskyDecomposition, Matrix } from 'ml-matrix';
import { expect, it } from 'vitest';
import { choleskyUpperInPlace } from '../../../src/solvers/linalg/cholesky.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { describeEachBackend } from '../../support/backends.js';

/** B B^T for a Gaussian B (p x 2p): symmetric positive definite, kappa ~ 30. */
function gramOfRandomRows(p: number, seed: number): Matrix {
  const random = new SeededRandom(seed);
  const b = Matrix.zeros(p, 2 * p);
  for (let i = 0; i < p; i++) for (let j = 0; j < 2 * p; j++) b.set(i, j, random.nextNormal());
  return b.mmul(b.transpose());
}

describeEachBackend('dense Cholesky', () => {
  for (const p of [1, 5, 64, 65, 150]) {
    it(`gives ml-matrix's factor of a ${p} x ${p} Gram matrix (R = L^T) from its upper triangle, zeros below the diagonal`, () => {
      const g = gramOfRandomRows(p, p);
      const data = Float64Array.from(g.to1DArray());
      // Only the upper triangle is read.
      for (let i = 1; i < p; i++) data.fill(NaN, i * p, i * p + i);
      expect(choleskyUpperInPlace(selectedKernels(), data, p)).toBe(true);
      const lower = new CholeskyDecomposition(g).lowerTriangularMatrix;
      let scale = 0;
      for (let i = 0; i < p; i++) scale = Math.max(scale, Math.abs(lower.get(i, i)));
      for (let i = 0; i < p; i++)
        for (let j = 0; j < p; j++) {
          if (j < i) expect(data[i * p + j]).toBe(0);
          else expect(Math.abs(data[i * p + j] - lower.get(j, i))).toBeLessThan(1e-12 * scale);
        }
    });
  }

  it('says a matrix that is not positive definite is not', () => {
    const p = 100;
    const g = gramOfRandomRows(p, 3);
    // Row and column 80 a copy of 10's: singular (its pivot in the third block is ~eps, or negative, never clearly positive).
    for (let j = 0; j < p; j++) {
      g.set(80, j, g.get(10, j));
      g.set(j, 80, g.get(j, 10));
    }
    g.set(80, 80, g.get(10, 10) - 1);
    expect(choleskyUpperInPlace(selectedKernels(), Float64Array.from(g.to1DArray()), p)).toBe(false);
  });
});
