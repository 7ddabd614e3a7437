/**
 * sigma_max, sigma_min, L, mu and kappa(A^T A) of sparse matrices against SciPy's ARPACK (eigsh on
 * A^T A and, shift-invert at 0, on A^{-1} A^{-T} through splu; test/reference/sparse/spectra.py).
 *
 * Tolerance: 1e-6 relative (the fixtures' on condition numbers), where the reference itself is good
 * to that. Both
 * sides apply A^{-1} through a backward-stable LU, so each sigma_min carries a rounding error of about
 * kappa(A) eps (a few units of it: the growth factor): beyond kappa(A) ~ 1e9 neither is known to 1e-6
 * (fs1831: kappa(A) = 2e13), and there we allow 64 eps kappa(A) (kappa(A^T A): twice that).
 * The reported bound must hold: |estimate - reference| <= (bound + rounding) * reference, with
 * rounding the same allowance (for sigma_max, 64 eps).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import { csrFromDense, csrToDense } from '../../../src/solvers/sparse/csr.js';
import { computeMatrixConditioning, sparseMatrixConditioning } from '../../../src/solvers/analysis/conditioning.js';
import { conditionNumberEstimate, type SpectralEstimate } from '../../../src/solvers/eigen/eigenvalueEstimate.js';
import { sparseLu } from '../../../src/solvers/sparse/sparseLu.js';
import { thrown } from '../../support/thrown.js';
import { loadSpectraReference, namedMatrix, relativeDifference } from '../sparse/spectraSupport.js';

const EPS = Number.EPSILON;
const reference = loadSpectraReference();

function expectAgreement(estimate: SpectralEstimate, exact: number, rounding: number): void {
  const difference = relativeDifference(estimate.value, exact);
  expect(difference).toBeLessThanOrEqual(Math.max(1e-6, rounding));
  expect(difference).toBeLessThanOrEqual(estimate.relativeErrorBound + rounding);
}

describe('sparseMatrixConditioning against ARPACK', () => {
  for (const ref of reference.conditioning) {
    it(`${ref.name} (n = ${ref.n}, kappa(A) = ${(ref.sigmaMax / ref.sigmaMin).toExponential(1)})`, () => {
      const a = namedMatrix(ref.name);
      const c = sparseMatrixConditioning(a);
      const kappaA = ref.sigmaMax / ref.sigmaMin;
      const roundingMin = 64 * EPS * kappaA;
      for (const e of [c.sigmaMax, c.sigmaMin, c.L, c.mu, c.kappaAtA]) expect(e.converged).toBe(true);
      expect(c.sigmaMax.method).toMatch(/^lanczos/);
      expect(c.sigmaMin.method).toMatch(/^lanczos-(shift-invert|exhaustive)$/);
      expect(c.kappaAtA.method).toBe('ratio');
      expectAgreement(c.sigmaMax, ref.sigmaMax, 64 * EPS);
      expectAgreement(c.L, ref.L, 64 * EPS);
      expectAgreement(c.sigmaMin, ref.sigmaMin, roundingMin);
      expectAgreement(c.mu, ref.mu, 2 * roundingMin);
      expectAgreement(c.kappaAtA, ref.kappaAtA, 2 * roundingMin);
      expect(c.sigmaMax.value).toBe(Math.sqrt(c.L.value));
      expect(c.sigmaMin.value).toBe(Math.sqrt(c.mu.value));
      // The dense SVD (n <= 3312) agrees with ARPACK up to its own absolute error eps sigma_max.
      if (ref.dense) expect(Math.abs(ref.dense.sigmaMin - ref.sigmaMin)).toBeLessThanOrEqual(64 * EPS * ref.sigmaMax);
    });
  }

  it('reuses a given factorization', () => {
    const a = namedMatrix('bfwa62');
    const f = sparseLu(a);
    const withGiven = sparseMatrixConditioning(a, { factorization: f });
    expect(withGiven).toEqual(sparseMatrixConditioning(a));
  });

  it('throws SingularMatrixError when sigma_min <= n eps sigma_max', () => {
    // [[1, 1], [1, 1 + 1e-17]] rounds to an exactly singular matrix; [[1, 1], [1, 1 + 4e-16]] does not,
    // but its condition number (~1e16) is beyond 1 / (n eps).
    const nearlySingular = csrFromDense({ rows: 2, cols: 2, data: Float64Array.from([1, 1, 1, 1 + 4 * EPS]) });
    const error = thrown(() => sparseMatrixConditioning(nearlySingular));
    expect(error).toBeInstanceOf(SingularMatrixError);
  });
});

describe('plat362 (kappa(A) ~ 2.2e11) against an extended-precision reference', () => {
  // scripts/illConditionedReference.py: long double LU and inverse iteration (eps 1.1e-19), independent of double
  // rounding; NumPy's double-precision SVD and eigvalsh differ from it by 4e-7 and 3.7e-6.
  const extended = JSON.parse(readFileSync(new URL('../../fixtures/plat362Extended.json', import.meta.url), 'utf8')) as {
    mu: number;
    L: number;
    kappaAtA: number;
  };
  const allowance = 2 * EPS * Math.sqrt(extended.kappaAtA); // mu = sigma_min^2: twice sigma_min's ~ eps kappa(A)

  it('mu and kappa(A^T A) within 2 eps kappa(A), CSR (through the sparse LU) and dense', () => {
    const a = namedMatrix('plat362');
    const sparse = sparseMatrixConditioning(a);
    expect(relativeDifference(sparse.mu.value, extended.mu)).toBeLessThanOrEqual(allowance);
    expect(relativeDifference(sparse.kappaAtA.value, extended.kappaAtA)).toBeLessThanOrEqual(allowance);
    expect(relativeDifference(sparse.L.value, extended.L)).toBeLessThanOrEqual(64 * EPS);
    const dense = computeMatrixConditioning(csrToDense(a));
    expect(relativeDifference(dense.mu, extended.mu)).toBeLessThanOrEqual(allowance);
    expect(relativeDifference(dense.kappaAtA, extended.kappaAtA)).toBeLessThanOrEqual(allowance);
  });
});

describe('conditionNumberEstimate', () => {
  it('combines the relative bounds of a quotient: (b1 + b2) / (1 - b2)', () => {
    const top: SpectralEstimate = { value: 10, method: 'lanczos', relativeErrorBound: 1e-3, iterations: 5, converged: true };
    const bottom: SpectralEstimate = { value: 2, method: 'lanczos-shift-invert', relativeErrorBound: 2e-3, iterations: 7, converged: true };
    const q = conditionNumberEstimate(top, bottom);
    expect(q.value).toBe(5);
    expect(q.relativeErrorBound).toBeCloseTo(3e-3 / (1 - 2e-3), 15);
    expect(q.iterations).toBe(12);
    // The extreme cases of the bounds stay inside: (10 (1 + b1)) / (2 (1 - b2)).
    const worst = (10 * (1 + 1e-3)) / (2 * (1 - 2e-3));
    expect(Math.abs(worst - 5) / 5).toBeLessThanOrEqual(q.relativeErrorBound * (1 + 1e-12));
  });
});
