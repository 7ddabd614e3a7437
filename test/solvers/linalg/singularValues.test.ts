import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { expect, it } from 'vitest';
import { singularValueRange, singularValues } from '../../../src/solvers/linalg/singularValues.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import { describeEachBackend } from '../../support/backends.js';
import { randomMatrix } from '../../support/systems.js';

const toMl = (a: DenseMatrix) =>
  new Matrix(Array.from({ length: a.rows }, (_, i) => Array.from(a.data.subarray(i * a.cols, (i + 1) * a.cols))));

describeEachBackend('singular values (Householder QR + bidiagonalization + Golub-Kahan bisection)', () => {
  for (const [rows, cols] of [
    [1, 1],
    [1, 7],
    [7, 1],
    [25, 25],
    [40, 17],
    [17, 40],
  ] as const) {
    it(`match ml-matrix's SVD on a random ${rows} x ${cols} matrix`, () => {
      const a = randomMatrix(rows, cols, rows * 100 + cols);
      const ours = singularValues(a);
      const ref = new SingularValueDecomposition(toMl(a), {
        computeLeftSingularVectors: false,
        computeRightSingularVectors: false,
        autoTranspose: true,
      }).diagonal;
      expect(ours.length).toBe(Math.min(rows, cols));
      const scale = ref[0];
      for (let k = 0; k < ours.length; k++) expect(Math.abs(ours[k] - ref[k])).toBeLessThan(1e-13 * scale);
      const range = singularValueRange(a.data, rows, cols);
      expect(range.largest).toBe(ours[0]);
      expect(range.smallest).toBe(ours[ours.length - 1]);
    });
  }

  it('keeps tiny singular values of a graded, permuted diagonal to high relative accuracy', () => {
    const sigmas = [1, 1e-5, 1e-10, 1e-15, 1e-20, 1e-25];
    const n = sigmas.length;
    const perm = [3, 0, 5, 1, 4, 2];
    const data = new Float64Array(n * n);
    // A = P diag(sigma) with alternating signs: singular values are exactly the sigmas.
    for (let i = 0; i < n; i++) data[perm[i] * n + i] = (i % 2 ? -1 : 1) * sigmas[i];
    const ours = singularValues({ rows: n, cols: n, data });
    for (let k = 0; k < n; k++) expect(Math.abs(ours[k] - sigmas[k]) / sigmas[k]).toBeLessThan(1e-14);
  });

  it('finds the tiny singular value of [[1, 1], [0, d]] to high relative accuracy (sigma_1 sigma_2 = |det| = d)', () => {
    for (const d of [1e-8, 1e-12, 1e-20]) {
      // sigma_1^2 + sigma_2^2 = 2 + d^2 and sigma_1 sigma_2 = d.
      const sigmaMax = Math.sqrt((2 + d * d + Math.sqrt(4 + d ** 4)) / 2);
      const { largest, smallest } = singularValueRange(Float64Array.from([1, 1, 0, d]), 2, 2);
      expect(Math.abs(largest - sigmaMax) / sigmaMax).toBeLessThan(1e-15);
      expect(Math.abs(smallest - d / sigmaMax) / (d / sigmaMax)).toBeLessThan(1e-14);
    }
  });

  it('gives 1 for every singular value of an orthogonal matrix (Hadamard / 2, exact in binary)', () => {
    const h = [1, 1, 1, 1, 1, -1, 1, -1, 1, 1, -1, -1, 1, -1, -1, 1].map((v) => v / 2);
    for (const s of singularValues({ rows: 4, cols: 4, data: Float64Array.from(h) }))
      expect(Math.abs(s - 1)).toBeLessThan(4 * Number.EPSILON);
  });

  it('returns 0 for a rank-deficient matrix', () => {
    const { smallest } = singularValueRange(Float64Array.from([1, 2, 3, 2, 4, 6, 1, 0, 1]), 3, 3);
    expect(smallest).toBeLessThan(1e-15);
  });
});
