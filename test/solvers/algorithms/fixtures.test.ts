/**
 * The six algorithms against the reference fixtures (computed independently with NumPy/SciPy):
 * optimal rates, and runs at the optimal parameters that reach the predicted accuracy at the
 * predicted rate.
 */
import { describe, expect, it } from 'vitest';
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { ALGORITHM_IDS, algorithms } from '../../../src/solvers/algorithms/registry.js';
import type { SpectralData } from '../../../src/solvers/algorithms/types.js';
import { relativeResidual } from '../../../src/solvers/matrix.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { loadFixtures, type Fixture } from '../../support/fixtures.js';
import { systemFromRows } from './support.js';

const fixtures = loadFixtures();
const withMatrix = fixtures.filter((f) => f.A !== undefined && f.A.length <= 60);

/** Rates depend on L and mu only through kappa(A^T A), so mu = 1, L = kappa reproduces them. */
function spectralFromExpected(f: Fixture): SpectralData {
  const e = f.expected;
  return { m: e.m, lambdaMinS: e.lambdaMinS, lambdaMaxS: e.lambdaMaxS, mu: 1, L: e.kappaAtA };
}

/** 1e-9 on rates, looser when the condition numbers themselves are only known to a few digits. */
function rateTolerance(f: Fixture): number {
  return Math.max(f.expected.kappaS, f.expected.kappaAtA) > 1e8 ? 1e-7 : 1e-9;
}

describe('optimal rates and parameters on every fixture', () => {
  it('covers the generated fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(14);
    expect(withMatrix.length).toBeGreaterThanOrEqual(8);
  });

  for (const f of fixtures) {
    it(`${f.name}: optimal rates equal the fixture's, and rate() at the optimal parameters gives them back`, () => {
      const spectral = spectralFromExpected(f);
      for (const id of ALGORITHM_IDS) {
        const tuning = algorithms[id].optimal(spectral);
        expect(Math.abs(tuning.rate - f.expected.rates[id]), `${id} optimal`).toBeLessThanOrEqual(rateTolerance(f));
        expect(Math.abs(algorithms[id].rate(spectral, tuning.parameters) - tuning.rate), `${id} rate()`).toBeLessThanOrEqual(1e-9);
        expect(Object.keys(tuning.parameters)).toEqual([...algorithms[id].parameterNames]);
      }
    });
  }
});

describe('runs at the optimal parameters on the small fixtures', () => {
  for (const f of withMatrix) {
    const rows = f.A as number[][];
    const n = rows.length;
    const sv = new SingularValueDecomposition(new Matrix(rows)).diagonal;
    const L = sv[0] ** 2;
    const mu = sv[n - 1] ** 2;
    const kappaA = sv[0] / sv[n - 1];
    const spectral: SpectralData = { m: f.expected.m, lambdaMinS: f.expected.lambdaMinS, lambdaMaxS: f.expected.lambdaMaxS, L, mu };
    for (const id of ALGORITHM_IDS) {
      const rho = f.expected.rates[id];
      const predicted = rho <= 0 ? 1 : Math.ceil(Math.log(1e-8) / Math.log(rho));
      if (!(predicted < 20000)) continue;
      it(`${f.name} ${id}: reaches relative error 1e-8 at the predicted rate (rho = ${rho.toPrecision(6)})`, () => {
        const system = systemFromRows(rows, f.partition.assignment);
        // |e|/|x*| <= kappa(A) |r|/|b|, so this residual tolerance guarantees the 1e-8 error.
        const result = runAlgorithm(system, id, spectral, { tolerance: 1e-8 / kappaA, maxIterations: 4 * predicted + 200 });
        expect(result.status).toBe('converged');
        expect(result.relativeError).not.toBeNull();
        expect(result.relativeError as number).toBeLessThanOrEqual(1e-8);
        expect(Math.abs(result.theoreticalRate - rho)).toBeLessThanOrEqual(1e-9);
        // The residual the machines reported matches the one recomputed from A directly.
        const last = result.trace.relativeResidual[result.trace.relativeResidual.length - 1];
        expect(Math.abs(last - result.relativeResidual)).toBeLessThanOrEqual(1e-12 + 1e-6 * result.relativeResidual);
        expect(result.relativeResidual).toBeCloseTo(relativeResidual(system.A, result.solution, system.b), 15);
        if (result.iterations >= 20) {
          expect(result.empiricalRate).not.toBeNull();
          expect(Math.abs((result.empiricalRate as number) - rho)).toBeLessThanOrEqual(0.1 * (1 - rho));
        } else if (result.empiricalRate !== null) {
          expect(Math.abs(result.empiricalRate - rho)).toBeLessThanOrEqual(0.1 * (1 - rho));
        }
      });
    }
  }
});

describe('Proposition 1 on the permuted block-diagonal fixture (Example 1)', () => {
  const f = fixtures.find((x) => x.name.startsWith('block-diagonal-permuted'));
  it('has the fixture', () => expect(f).toBeDefined());
  if (!f) return;
  const rows = f.A as number[][];
  const n = rows.length;
  const sv = new SingularValueDecomposition(new Matrix(rows)).diagonal;
  const spectral: SpectralData = {
    m: f.expected.m,
    lambdaMinS: f.expected.lambdaMinS,
    lambdaMaxS: f.expected.lambdaMaxS,
    L: sv[0] ** 2,
    mu: sv[n - 1] ** 2,
  };

  it('APC is exact after one iteration (S = I, rho_APC = 0) while D-HBM is not', () => {
    const system = systemFromRows(rows, f.partition.assignment);
    expect(system.machines.some((mc) => !mc.full)).toBe(true); // the sparse-support path is exercised
    const apc = runAlgorithm(system, 'apc', spectral, { tolerance: 1e-13, maxIterations: 1 });
    expect(apc.status).toBe('converged');
    expect(apc.iterations).toBe(1);
    expect(apc.relativeError as number).toBeLessThan(1e-13);
    expect(apc.theoreticalRate).toBeLessThan(1e-12);
    const dhbm = runAlgorithm(system, 'dhbm', spectral, { tolerance: 1e-13, maxIterations: 1 });
    expect(dhbm.status).toBe('max-iterations');
    expect(dhbm.relativeError as number).toBeGreaterThan(0.1);
  });
});
