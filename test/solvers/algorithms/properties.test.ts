/**
 * Property tests over random small systems and random (non-contiguous) partitions:
 *  - rate() at the optimal parameters equals the optimal rate;
 *  - rate() equals the spectral radius of the explicit error-iteration matrix built here with
 *    ml-matrix (APC on the machines' null spaces, the gradient methods on A^T A, Cimmino on S);
 *  - a few steps of every method equal a dense reference iteration written from the formulas;
 *  - every bound of the paper holds whenever its hypothesis does (metrics computed here).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EigenvalueDecomposition, Matrix, pseudoInverse } from 'ml-matrix';
import { ALGORITHM_IDS, algorithms } from '../../../src/solvers/algorithms/registry.js';
import { computeBounds } from '../../../src/solvers/analysis/bounds.js';
import { machineRows, prng, randomCase, referenceMetrics, spectralRadius, systemFromRows, type RandomCase } from './support.js';

const caseArbitrary = fc
  .record({
    n: fc.integer({ min: 2, max: 10 }),
    m: fc.integer({ min: 1, max: 4 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    sigma: fc.constantFrom(0, 1e-3, 0.05, 0.3, 1),
  })
  .map(({ n, m, seed, sigma }) => randomCase(n, Math.min(m, n), seed, sigma));

/** Null-space basis N_i (n x (n - p_i)): eigenvectors of I - Q_i Q_i^T with eigenvalue 1. */
function nullSpaceBasis(Q: Matrix, n: number): Matrix {
  const P = Matrix.eye(n).sub(Q.mmul(Q.transpose()));
  const e = new EigenvalueDecomposition(P, { assumeSymmetric: true });
  const cols: number[][] = [];
  e.realEigenvalues.forEach((lambda, k) => {
    if (lambda > 0.5) cols.push(e.eigenvectorMatrix.getColumn(k));
  });
  return cols.length === 0 ? new Matrix(n, 0) : new Matrix(cols).transpose();
}

/** The APC error iteration on (z_1..z_m, ebar), e_i = N_i z_i (docs/SPEC.md; Azizan-Ruhi et al.). */
function apcIterationMatrix(c: RandomCase, bases: Matrix[], gamma: number, eta: number): Matrix {
  const n = c.rows.length;
  const m = c.m;
  const N = bases.map((Q) => nullSpaceBasis(Q, n));
  const dims = N.map((x) => x.columns);
  const total = dims.reduce((s, d) => s + d, 0) + n;
  const M = Matrix.zeros(total, total);
  const eb = total - n;
  let off = 0;
  for (let i = 0; i < m; i++) {
    const d = dims[i];
    // z_i' = (1 - gamma) z_i + gamma N_i^T ebar
    for (let k = 0; k < d; k++) M.set(off + k, off + k, 1 - gamma);
    const NiT = N[i].transpose();
    for (let k = 0; k < d; k++) for (let j = 0; j < n; j++) M.set(off + k, eb + j, gamma * NiT.get(k, j));
    // ebar' += (eta/m) N_i z_i' = (eta/m) N_i ((1 - gamma) z_i + gamma N_i^T ebar)
    for (let j = 0; j < n; j++)
      for (let k = 0; k < d; k++) M.set(eb + j, off + k, M.get(eb + j, off + k) + (eta / m) * (1 - gamma) * N[i].get(j, k));
    const proj = N[i].mmul(NiT);
    for (let j = 0; j < n; j++)
      for (let l = 0; l < n; l++) M.set(eb + j, eb + l, M.get(eb + j, eb + l) + (eta / m) * gamma * proj.get(j, l));
    off += d;
  }
  for (let j = 0; j < n; j++) M.set(eb + j, eb + j, M.get(eb + j, eb + j) + 1 - eta);
  return M;
}

function block(blocks: Matrix[][]): Matrix {
  return new Matrix(blocks.flatMap((row) => Array.from({ length: row[0].rows }, (_, r) => row.flatMap((b) => b.getRow(r)))));
}

const RUNS = { numRuns: 300 };

describe('rates', () => {
  it('rate() at the optimal parameters equals the optimal rate, for every algorithm', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        const ref = referenceMetrics(c);
        for (const id of ALGORITHM_IDS) {
          const opt = algorithms[id].optimal(ref.spectral);
          expect(Math.abs(algorithms[id].rate(ref.spectral, opt.parameters) - opt.rate), id).toBeLessThanOrEqual(1e-9);
        }
      }),
      RUNS,
    );
  });

  it('APC: rate() equals the spectral radius of the explicit iteration matrix, at the optimum and at random parameters', () => {
    fc.assert(
      fc.property(
        caseArbitrary,
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        (c, gamma, eta) => {
          const ref = referenceMetrics(c);
          const opt = algorithms.apc.optimal(ref.spectral);
          expect(Math.abs(opt.rate - (Math.sqrt(ref.kappaS) - 1) / (Math.sqrt(ref.kappaS) + 1))).toBeLessThan(1e-9);
          const { gamma: g, eta: e } = opt.parameters;
          expect(g).toBeLessThanOrEqual(e * (1 + 1e-12)); // gamma is the smaller root (both 1 when m = 1)
          // At the optimum the eigenvalues are defective (Jordan blocks), which an eigensolver resolves
          // only to ~sqrt(eps): hence the looser tolerance there.
          expect(Math.abs(spectralRadius(apcIterationMatrix(c, ref.bases, g, e)) - opt.rate)).toBeLessThan(2e-6);
          const rate = algorithms.apc.rate(ref.spectral, { gamma, eta });
          expect(Math.abs(spectralRadius(apcIterationMatrix(c, ref.bases, gamma, eta)) - rate)).toBeLessThan(2e-6);
          // MLM is APC with gamma = eta = 1.
          expect(Math.abs(spectralRadius(apcIterationMatrix(c, ref.bases, 1, 1)) - algorithms.mlm.optimal(ref.spectral).rate)).toBeLessThan(
            1e-7,
          );
          expect(algorithms.mlm.rate(ref.spectral, {})).toBeCloseTo(algorithms.mlm.optimal(ref.spectral).rate, 14);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gradient methods and Cimmino: rate() equals the spectral radius of the explicit iteration matrix', () => {
    fc.assert(
      fc.property(
        caseArbitrary,
        fc.double({ min: 0.05, max: 2.5, noNaN: true }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        (c, alphaScale, beta) => {
          const ref = referenceMetrics(c);
          const n = c.rows.length;
          const A = new Matrix(c.rows);
          const G = A.transpose().mmul(A);
          const I = Matrix.eye(n);
          const Z = Matrix.zeros(n, n);
          const alpha = alphaScale / ref.L;
          const check = (id: 'dgd' | 'dhbm' | 'dnag' | 'cimmino', M: Matrix, parameters: Record<string, number>): void => {
            expect(Math.abs(spectralRadius(M) - algorithms[id].rate(ref.spectral, parameters)), id).toBeLessThan(2e-6);
          };
          const step = I.clone().sub(G.clone().mul(alpha));
          check('dgd', step, { alpha });
          // heavy ball on (x, z): z' = beta z + G x, x' = x - alpha z'
          check(
            'dhbm',
            block([
              [step, Z.clone().add(I.clone().mul(-alpha * beta))],
              [G, I.clone().mul(beta)],
            ]),
            { alpha, beta },
          );
          // Nesterov on (x, y): y' = (I - alpha G) x, x' = (1 + beta) y' - beta y
          check(
            'dnag',
            block([
              [step.clone().mul(1 + beta), I.clone().mul(-beta)],
              [step, Z],
            ]),
            { alpha, beta },
          );
          const nu = alphaScale / ref.lambdaMaxS;
          check('cimmino', I.clone().sub(ref.S.clone().mul(nu)), { nu });
          // and at the optimum (defective for heavy ball and Nesterov)
          for (const id of ['dgd', 'dhbm', 'dnag', 'cimmino'] as const) {
            const p = algorithms[id].optimal(ref.spectral).parameters;
            const a = p.alpha ?? 0;
            const b = p.beta ?? 0;
            const s = I.clone().sub(G.clone().mul(a));
            const M =
              id === 'dgd'
                ? s
                : id === 'dhbm'
                  ? block([
                      [s, I.clone().mul(-a * b)],
                      [G, I.clone().mul(b)],
                    ])
                  : id === 'dnag'
                    ? block([
                        [s.clone().mul(1 + b), I.clone().mul(-b)],
                        [s, Z],
                      ])
                    : I.clone().sub(ref.S.clone().mul(p.nu));
            expect(Math.abs(spectralRadius(M) - algorithms[id].optimal(ref.spectral).rate), `${id} optimum`).toBeLessThan(2e-6);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('iterations', () => {
  it('a few steps of every method equal a dense reference iteration (random partitions, sparse supports)', () => {
    fc.assert(
      fc.property(caseArbitrary, fc.integer({ min: 0, max: 1000 }), (c, seed) => {
        const n = c.rows.length;
        const m = c.m;
        const ref = referenceMetrics(c);
        const system = systemFromRows(c.rows, c.assignment);
        const A = new Matrix(c.rows);
        const b = Matrix.columnVector(Array.from(system.b));
        const G = A.transpose().mmul(A);
        const g = (x: Matrix): Matrix => G.mmul(x).sub(A.transpose().mmul(b));
        const blocks = machineRows(c);
        const bOf = blocks.map(() => [] as number[]);
        c.assignment.forEach((i, k) => bOf[i].push(system.b[k]));
        // A_i^+ (= A_i^T (A_i A_i^T)^{-1}, taken from the SVD: forming A_i A_i^T would square the
        // condition number of a nearly dependent block, and the reference would be the inaccurate side), P_i = I - A_i^+ A_i
        const pinv = blocks.map((Ai) => pseudoInverse(new Matrix(Ai)));
        const P = blocks.map((Ai, i) => Matrix.eye(n).sub(pinv[i].mmul(new Matrix(Ai))));
        const r = prng(seed);
        const steps = 3;
        const close = (label: string, actual: Float64Array, expected: Matrix, scale = 1): void => {
          const e = expected.getColumn(0);
          let d = 0;
          let s = 0;
          for (let j = 0; j < n; j++) {
            d = Math.max(d, Math.abs(actual[j] - e[j]));
            s = Math.max(s, Math.abs(e[j]));
          }
          expect(d, label).toBeLessThanOrEqual(1e-9 * Math.max(1, s) * scale);
        };
        const residual2 = (x: Matrix): number => A.mmul(x).sub(b).norm() ** 2;

        // APC with random positive parameters
        const gamma = 0.2 + 1.5 * r.uniform();
        const eta = 0.2 + 1.5 * r.uniform();
        const apc = algorithms.apc.create(system, { gamma, eta });
        let xs = pinv.map((Pi, i) => Pi.mmul(Matrix.columnVector(bOf[i])));
        let xbar = xs.reduce((s, x) => s.add(x), Matrix.zeros(n, 1)).div(m);
        close('apc x(0)', apc.estimate, xbar);
        for (let t = 0; t < steps; t++) {
          apc.step();
          xs = xs.map((x, i) => x.clone().add(P[i].mmul(xbar.clone().sub(x)).mul(gamma)));
          xbar = xs
            .reduce((s, x) => s.add(x), Matrix.zeros(n, 1))
            .mul(eta / m)
            .add(xbar.clone().mul(1 - eta));
        }
        const scale = Math.max(1, ref.kappaA);
        close('apc', apc.estimate, xbar, scale);
        expect(Math.abs(apc.residualNormSquared() - residual2(xbar))).toBeLessThanOrEqual(1e-8 * scale * Math.max(1, residual2(xbar)));
        const dist = Math.max(...xs.map((x) => x.clone().sub(xbar).norm()));
        expect(Math.abs((apc.consensusDistance() as number) - dist)).toBeLessThanOrEqual(1e-8 * scale * Math.max(1, dist));

        // Cimmino, DGD, heavy ball, Nesterov at their optimal parameters
        const nu = algorithms.cimmino.optimal(ref.spectral).parameters.nu;
        const cim = algorithms.cimmino.create(system, { nu });
        let x = Matrix.zeros(n, 1);
        for (let t = 0; t < steps; t++) {
          cim.step();
          let d = Matrix.zeros(n, 1);
          blocks.forEach((Ai, i) => {
            d = d.add(pinv[i].mmul(Matrix.columnVector(bOf[i]).sub(new Matrix(Ai).mmul(x))));
          });
          x = x.add(d.mul(nu));
        }
        close('cimmino', cim.estimate, x, scale);
        expect(Math.abs(cim.residualNormSquared() - residual2(x))).toBeLessThanOrEqual(1e-9 * scale * Math.max(1, residual2(x)));

        const { alpha: aD } = algorithms.dgd.optimal(ref.spectral).parameters;
        const dgd = algorithms.dgd.create(system, { alpha: aD });
        x = Matrix.zeros(n, 1);
        for (let t = 0; t < steps; t++) {
          dgd.step();
          x = x.sub(g(x).mul(aD));
        }
        close('dgd', dgd.estimate, x, scale);
        expect(Math.abs(dgd.residualNormSquared() - residual2(x))).toBeLessThanOrEqual(1e-9 * scale * Math.max(1, residual2(x)));

        const { alpha: aH, beta: bH } = algorithms.dhbm.optimal(ref.spectral).parameters;
        const hb = algorithms.dhbm.create(system, { alpha: aH, beta: bH });
        x = Matrix.zeros(n, 1);
        let z = Matrix.zeros(n, 1);
        for (let t = 0; t < steps; t++) {
          hb.step();
          z = z.mul(bH).add(g(x));
          x = x.sub(z.clone().mul(aH));
        }
        close('dhbm', hb.estimate, x, scale);

        const { alpha: aN, beta: bN } = algorithms.dnag.optimal(ref.spectral).parameters;
        const nag = algorithms.dnag.create(system, { alpha: aN, beta: bN });
        x = Matrix.zeros(n, 1);
        let y = Matrix.zeros(n, 1);
        for (let t = 0; t < steps; t++) {
          nag.step();
          const yNext = x.clone().sub(g(x).mul(aN));
          x = yNext.clone().add(yNext.clone().sub(y).mul(bN));
          y = yNext;
        }
        close('dnag', nag.estimate, x, scale);
        expect(nag.consensusDistance()).toBeNull();
      }),
      { numRuns: 200 },
    );
  });
});

describe('bounds of the paper', () => {
  it('every Proposition / Theorem / Table 1 bound holds whenever its hypothesis does', () => {
    // Both sides are computed in floating point: a condition number kappa is known to about kappa * eps
    // relative (the smallest eigenvalue carries an absolute error of eps * the largest), so the slack grows with it.
    const slack = (kappa: number) => 1e-7 + 16 * Number.EPSILON * kappa;
    let theorem2Seen = 0;
    let theorem3Seen = 0;
    let proposition1Seen = 0;
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        const ref = referenceMetrics(c);
        const bounds = computeBounds({
          n: ref.n,
          m: ref.m,
          blockSizes: ref.blockSizes,
          heterogeneity: {
            thetaH: ref.thetaH,
            cosThetaH: ref.cosThetaH,
            thetaHPair: ref.thetaHPair,
            theta: ref.theta,
            phi: ref.phi,
            phiMin: ref.phiMin,
            rowNormRatio: ref.rowNormRatio,
          },
          theorem4KappaALowerBound: ref.theorem4KappaALowerBound,
        });
        const kS = ref.kappaS;
        if (bounds.proposition1.hypothesisHolds) {
          proposition1Seen++;
          expect(kS).toBeLessThan(1 + 1e-8);
          expect(algorithms.apc.optimal(ref.spectral).rate).toBeLessThan(1e-8);
        }
        expect(kS).toBeGreaterThanOrEqual(bounds.proposition2KappaSLowerBound! * (1 - slack(kS)));
        if (bounds.theorem2KappaSUpperBound !== null) {
          theorem2Seen++;
          expect(bounds.theorem2.hypothesisHolds).toBe(true);
          expect(kS).toBeLessThanOrEqual(bounds.theorem2KappaSUpperBound * (1 + slack(kS)));
        }
        if (bounds.theorem3KappaSUpperBound !== null) {
          theorem3Seen++;
          expect(kS).toBeLessThanOrEqual(bounds.theorem3KappaSUpperBound * (1 + slack(kS)));
        }
        expect(ref.kappaA).toBeGreaterThanOrEqual(bounds.theorem4KappaALowerBound! * (1 - slack(ref.kappaA)));
        if (bounds.theorem4KappaAtALowerBounds.phiMin !== null) {
          expect(ref.kappaAtA).toBeGreaterThanOrEqual(bounds.theorem4KappaAtALowerBounds.phiMin * (1 - slack(ref.kappaAtA)));
        }
        expect(ref.kappaAtA).toBeGreaterThanOrEqual(bounds.theorem4KappaAtALowerBounds.rowNormRatio * (1 - slack(ref.kappaAtA)));
        for (const id of ALGORITHM_IDS) {
          const t1 = bounds.table1[id];
          expect(t1, id).toBeDefined();
          if (!t1) continue;
          const rho = algorithms[id].optimal(ref.spectral).rate;
          for (const [name, lower] of Object.entries(t1.lowerBounds))
            if (lower !== null) expect(rho, `${id} ${name}`).toBeGreaterThanOrEqual(lower - 1e-9);
          if (t1.upper !== null) {
            expect(t1.upperHypothesisHolds).toBe(true);
            expect(rho, `${id} upper`).toBeLessThanOrEqual(t1.upper + 1e-9);
          }
        }
      }),
      { numRuns: 500 },
    );
    // The generator reaches the hypotheses often enough for the check to mean something.
    expect(theorem3Seen).toBeGreaterThan(10);
    expect(theorem2Seen).toBeGreaterThan(5);
    expect(proposition1Seen).toBeGreaterThan(5);
  });
});
