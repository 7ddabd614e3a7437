/**
 * kappa(S) of dense machines (src/solvers/analysis/kappaS.ts) on each backend, against closed forms
 * (Proposition 1's S = I, cot^2(theta_H / 2) for two machines) and ml-matrix's eigenvalues of the
 * explicitly formed S; the routes the studies and the split analysis take (Q^T by one bidiagonalization,
 * lambda_min(S) computed apart) give the analysis' values.
 */
import { EigenvalueDecomposition, Matrix, QrDecomposition } from 'ml-matrix';
import { expect, it } from 'vitest';
import { computeGramBlocks } from '../../../src/solvers/analysis/gramBlocks.js';
import {
  assembleBasisRowsWork,
  basesSBlockProduct,
  basisFactoredMatrixWork,
  inverseSThroughFactoredOperator,
  basesSOperator,
  computeSConditioning,
  FACTORS_ROUTE_MAX_CONDITION,
  sConditioningWork,
  sOfFactorsWork,
  sSmallestWork,
  triangularConditionEstimate,
  triangularFactorFromRowGram,
} from '../../../src/solvers/analysis/kappaS.js';
import { rowGraphAndGram } from '../../../src/solvers/partitioning/rowGraph.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { largestEigenvalueWork } from '../../../src/solvers/eigen/lanczos.js';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import { loadFixture } from '../../support/fixtures.js';
import { describeEachBackend } from '../../support/backends.js';
import { randomMatrix, randomRows, svdValues, systemOf } from '../../support/systems.js';
import { buildDenseFactorsWork, buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { systemCost } from '../../../src/solvers/analysis/timeToSolution.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';

/** Orthonormal basis (n x p) of the row space of the machine's rows, from ml-matrix. */
function mlBasis(rows: number[][]): Matrix {
  const t = new Matrix(rows).transpose();
  return new QrDecomposition(t).orthogonalMatrix.subMatrix(0, t.rows - 1, 0, t.columns - 1);
}

describeEachBackend('kappa(S)', () => {
  it('is 1 exactly with S = I for machines on disjoint supports (Proposition 1)', () => {
    const rows = [
      [2, 0, 1],
      [0, 3, 0],
      [1, 0, 5],
    ];
    const system = systemOf(rows, [0, 1, 0], 2);
    const s = computeSConditioning(system, computeGramBlocks(system.machines));
    expect(s).toMatchObject({ kappaS: 1, lambdaMinS: 1, lambdaMaxS: 1 });
  });

  it('is cot^2(theta_H / 2) for m = 2, down to the tiny-angle fixture (kappa(S) ~ 4e14)', () => {
    const fixture = loadFixture('tiny-angle-1e-07');
    const system = systemOf(fixture.A!, fixture.partition.assignment, 2);
    const s = computeSConditioning(system, computeGramBlocks(system.machines));
    // Eigenvalues of S for two machines: 1 +- cos(principal angles) (and 1): kappa = (1 + c) / (1 - c).
    const theta = fixture.expected.thetaH; // 1e-7 to ~1e-16 absolute (an accurate angle, unlike its kappaS)
    const exact = 1 / Math.tan(theta / 2) ** 2;
    expect(Math.abs(s.kappaS - exact) / exact).toBeLessThan(1e-6);
    expect(Math.abs(s.lambdaMinS - 2 * Math.sin(theta / 2) ** 2) / s.lambdaMinS).toBeLessThan(1e-6);
    expect(Math.abs(s.lambdaMaxS - (1 + Math.cos(theta)))).toBeLessThan(1e-15);
  });

  it('is (1 + c) / (1 - c) for m = 2 with c = sigma_max(Q_1^T Q_2) from ml-matrix', () => {
    const n = 16;
    const rows = randomRows(n, 8, 0.5);
    const assignment = Array.from({ length: n }, (_, k) => (k < 7 ? 0 : 1));
    const system = systemOf(rows, assignment, 2);
    const s = computeSConditioning(system, computeGramBlocks(system.machines));
    const c = svdValues(
      mlBasis(rows.slice(0, 7))
        .transpose()
        .mmul(mlBasis(rows.slice(7))),
    )[0];
    expect(Math.abs(s.kappaS - (1 + c) / (1 - c)) / s.kappaS).toBeLessThan(1e-10);
    expect(Math.abs(s.lambdaMaxS - (1 + c))).toBeLessThan(1e-14);
  });

  for (const [m, mean] of [
    [4, 0],
    [5, 1],
  ] as const) {
    it(`matches ml-matrix's eigenvalues of the explicitly formed S (n = 30, m = ${m}, mean ${mean})`, () => {
      const n = 30;
      const rows = randomRows(n, 30 + m, mean);
      // Uneven machines, one of them holding a single row.
      const assignment = Array.from({ length: n }, (_, k) => (k === 0 ? 0 : 1 + (k % (m - 1))));
      const system = systemOf(rows, assignment, m);
      const s = computeSConditioning(system, computeGramBlocks(system.machines));
      const S = Matrix.zeros(n, n);
      for (let i = 0; i < m; i++) {
        const q = mlBasis(rows.filter((_, k) => assignment[k] === i));
        S.add(q.mmul(q.transpose()));
      }
      const ev = new EigenvalueDecomposition(S, { assumeSymmetric: true }).realEigenvalues;
      const lo = Math.min(...ev);
      const hi = Math.max(...ev);
      expect(Math.abs(s.lambdaMaxS - hi) / hi).toBeLessThan(1e-13);
      // The explicit eigensolver knows lambda_min to ~eps lambda_max only.
      expect(Math.abs(s.lambdaMinS - lo)).toBeLessThan(1e-14 * hi);
      expect(Math.abs(s.kappaS - hi / lo) / s.kappaS).toBeLessThan(1e-14 * (hi / lo));

      // The studies' route: the squared extreme singular values of Q^T, one bidiagonalization.
      const basisRows = runSync(assembleBasisRowsWork(system, computeGramBlocks(system.machines).offsets));
      const fromBasis = runSync(sConditioningWork(selectedKernels(), { basisRows }));
      expect(Math.abs(fromBasis.lambdaMaxS - hi) / hi).toBeLessThan(1e-13);
      expect(Math.abs(fromBasis.lambdaMinS - lo)).toBeLessThan(1e-14 * hi);
      expect(Math.abs(fromBasis.kappaS - s.kappaS) / s.kappaS).toBeLessThan(1e-13 * s.kappaS);

      // The advisor's route: lambda_max(S) through the machines' bases, lambda_min(S) as the analysis computes it.
      const fromBases = runSync(sConditioningWork(selectedKernels(), { bases: system }));
      expect(Math.abs(fromBases.lambdaMaxS - hi) / hi).toBeLessThan(1e-13);
      expect(fromBases.lambdaMinS).toBe(s.lambdaMinS);
      expect(Math.abs(fromBases.kappaS - s.kappaS) / s.kappaS).toBeLessThan(1e-13);
    });
  }

  it("gives lambda_min(S) through another partition's factorization of A as through its own Q^T (the advisor's candidates)", () => {
    const n = 48;
    const rows = randomRows(n, 11, 1);
    // The candidate: uneven machines in a shuffled order; the factored partition: contiguous strips of other sizes.
    const candidate = systemOf(
      rows,
      Array.from({ length: n }, (_, k) => (k * 7) % 5),
      5,
    );
    const other = systemOf(
      rows,
      Array.from({ length: n }, (_, k) => (k < 10 ? 0 : k < 30 ? 1 : 2)),
      3,
    );
    const kernels = selectedKernels();
    const own = computeSConditioning(candidate, computeGramBlocks(candidate.machines));
    const factored = runSync(basisFactoredMatrixWork(kernels, other));
    const through = runSync(sConditioningWork(kernels, { bases: candidate, factored }));
    expect(Math.abs(through.lambdaMinS / own.lambdaMinS - 1)).toBeLessThan(1e-11);
    expect(Math.abs(through.kappaS / own.kappaS - 1)).toBeLessThan(1e-11);
    // Started from eigenvectors of a nearby partition's S (the refinement's proposals), to the same values.
    const moved = (k: number): number => (k === 3 ? 1 : (k * 7) % 5);
    const near = systemOf(
      rows,
      Array.from({ length: n }, (_, k) => moved(k)),
      5,
    );
    const nearOwn = computeSConditioning(near, computeGramBlocks(near.machines));
    const u = new Float64Array(n);
    const v = new Float64Array(n);
    // Lanczos with Ritz vectors on this candidate's S and S^{-1}, as the move effects hand them over.
    runSync(largestEigenvalueWork(basesSOperator(kernels, candidate.machines, n), { ritzVector: u, tolerance: 1e-6 }));
    runSync(
      largestEigenvalueWork(inverseSThroughFactoredOperator(kernels, factored, candidate.machines), { ritzVector: v, tolerance: 1e-6 }),
    );
    const started = runSync(sConditioningWork(kernels, { bases: near, factored, startVectors: { u, v } }));
    expect(Math.abs(started.kappaS / nearOwn.kappaS - 1)).toBeLessThan(1e-11);
    // It reads the factorization given: one of a perturbed A gives another lambda_min(S).
    const perturbed = systemOf(
      rows.map((row, k) => row.map((x, j) => (k === j ? x + 0.5 : x))),
      Array.from({ length: n }, (_, k) => (k < 10 ? 0 : k < 30 ? 1 : 2)),
      3,
    );
    const wrong = runSync(sConditioningWork(kernels, { bases: candidate, factored: runSync(basisFactoredMatrixWork(kernels, perturbed)) }));
    expect(Math.abs(wrong.lambdaMinS / own.lambdaMinS - 1)).toBeGreaterThan(1e-3);
  });

  it("applies S through the machines' bases to a block of vectors as to each vector alone", () => {
    // Machine 0 (every third row) misses the last 4 columns: one machine on its own columns, the others on all.
    const n = 24;
    const rows = randomRows(n, 9, 0.5);
    for (let k = 0; k < n; k += 3) for (let j = n - 4; j < n; j++) rows[k][j] = 0;
    const system = systemOf(
      rows,
      Array.from({ length: n }, (_, k) => k % 3),
      3,
    );
    expect(system.machines[0].c).toBe(n - 4);
    const kernels = selectedKernels();
    const r = 5;
    const block = Float64Array.from({ length: r * n }, (_, k) => Math.sin(1 + 0.37 * k));
    const together = basesSBlockProduct(kernels, system.machines)(block, r, n);
    const operator = basesSOperator(kernels, system.machines, n);
    const y = new Float64Array(n);
    for (let j = 0; j < r; j++) {
      operator.apply(block.subarray(j * n, (j + 1) * n), y);
      for (let i = 0; i < n; i++) expect(Math.abs(together[j * n + i] - y[i])).toBeLessThan(1e-13);
    }
  });

  it("gives S = I from the machines' bases on disjoint supports, and a tall system's value from them", () => {
    const disjoint = systemOf(
      [
        [2, 0, 1],
        [0, 3, 0],
        [1, 0, 5],
      ],
      [0, 1, 0],
      2,
    );
    expect(runSync(sConditioningWork(selectedKernels(), { bases: disjoint }))).toMatchObject({ kappaS: 1, lambdaMinS: 1, lambdaMaxS: 1 });
    // N = 40 rows in R^12 on 4 machines: Q^T is tall, both routes read it.
    const tall = buildDistributedSystem(
      createProblem({ A: randomMatrix(40, 12, 5), partition: { assignment: Array.from({ length: 40 }, (_, k) => k % 4) } }),
    );
    expect(tall.A.rows).toBeGreaterThan(tall.n);
    const fromGram = computeSConditioning(tall, computeGramBlocks(tall.machines));
    expect(runSync(sConditioningWork(selectedKernels(), { bases: tall }))).toEqual(fromGram);
  });

  it("gives the one-piece value from a worker's lambda_min(S) run (the split analysis), and refuses a singular Q^T", () => {
    const n = 24;
    const rows = randomRows(n, 5, 1);
    const assignment = Array.from({ length: n }, (_, k) => k % 3);
    const system = systemOf(rows, assignment, 3);
    const gram = computeGramBlocks(system.machines);
    const kernels = selectedKernels();
    const inverse = runSync(sSmallestWork(kernels, system, gram.offsets));
    expect(runSync(sConditioningWork(kernels, { gram, n, inverse }))).toEqual(computeSConditioning(system, gram));
    expect(() => runSync(sConditioningWork(kernels, { gram, n, inverse: null }))).toThrow(SingularMatrixError);
  });
});

describeEachBackend("kappa(S) from the machines' R alone", () => {
  /** n rows, machine 0's (every third row) missing the last 4 columns; the partition k % 3 and the strips of 3 machines. */
  function case24(): { rows: number[][]; assignment: number[]; strips: number[] } {
    const n = 24;
    const rows = randomRows(n, 21, 0.5);
    for (let k = 0; k < n; k += 3) for (let j = n - 4; j < n; j++) rows[k][j] = 0;
    return {
      rows,
      assignment: Array.from({ length: n }, (_, k) => k % 3),
      strips: Array.from({ length: n }, (_, k) => Math.floor((3 * k) / n)),
    };
  }

  it('gives the kappa(S) of the route through Q (lambda_min(S) bit for bit), the same R and the same time-to-solution cost', () => {
    const { rows, assignment, strips } = case24();
    const kernels = selectedKernels();
    const problem = createProblem({ A: fromRows(rows), partition: { assignment } });
    const system = buildDistributedSystem(problem, kernels);
    const factored = runSync(basisFactoredMatrixWork(kernels, systemOf(rows, strips, 3)));
    const factors = runSync(buildDenseFactorsWork(problem, kernels));
    for (const [i, machine] of factors.machines.entries()) {
      expect(machine.r).toEqual(system.machines[i].r);
      expect(machine.qStart).toEqual(system.machines[i].qStart);
      expect(machine.qEnd).toEqual(system.machines[i].qEnd);
    }
    expect(factors.machines[0].c).toBe(20);
    expect(systemCost(factors)).toEqual(systemCost(system));
    const throughQ = runSync(sConditioningWork(kernels, { bases: system, factored }));
    const fromR = runSync(sOfFactorsWork(kernels, factors, factored))!;
    expect(fromR.lambdaMinS).toBe(throughQ.lambdaMinS);
    expect(Math.abs(fromR.lambdaMaxS / throughQ.lambdaMaxS - 1)).toBeLessThan(1e-12);
    expect(Math.abs(fromR.kappaS / throughQ.kappaS - 1)).toBeLessThan(1e-12);
  });

  it('declines (null) when a machine holds nearly dependent rows, whose R would cost lambda_max(S) its digits', () => {
    const { rows, assignment, strips } = case24();
    // Rows 1 and 4 (machine 1) 1e-7 apart: kappa(R_1) ~1e8.
    rows[4] = rows[1].map((x, j) => x + 1e-7 * Math.cos(j));
    const kernels = selectedKernels();
    const problem = createProblem({ A: fromRows(rows), partition: { assignment } });
    const factors = runSync(buildDenseFactorsWork(problem, kernels));
    expect(triangularConditionEstimate(kernels, factors.machines[1].r, factors.machines[1].p)).toBeGreaterThan(FACTORS_ROUTE_MAX_CONDITION);
    const factored = runSync(basisFactoredMatrixWork(kernels, systemOf(rows, strips, 3)));
    expect(runSync(sOfFactorsWork(kernels, factors, factored))).toBeNull();
  });

  it("takes R from the rows' Gram matrix (Cholesky): the QR's up to the signs of its rows, the same kappa(S); declined on nearly dependent rows", () => {
    const { rows, assignment, strips } = case24();
    const kernels = selectedKernels();
    const A = fromRows(rows);
    const problem = createProblem({ A, partition: { assignment } });
    const { gram } = rowGraphAndGram(kernels, A);
    const viaQr = runSync(buildDenseFactorsWork(problem, kernels));
    const viaGram = runSync(
      buildDenseFactorsWork(problem, kernels, {
        triangularFactorOf: (machineRows) => triangularFactorFromRowGram(kernels, gram, machineRows),
      }),
    );
    // Machines on every column keep no copy of their rows (lambda_max(S) reads A's); machine 0, on 20 columns, keeps its.
    expect(viaGram.machines.map(({ a }) => a === null)).toEqual([false, true, true]);
    for (const [i, machine] of viaGram.machines.entries()) {
      expect(machine.reflectors).toBeNull();
      expect(machine.aStart).toEqual(viaQr.machines[i].aStart);
      expect(machine.aEnd).toEqual(viaQr.machines[i].aEnd);
      const { r, p } = viaQr.machines[i];
      let scale = 0;
      for (const x of r) scale = Math.max(scale, Math.abs(x));
      for (let s = 0; s < p; s++)
        for (let l = 0; l < p; l++)
          expect(Math.abs(machine.r[s * p + l] - Math.sign(r[s * p + s]) * r[s * p + l])).toBeLessThan(1e-12 * scale);
    }
    const factored = runSync(basisFactoredMatrixWork(kernels, systemOf(rows, strips, 3)));
    const fromQr = runSync(sOfFactorsWork(kernels, viaQr, factored))!;
    const fromGram = runSync(sOfFactorsWork(kernels, viaGram, factored))!;
    expect(Math.abs(fromGram.kappaS / fromQr.kappaS - 1)).toBeLessThan(1e-12);
    // Rows 1 and 4 (machine 1) 1e-7 apart: its block of A A^T is numerically singular, or its factor's inverse too large.
    rows[4] = rows[1].map((x, j) => x + 1e-7 * Math.cos(j));
    const near = rowGraphAndGram(kernels, fromRows(rows)).gram;
    expect(triangularFactorFromRowGram(kernels, near, viaQr.machines[1].rows)).toBeNull();
    expect(triangularFactorFromRowGram(kernels, near, viaQr.machines[0].rows)).not.toBeNull();
  });

  it("estimates kappa(R) from below, within a factor 2 of ml-matrix's singular values", () => {
    const kernels = selectedKernels();
    for (const [seed, scale] of [
      [3, 1],
      [4, 1e-3],
      [5, 1e-6],
    ] as const) {
      const rows = randomRows(12, seed);
      rows[5] = rows[5].map((x, j) => rows[2][j] + scale * x);
      const system = systemOf(
        rows,
        Array.from({ length: 12 }, () => 0),
        1,
      );
      const { r, p } = system.machines[0];
      const values = svdValues(new Matrix(Array.from({ length: p }, (_, i) => Array.from(r.subarray(i * p, (i + 1) * p)))));
      const exact = Math.max(...values) / Math.min(...values);
      const estimate = triangularConditionEstimate(kernels, r, p);
      expect(estimate).toBeLessThanOrEqual(exact * (1 + 1e-10));
      expect(estimate).toBeGreaterThan(exact / 2);
    }
  });
});
