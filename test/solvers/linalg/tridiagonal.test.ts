import { describe, expect, it } from 'vitest';
import { sturmCount, sturmPivotMinimum, tridiagonalEigenvalue, tridiagonalEigenvector } from '../../../src/solvers/linalg/tridiagonal.js';

describe('symmetric tridiagonal bisection', () => {
  // tridiag(-1, 2, -1) of order k: eigenvalues 2 - 2 cos(j pi / (k + 1)) = 4 sin^2(j pi / (2k + 2)),
  // eigenvectors sin(i j pi / (k + 1)).
  const k = 50;
  const d = new Float64Array(k).fill(2);
  const e = new Float64Array(k - 1).fill(-1);
  const exact = (j: number) => 4 * Math.sin((j * Math.PI) / (2 * k + 2)) ** 2;

  it('finds every eigenvalue to relative accuracy ~eps (closed form)', () => {
    for (let j = 1; j <= k; j++) {
      expect(Math.abs(tridiagonalEigenvalue(d, e, k, j - 1) - exact(j)) / exact(j)).toBeLessThan(1e-13);
    }
  });

  it('counts eigenvalues below a shift', () => {
    const pivmin = sturmPivotMinimum(e, k);
    expect(sturmCount(d, e, k, 0, pivmin)).toBe(0);
    expect(sturmCount(d, e, k, 2, pivmin + 1e-9)).toBe(k / 2);
    expect(sturmCount(d, e, k, 4.1, pivmin)).toBe(k);
  });

  it('computes the eigenvector by inverse iteration (closed form, up to sign)', () => {
    for (const j of [1, 17, k]) {
      const v = tridiagonalEigenvector(d, e, k, tridiagonalEigenvalue(d, e, k, j - 1));
      let norm = 0;
      for (let i = 1; i <= k; i++) norm += Math.sin((i * j * Math.PI) / (k + 1)) ** 2;
      norm = Math.sqrt(norm);
      const sign = Math.sign(v[0]) * Math.sign(Math.sin((j * Math.PI) / (k + 1)));
      for (let i = 1; i <= k; i++) expect(Math.abs(sign * v[i - 1] - Math.sin((i * j * Math.PI) / (k + 1)) / norm)).toBeLessThan(1e-12);
    }
  });
});
