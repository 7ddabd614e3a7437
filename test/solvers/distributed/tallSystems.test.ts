/**
 * Tall systems (N > n) in the library, on each backend, against NumPy (scripts/tallReference.py,
 * test/fixtures/):
 *  - ash608 (608 x 188, b = A ones) on 4 contiguous machines whose rows are dependent (ranks 59, 65,
 *    66, 57 of 152): dense rows and the streamed Matrix Market CSR, every algorithm reaches ones to
 *    1e-8, the machines' ranks, kappa(S) and kappa(A^T A) equal NumPy's (the HTTP upload: test/api/tallSystems.test.ts);
 *  - a noisy 400 x 100 Gaussian system on 5 machines: inconsistent; kappa(S), kappa(A^T A), x_LS and
 *    x_W equal NumPy's; the gradient methods reach x_LS and the projection methods x_W, each run
 *    naming its target and measuring its error to it.
 */
import { beforeAll, expect, it } from 'vitest';
import { ALGORITHM_IDS, algorithms } from '../../../src/solvers/algorithms/registry.js';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { buildDistributedSystem, type DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { leastSquaresPoints } from '../../../src/solvers/distributed/leastSquares.js';
import { NotSquareError } from '../../../src/solvers/errors.js';
import { buildMatrix } from '../../../src/solvers/input/buildMatrix.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { fromRows, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { csrFromDense, csrToDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { readMatrixCsr, relativeDifference as relativeDistance } from '../sparse/support.js';
import { describeEachBackend } from '../../support/backends.js';
import { fixture, gaussianFixture } from './tallFixtures.js';

interface Ash608Fixture {
  ranks: number[];
  kappaS: number;
  kappaAtA: number;
}
const gaussian = gaussianFixture();
const ash608 = fixture('ash608.json') as Ash608Fixture;

const relative = (actual: number, expected: number): number => Math.abs(actual - expected) / Math.abs(expected);

let ashCsr: CsrMatrix;
let ashDense: DenseMatrix;

beforeAll(() => {
  ashCsr = readMatrixCsr('ash608.mtx');
  // The dense path from JSON rows, as an inline job sends them.
  const rows = csrToDense(ashCsr);
  ashDense = buildMatrix({
    format: 'dense',
    data: Array.from({ length: rows.rows }, (_, i) => Array.from(rows.data.subarray(i * 188, (i + 1) * 188))),
  });
});

it('reads tall matrices and refuses wide ones', () => {
  expect(ashCsr.rows).toBe(608);
  expect(ashCsr.cols).toBe(188);
  expect(ashDense.rows).toBe(608);
  expect(() =>
    buildMatrix({
      format: 'dense',
      data: [
        [1, 2, 3],
        [4, 5, 6],
      ],
    }),
  ).toThrow(NotSquareError);
});

describeEachBackend('ash608 (tall, dependent rows on every machine)', () => {
  for (const storage of ['dense', 'csr'] as const) {
    it(`${storage}: ranks, kappa(S) and kappa(A^T A) as NumPy's; every algorithm reaches ones to 1e-8`, () => {
      const A = storage === 'dense' ? ashDense : ashCsr;
      const system: DistributedSystem = buildDistributedSystem(createProblem({ A, partition: { machines: 4 } }));
      expect(system.storage).toBe(storage);
      expect(system.machines.map((machine) => machine.rank)).toEqual(ash608.ranks);
      const analysis = analyze(system);
      expect(analysis.rows).toBe(608);
      expect(analysis.machineRanks).toEqual(ash608.ranks);
      expect(analysis.consistency?.consistent).toBe(true);
      expect(relative(analysis.conditioning.kappaS, ash608.kappaS)).toBeLessThan(1e-9);
      expect(relative(analysis.conditioning.kappaAtA, ash608.kappaAtA)).toBeLessThan(1e-9);
      // Row spaces that intersect: theta_H = 0, Proposition 2's bound is infinite (null) and said not to hold.
      expect(analysis.heterogeneity.thetaH).toBeLessThan(1e-6);
      expect(analysis.bounds.tall?.proposition2).toBe(false);
      for (const id of ALGORITHM_IDS) {
        const run = runAlgorithm(system, id, spectralDataOf(analysis), { tolerance: 1e-12, maxIterations: 5000 });
        expect(run.status, `${id}: ${run.stopReason}`).toBe('converged');
        expect(run.target).toBe(algorithms[id].family === 'gradient' ? 'least-squares' : 'block-weighted');
        const error = run.solution.reduce((largest, v) => Math.max(largest, Math.abs(v - 1)), 0);
        expect(error, id).toBeLessThan(1e-8);
      }
    });
  }
});

describeEachBackend('a noisy 400 x 100 Gaussian system (inconsistent)', () => {
  let system: DistributedSystem;
  let analysis: Analysis;
  beforeAll(() => {
    system = buildDistributedSystem(createProblem({ A: fromRows(gaussian.A), rhs: gaussian.b, partition: { machines: 5 } }));
    analysis = analyze(system);
  });

  it("reports its consistency, kappa(S) and kappa(A^T A) as NumPy's", () => {
    const c = analysis.consistency!;
    expect(c.consistent).toBe(false);
    expect(relative(c.leastSquaresResidual, gaussian.leastSquaresResidual)).toBeLessThan(1e-9);
    expect(relative(c.weightedResidual, gaussian.weightedResidual)).toBeLessThan(1e-9);
    expect(relative(c.weightedDistance, gaussian.weightedDistance)).toBeLessThan(1e-6);
    expect(relative(analysis.conditioning.kappaS, gaussian.kappaS)).toBeLessThan(1e-9);
    expect(relative(analysis.conditioning.kappaAtA, gaussian.kappaAtA)).toBeLessThan(1e-9);
    expect(analysis.machineRanks).toEqual([80, 80, 80, 80, 80]);
    expect(analysis.recommendation.leastSquaresNote).toMatch(/x_W.*differs from x_LS/);
  });

  it('explains itself without the square-system propositions it flags as not holding', () => {
    const { recommendation, bounds } = analysis;
    expect(bounds.tall!.proposition2).toBe(false);
    expect(recommendation.sufficientCondition.applicable).toBe(false);
    // It read "where APC slows down (Proposition 2)" beside bounds.tall.proposition2 false (a QA pass, on a regression).
    expect(recommendation.regime).not.toMatch(/slows down \(Proposition 2\)|Proposition 2 forces/);
    expect(recommendation.regime).toMatch(
      /a tall system.*Proposition 2 and Theorem 4, stated for square systems, bound neither method here/,
    );
    expect(recommendation.explanation).toMatch(/Corollary 1\) does not apply to a tall system/);
    expect(recommendation.explanation).not.toMatch(/Corollary 1\) (holds|applies but)/);
  });

  it("x_LS and x_W equal NumPy's lstsq and whitened solution", () => {
    const points = leastSquaresPoints(system);
    expect(relativeDistance(points.leastSquares, gaussian.leastSquares)).toBeLessThan(1e-12);
    expect(relativeDistance(points.blockWeighted, gaussian.blockWeighted)).toBeLessThan(1e-12);
  });

  it('gradient methods reach x_LS, projection methods x_W (to 1e-8), each measured against its own target', () => {
    for (const id of ALGORITHM_IDS) {
      const run = runAlgorithm(system, id, spectralDataOf(analysis), { tolerance: 1e-11, maxIterations: 5000 });
      expect(run.status, `${id}: ${run.stopReason}`).toBe('converged');
      const gradient = algorithms[id].family === 'gradient';
      expect(run.target).toBe(gradient ? 'least-squares' : 'block-weighted');
      const target = gradient ? gaussian.leastSquares : gaussian.blockWeighted;
      const other = gradient ? gaussian.blockWeighted : gaussian.leastSquares;
      expect(relativeDistance(run.solution, target), id).toBeLessThan(1e-8);
      expect(relativeDistance(run.solution, other), id).toBeGreaterThan(1e-3);
      expect(run.relativeError!, id).toBeLessThan(1e-8);
    }
  });

  it('stopped short, each run says its error to its target against the tolerance, not the residual that cannot reach it', () => {
    for (const id of ['apc', 'dhbm'] as const) {
      const run = runAlgorithm(system, id, spectralDataOf(analysis), { tolerance: 1e-11, maxIterations: 3 });
      expect(run.status).toBe('max-iterations');
      const target = run.target === 'least-squares' ? 'least-squares' : 'block-weighted';
      expect(run.stopReason).toMatch(
        new RegExp(`^Stopped at maxIterations = 3: relative error to the ${target} solution \\S+ > tolerance`),
      );
      expect(run.stopReason).toMatch(/the system is inconsistent/);
      expect(run.stopReason).not.toMatch(/relative residual \S+ > tolerance/);
    }
  });
});

describeEachBackend('dependent rows with labels outside their span (machine 0 repeats a row five times)', () => {
  it('dense and CSR reach the same x_W; the dense APC pass reports the residual of every row', () => {
    const rows = gaussian.A.map((row) => [...row]);
    for (let k = 1; k < 5; k++) rows[k] = [...rows[0]];
    const A = fromRows(rows);
    const solutions: Float64Array[] = [];
    for (const matrix of [A, csrFromDense(A)]) {
      const system = buildDistributedSystem(createProblem({ A: matrix, rhs: gaussian.b, partition: { machines: 5 } }));
      const analysis = analyze(system);
      expect(analysis.machineRanks).toEqual([76, 80, 80, 80, 80]);
      expect(analysis.consistency?.consistent).toBe(false);
      const run = runAlgorithm(system, 'apc', spectralDataOf(analysis), { tolerance: 1e-11, maxIterations: 5000 });
      expect(run.status, run.stopReason).toBe('converged');
      expect(run.relativeError!).toBeLessThan(1e-8);
      if (system.storage === 'dense') expect(relative(run.trace.relativeResidual.at(-1)!, run.relativeResidual)).toBeLessThan(1e-9);
      solutions.push(run.solution);
    }
    expect(relativeDistance(solutions[1], solutions[0])).toBeLessThan(1e-9);
  });
});
