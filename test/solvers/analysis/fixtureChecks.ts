/**
 * The comparison of an Analysis with a case of the heterogeneity fixtures (NumPy/SciPy reference
 * values), shared by the dense (fixtures.test.ts) and the sparse (sparseAnalysis.test.ts) tests.
 *
 * Tolerances (fixtures README: relative 1e-6 on condition numbers up to 1e8, looser above; 1e-9
 * absolute on angles, 1e-12 for the tiny-angle case; 1e-9 on rates), made explicit for the large
 * condition numbers by what the reference itself can know:
 *  - kappa(S) and lambda_min(S): NumPy's eigvalsh of the explicitly formed S returns lambda_min to an
 *    absolute error of a few eps * lambda_max (backward stability), i.e. a relative error of
 *    ~eps * kappa(S) on both. We allow max(1e-6, 4 eps kappa(S)): at the tiny-angle case
 *    (kappa(S) = 4e14) that is 35 %, where the fixture is 3.2 % off the exact cot^2(theta_H / 2)
 *    (conditioning.test.ts checks our value against that closed form to 1e-6).
 *  - kappa(A^T A): NumPy's SVD of A gives sigma_min to absolute ~eps * sigma_max, so kappa(A) is
 *    known to relative ~eps kappa(A) and kappa(A^T A) = kappa(A)^2 to twice that: max(1e-6, 8 eps sqrt(kappa)).
 *  - Theorem 3's (1 + c) / (1 - c) inherits the rounding of c = (m - 1) cos(theta_H) near 1:
 *    relative ~eps / (1 - c) ~ eps * bound: max(1e-6, 4 eps bound).
 *  - rates: 1e-9, or the condition-number tolerance times the rate's sensitivity d rho / d ln(kappa)
 *    when that is larger (APC: ~1 / sqrt(kappa(S)), Cimmino: 2 / kappa(S), MLM: lambda_min(S) / m;
 *    D-HBM and D-NAG: ~1 / sqrt(kappa(A^T A)), DGD: 2 / kappa(A^T A)).
 */
import { expect } from 'vitest';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { fixtureMatrix, type Fixture } from '../../support/fixtures.js';

export const EPS = Number.EPSILON;

/** The fixture's analysis on dense storage, or on CSR storage (the same matrix converted). */
export function analyzeFixture(f: Fixture, storage: 'dense' | 'csr' = 'dense'): Analysis {
  const A = fixtureMatrix(f);
  const n = A.rows;
  const b = new Float64Array(n).fill(1);
  const partition = partitionFromAssignment(Int32Array.from(f.partition.assignment), f.expected.m);
  if (storage === 'csr') return analyze(buildDistributedSystem({ n, A: csrFromDense(A), b, xTrue: null, partition }));
  return analyze(buildDistributedSystem({ n, A, b, xTrue: null, partition }));
}

export const kappaSTolerance = (kappa: number) => Math.max(1e-6, 4 * EPS * kappa);
export const kappaAtATolerance = (kappa: number) => Math.max(1e-6, 8 * EPS * Math.sqrt(kappa));

export function expectRelative(actual: number, expected: number, tol: number, what: string): void {
  const err = Math.abs(actual - expected) / Math.abs(expected);
  expect(err, `${what}: ${actual} vs ${expected} (relative ${err.toExponential(2)} > ${tol})`).toBeLessThanOrEqual(tol);
}

export function expectAbsolute(actual: number, expected: number, tol: number, what: string): void {
  const err = Math.abs(actual - expected);
  expect(err, `${what}: ${actual} vs ${expected} (absolute ${err.toExponential(2)} > ${tol})`).toBeLessThanOrEqual(tol);
}

export function checkFixture(f: Fixture, a: Analysis): void {
  const e = f.expected;
  const angleTol = f.name.startsWith('tiny-angle') ? 1e-12 : 1e-9;
  expect(a.n).toBe(e.n);
  expect(a.m).toBe(e.m);
  expect(a.blockSizes).toEqual(e.blockSizes);

  // Conditioning.
  const tolS = kappaSTolerance(e.kappaS);
  const tolA = kappaAtATolerance(e.kappaAtA);
  expectRelative(a.conditioning.kappaS, e.kappaS, tolS, 'kappaS');
  expectRelative(a.conditioning.lambdaMinS, e.lambdaMinS, tolS, 'lambdaMinS');
  expectRelative(a.conditioning.lambdaMaxS, e.lambdaMaxS, 1e-9, 'lambdaMaxS');
  expectRelative(a.conditioning.kappaAtA, e.kappaAtA, tolA, 'kappaAtA');

  // Principal angles.
  const h = a.heterogeneity;
  expectAbsolute(h.thetaH, e.thetaH, angleTol, 'thetaH');
  expectAbsolute(h.cosThetaH, e.cosThetaH, 1e-12, 'cosThetaH');
  for (let i = 0; i < e.m; i++) for (let j = 0; j < e.m; j++) expectAbsolute(h.theta[i][j], e.theta[i][j], angleTol, `theta[${i}][${j}]`);
  // The pair: exact unless other pairs tie with theta_H within the angle tolerance (symmetric data:
  // ones-minus-eps, the permuted block diagonal, the grid); then any of the tied pairs is correct.
  const tied: string[] = [];
  for (let i = 0; i < e.m; i++) for (let j = i + 1; j < e.m; j++) if (e.theta[i][j] - e.thetaH <= 2 * angleTol) tied.push(`${i},${j}`);
  expect(h.thetaHPair).not.toBeNull();
  if (tied.length === 1) expect(h.thetaHPair).toEqual(e.thetaHPair);
  else expect(tied).toContain(h.thetaHPair!.join(','));

  // Local angles and Theorem 4.
  expect(h.phi.map((p) => p === null)).toEqual(e.phi.map((p) => p === null));
  for (let i = 0; i < e.m; i++) if (e.phi[i] !== null) expectAbsolute(h.phi[i] as number, e.phi[i] as number, angleTol, `phi[${i}]`);
  if (e.phiMin === null) expect(h.phiMin).toBeNull();
  else expectAbsolute(h.phiMin as number, e.phiMin, angleTol, 'phiMin');
  expectRelative(h.rowNormRatio, e.rowNormRatio, 1e-9, 'rowNormRatio');
  expectRelative(a.bounds.theorem4KappaALowerBound!, e.theorem4KappaALowerBound, 1e-6, 'theorem4KappaALowerBound');

  // Bounds.
  if (e.theorem3KappaSUpperBound === null) expect(a.bounds.theorem3KappaSUpperBound).toBeNull();
  else
    expectRelative(
      a.bounds.theorem3KappaSUpperBound as number,
      e.theorem3KappaSUpperBound,
      Math.max(1e-6, 4 * EPS * e.theorem3KappaSUpperBound),
      'theorem3KappaSUpperBound',
    );
  expectRelative(a.bounds.proposition2KappaSLowerBound!, e.proposition2KappaSLowerBound, 1e-6, 'proposition2KappaSLowerBound');

  // Rates, with the sensitivity of each to its condition number.
  const sensitivity: Record<keyof Fixture['expected']['rates'], number> = {
    apc: tolS / Math.sqrt(e.kappaS),
    cimmino: (2 * tolS) / e.kappaS,
    mlm: (e.lambdaMinS * tolS) / e.m,
    dhbm: tolA / Math.sqrt(e.kappaAtA),
    dnag: tolA / Math.sqrt(e.kappaAtA),
    dgd: (2 * tolA) / e.kappaAtA,
  };
  for (const id of Object.keys(e.rates) as (keyof Fixture['expected']['rates'])[]) {
    expectAbsolute(a.rates[id].rate, e.rates[id], Math.max(1e-9, sensitivity[id]), `rates.${id}`);
  }

  // Corollary 1 and the exact comparison.
  const sc = a.recommendation.sufficientCondition;
  if (e.corollary1 === null) {
    expect(sc.applicable).toBe(false);
    expect(sc.lhs).toBeNull();
  } else {
    expectAbsolute(sc.lhs as number, e.corollary1.lhs as number, 1e-9, 'corollary1.lhs');
    if (e.corollary1.rhs === null) expect(sc.rhs).toBeNull();
    else expectAbsolute(sc.rhs as number, e.corollary1.rhs, 1e-9, 'corollary1.rhs');
    expect(sc.holds).toBe(e.corollary1.holds);
  }
  expect(a.recommendation.exact.faster).toBe(e.fasterOfApcDhbm);
}
