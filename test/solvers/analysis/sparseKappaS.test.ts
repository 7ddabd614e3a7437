/**
 * lambda_max(S), lambda_min(S) and kappa(S) of CSR machines (../../../src/solvers/analysis/kappaS.ts,
 * csrSSpectrumWork through sSpectrum) and kappa(A^T A) beside them, against
 *  - every case of the heterogeneity fixtures (NumPy, dense; fixtures README tolerances): relative
 *    max(1e-6, 4 eps kappa(S)) on kappa(S) and lambda_min(S) (the fixture's eigvalsh of the formed S
 *    knows lambda_min only to ~eps lambda_max, see ./fixtures.test.ts), 1e-6 on lambda_max(S);
 *  - the SciPy ARPACK values of test/reference/sparse/spectra.json on larger matrices (n up to 10^4): 1e-6 relative.
 * Each estimate's reported bound (the Krylov error) must hold up to rounding: of the reference
 * (64 eps, and 4 eps kappa(S) for lambda_min) and of our operators: lambda_min(S) comes from solves
 * with the LU of A, which perturb it by about kappa(A) eps whatever kappa(S) is (bcsstk03-m4:
 * kappa(A) = 6.8e6, kappa(S) = 7e3, measured 2e-8), so 64 eps kappa(A) there.
 * The principal angles and the machines' column slots are ../sparse/spectrumOfS.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { matVec } from '../../../src/solvers/matrix.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { csrFromDense, csrToDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { sparseMatrixConditioning } from '../../../src/solvers/analysis/conditioning.js';
import type { SpectralEstimate } from '../../../src/solvers/eigen/eigenvalueEstimate.js';
import { sparseLu } from '../../../src/solvers/sparse/sparseLu.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { lambdaMaxSWork, scaledGramOperator, sSpectrum } from '../../../src/solvers/analysis/kappaS.js';
import { machineColumnSlots, overlapTwoColouring, PairAngleContext, sparsePairAngle } from '../../../src/solvers/sparse/spectrumOfS.js';
import { fixtureMatrix, loadFixtures } from '../../support/fixtures.js';
import {
  contiguousPartition,
  csrFixture,
  denseCholeskySolves,
  loadSpectraReference,
  namedMatrix,
  partitionFromAssignment,
  relativeDifference,
  sparseCholeskySolves,
} from '../sparse/spectraSupport.js';

const EPS = Number.EPSILON;

function expectEstimate(e: SpectralEstimate, exact: number, tolerance: number, rounding: number): void {
  const difference = relativeDifference(e.value, exact);
  expect(difference).toBeLessThanOrEqual(tolerance);
  expect(difference).toBeLessThanOrEqual(e.relativeErrorBound + rounding);
}

describe('sparse S spectrum on the heterogeneity fixtures', () => {
  for (const f of loadFixtures()) {
    it(f.name, () => {
      const { a, rows } = csrFixture(f);
      const e = f.expected;
      const solves = sparseCholeskySolves(a, rows);
      const lu = sparseLu(a);
      const slots = machineColumnSlots(a, rows);
      const s = sSpectrum(slots, solves, lu);
      const conditioning = sparseMatrixConditioning(a, { factorization: lu });
      const kappaRounding = 4 * EPS * e.kappaS;
      const minimumRounding = Math.max(64 * EPS, kappaRounding, 64 * EPS * Math.sqrt(e.kappaAtA));
      expectEstimate(s.lambdaMaxS, e.lambdaMaxS, 1e-6, 64 * EPS);
      expectEstimate(s.lambdaMinS, e.lambdaMinS, Math.max(1e-6, kappaRounding), minimumRounding);
      expectEstimate(s.kappaS, e.kappaS, Math.max(1e-6, kappaRounding), minimumRounding);
      const kappaAtARounding = 8 * EPS * Math.sqrt(e.kappaAtA);
      expectEstimate(conditioning.kappaAtA, e.kappaAtA, Math.max(1e-6, kappaAtARounding), kappaAtARounding);
    });
  }
  it('tiny-angle-1e-07 (m = 2): lambda_min(S) = 1 - cos theta_H and lambda_max(S) = 1 + cos theta_H to 1e-6', () => {
    // With two machines the eigenvalues of S are 1 +- cos theta_k over the principal angles; the
    // fixture's own lambda_min (eigvalsh of the formed S) is 3 % off at kappa(S) = 4e14.
    const f = loadFixtures().find((x) => x.name.startsWith('tiny-angle'));
    if (!f) throw new Error('no tiny-angle fixture');
    const a = csrFromDense(fixtureMatrix(f));
    const rows = partitionFromAssignment(f.partition.assignment, 2);
    const solves = sparseCholeskySolves(a, rows);
    const s = sSpectrum(machineColumnSlots(a, rows), solves, sparseLu(a));
    const angle = sparsePairAngle(new PairAngleContext(machineColumnSlots(a, rows), solves), 0, 1);
    expect(relativeDifference(s.lambdaMinS.value, 2 * Math.sin(angle.theta / 2) ** 2)).toBeLessThan(1e-6);
    expect(relativeDifference(s.lambdaMaxS.value, 1 + Math.cos(angle.theta))).toBeLessThan(1e-14);
  });
  it('gives the same values with dense Cholesky factors (the factor layer is only seen through its solves)', () => {
    for (const name of ['bcsstk03-m4', 'bfwa62-m4', 'gaussian-n60-m6-mu1', 'tiny-angle-1e-07']) {
      const f = loadFixtures().find((x) => x.name === name);
      if (!f) throw new Error(`no fixture ${name}`);
      const { a, rows } = csrFixture(f);
      const lu = sparseLu(a);
      const slots = machineColumnSlots(a, rows);
      const sparse = sSpectrum(slots, sparseCholeskySolves(a, rows), lu);
      const dense = sSpectrum(slots, denseCholeskySolves(a, rows), lu);
      expect(relativeDifference(dense.lambdaMaxS.value, sparse.lambdaMaxS.value)).toBeLessThan(1e-10);
      // lambda_min(S) does not use the factors at all.
      expect(dense.lambdaMinS).toEqual(sparse.lambdaMinS);
    }
  });
});

describe('sparse S spectrum against ARPACK (spectra.json)', () => {
  const reference = loadSpectraReference();
  const conditioningReference = new Map(reference.conditioning.map((c) => [c.name, c.sigmaMax / c.sigmaMin]));
  for (const ref of reference.sSpectrum) {
    it(`${ref.name} (n = ${ref.n}, m = ${ref.m})`, () => {
      const a = namedMatrix(ref.name);
      const rows = contiguousPartition(ref.n, ref.m);
      expect(rows.map((r) => r[0])).toEqual(ref.blockStarts);
      const solves = sparseCholeskySolves(a, rows);
      const slots = machineColumnSlots(a, rows);
      const s = sSpectrum(slots, solves, sparseLu(a));
      expectEstimate(s.lambdaMaxS, ref.lambdaMaxS, 1e-6, 64 * EPS);
      const kappaA = conditioningReference.get(ref.name.replace(/-m\d+$/, ''));
      if (kappaA === undefined) throw new Error(`no conditioning reference for ${ref.name}`);
      const rounding = Math.max(64 * EPS, 4 * EPS * ref.kappaS, 64 * EPS * kappaA);
      expectEstimate(s.lambdaMinS, ref.lambdaMinS, 1e-6, rounding);
      expectEstimate(s.kappaS, ref.kappaS, 1e-6, rounding);
      if (ref.dense) expect(relativeDifference(ref.dense.lambdaMinS, ref.lambdaMinS)).toBeLessThan(Math.max(1e-6, rounding));
    });
  }
});

describe('lambda_max(S) by reflection on a bipartite overlap graph', () => {
  // Contiguous strips of 2-D grids overlap only their neighbours (a path); the Lanczos run on the
  // scaled Gram operator is the independent reference for 2 - lambda_min(S).
  const cases: { name: string; a: CsrMatrix; m: number }[] = [
    { name: 'Poisson 30 x 30 in 6 strips', a: poisson2d(30), m: 6 },
    { name: 'convection-diffusion 24 x 24 in 5 strips', a: convectionDiffusion2d(24, 10), m: 5 },
    { name: 'Poisson 20 x 20 in 2 strips', a: poisson2d(20), m: 2 },
  ];
  for (const c of cases) {
    it(`${c.name}: 2 - lambda_min(S) equals Lanczos' lambda_max(S) within both bounds`, () => {
      const rows = contiguousPartition(c.a.rows, c.m);
      const slots = machineColumnSlots(c.a, rows);
      const colouring = overlapTwoColouring(slots);
      expect(colouring).not.toBeNull();
      expect(Array.from(colouring ?? [])).toEqual(Array.from({ length: c.m }, (_, i) => i % 2));
      const solves = sparseCholeskySolves(c.a, rows);
      const s = sSpectrum(slots, solves, sparseLu(c.a), { tolerance: 1e-10 });
      expect(s.lambdaMaxS.method).toBe('bipartite-reflection');
      expect(s.lambdaMaxS.iterations).toBe(0);
      expect(s.lambdaMaxS.value).toBe(2 - s.lambdaMinS.value);
      expect(s.lambdaMaxS.relativeErrorBound).toBeLessThan(1e-9);
      const lanczos = runSync(lambdaMaxSWork(slots, solves, { tolerance: 1e-12 }));
      expect(lanczos.method).not.toBe('bipartite-reflection');
      const difference = relativeDifference(s.lambdaMaxS.value, lanczos.value);
      expect(difference).toBeLessThan(1e-9);
      expect(difference).toBeLessThanOrEqual(s.lambdaMaxS.relativeErrorBound + lanczos.relativeErrorBound + 64 * EPS);
      expect(s.kappaS.value).toBeCloseTo(s.lambdaMaxS.value / s.lambdaMinS.value, 12);
    });
  }

  it('keeps Lanczos when the overlap graph has an odd cycle (three machines sharing columns)', () => {
    // Poisson 12 x 12 with its rows dealt round-robin to 3 machines: every machine meets both others.
    const a = poisson2d(12);
    const rows = partitionFromAssignment(
      Array.from({ length: a.rows }, (_, r) => r % 3),
      3,
    );
    const slots = machineColumnSlots(a, rows);
    expect(overlapTwoColouring(slots)).toBeNull();
    const s = sSpectrum(slots, sparseCholeskySolves(a, rows), sparseLu(a));
    expect(['lanczos', 'lanczos-exhaustive']).toContain(s.lambdaMaxS.method);
    expect(s.lambdaMaxS.value).toBeGreaterThan(2 - s.lambdaMinS.value + 1e-3);
  });
});

describe('structure', () => {
  it('S = I exactly when no column is shared (Proposition 1)', () => {
    const f = loadFixtures().find((x) => x.name.startsWith('block-diagonal'));
    if (!f) throw new Error('no block-diagonal fixture');
    const { a, rows } = csrFixture(f);
    const s = sSpectrum(machineColumnSlots(a, rows), sparseCholeskySolves(a, rows), sparseLu(a));
    expect(s.lambdaMaxS).toMatchObject({ value: 1, method: 'structural', relativeErrorBound: 0 });
    expect(s.kappaS.value).toBe(1);
  });

  it("applies S' = Lb^{-1} A A^T Lb^{-T} like the dense product, with columns shared by many machines", () => {
    // 40 x 40, ~25 % dense, rows dealt to 5 machines at random: columns touched by 1 to 5 machines.
    const n = 40;
    const rng = new SeededRandom(7);
    const data = new Float64Array(n * n);
    for (let k = 0; k < data.length; k++) if (rng.nextDouble() < 0.25 || k % (n + 1) === 0) data[k] = 2 * rng.nextDouble() - 1;
    const a = csrFromDense({ rows: n, cols: n, data });
    const assignment = Array.from({ length: n }, () => Math.floor(rng.nextDouble() * 5));
    for (let i = 0; i < 5; i++) assignment[i] = i; // no empty machine
    const rows = partitionFromAssignment(assignment, 5);
    const solves = denseCholeskySolves(a, rows);
    const op = scaledGramOperator(machineColumnSlots(a, rows), solves);
    const v = rng.fillSigned(new Float64Array(n));
    const out = new Float64Array(n);
    op.apply(v, out);
    // Dense: u = Lb^{-T} v, w = A (A^T u), expected = Lb^{-1} w.
    const u = new Float64Array(n);
    rows.forEach((r, i) => {
      const x = Float64Array.from(r, (row) => v[row]);
      solves.solveLT(i, x, x);
      r.forEach((row, k) => (u[row] = x[k]));
    });
    const dense = csrToDense(a);
    const at = { rows: n, cols: n, data: new Float64Array(n * n) };
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) at.data[j * n + i] = dense.data[i * n + j];
    const w = matVec(dense, matVec(at, u));
    let scale = 0;
    rows.forEach((r, i) => {
      const x = Float64Array.from(r, (row) => w[row]);
      solves.solveL(i, x, x);
      r.forEach((row, k) => {
        scale = Math.max(scale, Math.abs(x[k]));
        expect(Math.abs(out[row] - x[k])).toBeLessThan(1e-12 * Math.max(1, Math.abs(x[k])));
      });
    });
    expect(scale).toBeGreaterThan(0.5);
  });
});
