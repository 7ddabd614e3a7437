/**
 * A tall CSR system of 40,000 x 1,000 (4e7 dense entries, beyond the 2^24 a dense copy was once limited
 * to) on 8 machines, each with dependent rows (odd machines' row spaces are proper subspaces of their
 * supports), and inconsistent: the sparse analysis and the least-squares points equal SciPy's
 * (scripts/tallSparseReference.py, test/fixtures/tallSparse.json, the same matrix from the same integer
 * formulas), DGD reaches x_LS and APC x_W, on each backend. Each machine's 5000 rows span at most 133
 * columns, so its Gram matrix is 5000 x 5000 of rank <= 133: the TypeScript backend's pivot-dropping
 * Cholesky (src/solvers/sparse/droppingCholesky.ts) costs O(r p^2) there, under a second per machine.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, expect, it } from 'vitest';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import type { Analysis } from '../../../src/solvers/analysis/types.js';
import { leastSquaresPoints } from '../../../src/solvers/distributed/leastSquares.js';
import { buildSparseSystem, type CsrSystem } from '../../../src/solvers/distributed/sparseSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { csrFromCoo, multiply, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { describeEachBackend } from '../../support/backends.js';
import { relativeDifference } from '../sparse/support.js';

interface TallSparseFixture {
  N: number;
  n: number;
  machines: number;
  ranks: number[];
  L: number;
  mu: number;
  kappaAtA: number;
  lambdaMinS: number;
  lambdaMaxS: number;
  kappaS: number;
  leastSquaresResidual: number;
  weightedResidual: number;
  weightedDistance: number;
  leastSquares: number[];
  blockWeighted: number[];
}
const reference = JSON.parse(readFileSync(new URL('../../fixtures/tallSparse.json', import.meta.url), 'utf8')) as TallSparseFixture;
const { N, n, machines: m } = reference;
const P = N / m;

/** The matrix and b of scripts/tallSparseReference.py (its docstring), entry for entry. */
function tallSparseSystem(): { A: CsrMatrix; b: Float64Array } {
  const rowIdx: number[] = [];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < m; i++) {
    const lo = Math.max(0, 125 * i - 4);
    const hi = Math.min(n, 125 * (i + 1) + 4);
    const c = hi - lo;
    const shift = i % 2 === 0 ? 0.5 : 0;
    const v = (j: number): number => 1 + ((37 * j + 11 * i) % 17) / 34;
    for (let t = 0; t < P; t++) {
      const r = i * P + t;
      const j = lo + (t % c);
      const k = lo + (((t % c) + 1 + Math.floor(t / c)) % c);
      const s = 1 + (r % 7) / 10;
      rowIdx.push(r, r);
      colIdx.push(j, k);
      values.push(s * (v(k) + shift), -s * v(j));
    }
  }
  const A = csrFromCoo(N, n, rowIdx, colIdx, values);
  const b = multiply(A, new Float64Array(n).fill(1));
  for (let r = 0; r < N; r++) b[r] += 1e-2 * (((131 * r) % 101) / 50 - 1);
  return { A, b };
}

/** Not a performance bound: room for the setup and analysis on a shared machine. */
const SETUP_TIMEOUT_MS = 180_000;

const relative = (actual: number, expected: number): number => Math.abs(actual - expected) / Math.abs(expected);

describeEachBackend('a tall CSR system of 40,000 x 1,000 on 8 machines', () => {
  let system: CsrSystem;
  let analysis: Analysis;
  beforeAll(() => {
    const { A, b } = tallSparseSystem();
    expect(N * n).toBeGreaterThan(2 ** 24);
    system = buildSparseSystem(createProblem({ A, rhs: b, partition: { machines: m } }));
    analysis = analyze(system);
  }, SETUP_TIMEOUT_MS);

  it("analyses sparsely: ranks, the spectrum and the consistency equal SciPy's", () => {
    expect(analysis.machineRanks).toEqual(reference.ranks);
    for (const key of ['L', 'mu', 'kappaAtA', 'lambdaMinS', 'lambdaMaxS', 'kappaS'] as const) {
      expect(relative(analysis.conditioning[key], reference[key]), key).toBeLessThan(1e-8);
    }
    const c = analysis.consistency!;
    expect(c.consistent).toBe(false);
    expect(relative(c.leastSquaresResidual, reference.leastSquaresResidual)).toBeLessThan(1e-8);
    expect(relative(c.weightedResidual, reference.weightedResidual)).toBeLessThan(1e-8);
    expect(relative(c.weightedDistance, reference.weightedDistance)).toBeLessThan(1e-6);
    const points = leastSquaresPoints(system);
    expect(relativeDifference(points.leastSquares, reference.leastSquares)).toBeLessThan(1e-10);
    expect(relativeDifference(points.blockWeighted, reference.blockWeighted)).toBeLessThan(1e-10);
  });

  it('DGD reaches x_LS and APC x_W', () => {
    for (const id of ['dgd', 'apc'] as const) {
      const run = runAlgorithm(system, id, spectralDataOf(analysis), { tolerance: 1e-10, maxIterations: 20000 });
      expect(run.status, `${id}: ${run.stopReason}`).toBe('converged');
      const target = id === 'dgd' ? reference.leastSquares : reference.blockWeighted;
      expect(relativeDifference(run.solution, target), id).toBeLessThan(1e-8);
    }
  });
});
