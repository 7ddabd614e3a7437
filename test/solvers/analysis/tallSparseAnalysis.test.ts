/**
 * The analysis of a tall CSR system without a dense copy (src/solvers/analysis/tallSparseAnalysis.ts,
 * src/solvers/distributed/sparseLeastSquares.ts), on each backend:
 *  - ash608 uploaded as CSR on 4 machines (dependent rows on each), b = A ones and NumPy's noisy b
 *    (test/fixtures/ash608Noisy.json): every spectral value, theta_H, the consistency fields, x_LS and
 *    x_W equal the dense analysis' (Householder QR, Gram blocks) to 1e-8 relative, and each estimate's
 *    error bound covers its difference to the dense value;
 *  - the noisy 400 x 100 Gaussian system as CSR (5 machines of full row rank, S far from a multiple of I):
 *    kappa(S), kappa(A^T A), x_LS, x_W and the residuals equal NumPy's (test/fixtures/tallGaussian.json).
 */
import { beforeAll, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { leastSquaresPoints, type LeastSquaresPoints } from '../../../src/solvers/distributed/leastSquares.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { csrFromDense, csrToDense, multiply, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { describeEachBackend } from '../../support/backends.js';
import { fixture, gaussianFixture } from '../distributed/tallFixtures.js';
import { INTERSECTING_MACHINE_ROWS, readMatrixCsr, relativeDifference } from '../sparse/support.js';

interface NoisyFixture {
  b: number[];
}
const noisy = fixture('ash608Noisy.json') as NoisyFixture;
const gaussian = gaussianFixture();

const relative = (actual: number, expected: number): number => Math.abs(actual - expected) / Math.abs(expected);

let ash: CsrMatrix;
beforeAll(() => {
  ash = readMatrixCsr('ash608.mtx');
});

interface Analysed {
  analysis: Analysis;
  points: LeastSquaresPoints;
}

function analysed(A: Parameters<typeof createProblem>[0]['A'], rhs: Float64Array, machines: number): Analysed {
  const system = buildDistributedSystem(createProblem({ A, rhs, partition: { machines } }));
  return { analysis: analyze(system), points: leastSquaresPoints(system) };
}

const SPECTRAL = ['kappaS', 'lambdaMinS', 'lambdaMaxS', 'kappaAtA', 'L', 'mu'] as const;

describeEachBackend('ash608 as CSR, analysed sparsely, equals the dense analysis', () => {
  for (const labels of ['A ones', 'noisy'] as const) {
    it(`${labels}: spectrum, theta_H, consistency, x_LS and x_W to 1e-8`, () => {
      const b = labels === 'noisy' ? Float64Array.from(noisy.b) : multiply(ash, new Float64Array(188).fill(1));
      const sparse = analysed(ash, b, 4);
      const dense = analysed(csrToDense(ash), b, 4);
      expect(sparse.analysis.machineRanks).toEqual(dense.analysis.machineRanks);
      const estimates = sparse.analysis.conditioning.estimates!;
      for (const key of SPECTRAL) {
        const value = sparse.analysis.conditioning[key];
        const reference = dense.analysis.conditioning[key];
        expect(relative(value, reference), `${key}: ${value} vs ${reference}`).toBeLessThan(1e-8);
        // The bound covers the Krylov error (plus rounding of the order of the dense path's own, 1e-12).
        expect(relative(value, reference), key).toBeLessThanOrEqual(estimates[key].relativeErrorBound! + 1e-12);
      }
      // Machines whose row spaces intersect: theta_H = 0 on both paths.
      expect(Math.abs(sparse.analysis.heterogeneity.thetaH - dense.analysis.heterogeneity.thetaH)).toBeLessThan(1e-7);
      const s = sparse.analysis.consistency!;
      const d = dense.analysis.consistency!;
      expect(s.consistent).toBe(d.consistent);
      expect(s.consistent).toBe(labels === 'A ones');
      if (labels === 'noisy') {
        expect(relative(s.leastSquaresResidual, d.leastSquaresResidual)).toBeLessThan(1e-8);
        expect(relative(s.weightedResidual, d.weightedResidual)).toBeLessThan(1e-8);
        expect(relative(s.weightedDistance, d.weightedDistance)).toBeLessThan(1e-8);
      } else {
        expect(s.leastSquaresResidual).toBeLessThan(1e-12);
        expect(s.weightedResidual).toBeLessThan(1e-12);
      }
      expect(relativeDifference(sparse.points.leastSquares, dense.points.leastSquares)).toBeLessThan(1e-10);
      expect(relativeDifference(sparse.points.blockWeighted, dense.points.blockWeighted)).toBeLessThan(1e-10);
      expect(sparse.points.blockWeightedSolveResidual!).toBeLessThan(1e-12);
    });
  }
});

describeEachBackend('the noisy 400 x 100 Gaussian system as CSR', () => {
  it("kappa(S), kappa(A^T A), the residuals, x_LS and x_W equal NumPy's", () => {
    const { analysis, points } = analysed(csrFromDense(fromRows(gaussian.A)), Float64Array.from(gaussian.b), 5);
    expect(analysis.conditioning.estimates).toBeDefined();
    expect(relative(analysis.conditioning.kappaS, gaussian.kappaS)).toBeLessThan(1e-9);
    expect(relative(analysis.conditioning.kappaAtA, gaussian.kappaAtA)).toBeLessThan(1e-9);
    const c = analysis.consistency!;
    expect(c.consistent).toBe(false);
    expect(relative(c.leastSquaresResidual, gaussian.leastSquaresResidual)).toBeLessThan(1e-9);
    expect(relative(c.weightedResidual, gaussian.weightedResidual)).toBeLessThan(1e-9);
    expect(relative(c.weightedDistance, gaussian.weightedDistance)).toBeLessThan(1e-6);
    expect(relativeDifference(points.leastSquares, gaussian.leastSquares)).toBeLessThan(1e-12);
    expect(relativeDifference(points.blockWeighted, gaussian.blockWeighted)).toBeLessThan(1e-11);
  });
});

describeEachBackend('machines whose ranks exceed the columns they touch together', () => {
  // Machine 0: 4 rows on columns 0-3; machine 1: 3 rows on columns 2-4; machine 2: 1 row on columns 4-5.
  // (0, 1): ranks 4 + 3 > 5 columns, so R(A_0) and R(A_1) share a direction: theta_01 = 0 exactly, by a dimension
  // count. (1, 2): 3 + 1 = 4 columns, computed (nonzero). (0, 2): no shared column, pi/2.
  const rows = INTERSECTING_MACHINE_ROWS.map((row) => [...row]);
  const assignment = [0, 0, 0, 0, 1, 1, 1, 2];
  const rhs = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const analysedOn = (A: Parameters<typeof createProblem>[0]['A']) =>
    analyze(buildDistributedSystem(createProblem({ A, rhs, partition: { assignment } })));

  it("theta_01 = 0 with no computation, theta_12 as the dense analysis' SVD gives it, no Theorem 4 bound", () => {
    const sparse = analysedOn(csrFromDense(fromRows(rows)));
    const dense = analysedOn(fromRows(rows));
    const h = sparse.heterogeneity;
    expect(h.theta[0][1]).toBe(0);
    expect(h.theta[0][2]).toBe(Math.PI / 2);
    expect(h.thetaH).toBe(0);
    expect(h.thetaHPair).toEqual([0, 1]);
    expect(h.estimates).toMatchObject({
      thetaH: { method: 'dimension-count', absoluteErrorBound: 0, iterations: 0 },
      overlappingPairs: 2,
      intersectingPairs: 1,
      unconvergedPairs: 0,
    });
    // The dense path counts the same dimensions (0 exactly; its SVD gave 1.1e-16) and agrees on theta_12 to 1e-10.
    expect(dense.heterogeneity.theta[0][1]).toBe(0);
    expect(dense.heterogeneity.thetaHPair).toEqual([0, 1]);
    expect(h.theta[1][2]).toBeGreaterThan(0.01);
    expect(Math.abs(h.theta[1][2] - dense.heterogeneity.theta[1][2])).toBeLessThan(1e-10);
    // phi_i from the machines' own pairs equals the dense scan's over all rows; Theorem 4 is not reported on a tall A.
    for (let i = 0; i < 3; i++) {
      if (h.phi[i] === null) expect(dense.heterogeneity.phi[i]).toBeNull();
      else expect(Math.abs(h.phi[i]! - dense.heterogeneity.phi[i]!)).toBeLessThan(1e-14);
    }
    expect(sparse.bounds.theorem4KappaALowerBound).toBeNull();
    expect(dense.bounds.theorem4KappaALowerBound).toBeNull();
  });
});
