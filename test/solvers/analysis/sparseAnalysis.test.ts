/**
 * The analysis on the sparse path, against independent references:
 *  - every case of the heterogeneity fixtures (NumPy, dense), the real matrices among them, with the
 *    matrix in CSR: every field against the fixture with the tolerances of ./fixtureChecks.ts, and
 *    against the dense path's analysis of the same system with the same tolerances;
 *  - the paper's Example 1 (permuted block diagonal, n = 10^5) in CSR: kappa(S) = 1, theta_H = pi/2
 *    and APC exact after one iteration (Proposition 1), all structural (no iteration);
 *  - SciPy analyses of grid matrices too large for the dense path (test/reference/sparse/analysis.json,
 *    written by analysis.py next to it, n = 40 000): within 1e-6 relative, angles 1e-9, and each
 *    estimate's reported error bound holds (up to the rounding of the reference, 64 eps, and of the
 *    solves the operators apply, kappa(A) eps for the LU of A);
 *  - the pairs' angles on threads (src/solvers/parallel/taskPool.ts) are those of one thread, bit for bit,
 *    and so are L, mu and S's ends computed as tasks beside them (src/solvers/analysis/sparseAnalysisTasks.ts),
 *    whole or staged.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import { analyze, analyzeWork, spectralDataOf, spectralStageWork } from '../../../src/solvers/analysis/analyze.js';
import { machineGramSolves, pairAnglesSpec } from '../../../src/solvers/analysis/sparseAnalysis.js';
import {
  sparseAnalysisTasksSpec,
  sparseAnalysisThreads,
  sparseTasksProgress,
  type SparseAnalysisTaskResult,
} from '../../../src/solvers/analysis/sparseAnalysisTasks.js';
import type { Analysis, Estimate } from '../../../src/solvers/analysis/types.js';
import { runSync, type WorkProgress } from '../../../src/solvers/cooperative.js';
import { nativeBlas } from '../../../src/solvers/linalg/backend.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import type { CsrSystem } from '../../../src/solvers/distributed/sparseSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { InvalidParameterError } from '../../../src/solvers/errors.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import {
  DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ,
  setParallelAnalysisTasksMinNnz,
  setSolverThreads,
  threadsForSetupTasks,
} from '../../../src/solvers/parallel/threads.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { nnzOf, selectRows, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { gramMatrix } from '../../../src/solvers/sparse/gram.js';
import { currentThreadGramSolver, gramFactorizer } from '../../../src/solvers/machines/placement.js';
import { convectionDiffusion2d, poisson2d } from '../../../src/solvers/sparse/generators.js';
import { machineColumnSlots, type SparsePairAngle } from '../../../src/solvers/sparse/spectrumOfS.js';
import { describeEachBackend } from '../../support/backends.js';
import { heldTasksWork } from '../parallel/heldTasks.js';
import { loadFixtures, type Fixture } from '../../support/fixtures.js';
import { analyzeFixture, checkFixture, EPS, expectAbsolute, expectRelative, kappaAtATolerance, kappaSTolerance } from './fixtureChecks.js';
import { permutedBlockDiagonal } from './sparseExamples.js';

const fixtures = loadFixtures();

/** The dense analysis as a fixture's expected values, to compare the sparse one with the same checks. */
function expectedOf(a: Analysis): Fixture['expected'] {
  const h = a.heterogeneity;
  const c = a.conditioning;
  const sc = a.recommendation.sufficientCondition;
  return {
    n: a.n,
    m: a.m,
    blockSizes: a.blockSizes,
    kappaS: c.kappaS,
    lambdaMinS: c.lambdaMinS,
    lambdaMaxS: c.lambdaMaxS,
    kappaAtA: c.kappaAtA,
    thetaH: h.thetaH,
    cosThetaH: h.cosThetaH,
    thetaHPair: h.thetaHPair,
    theta: h.theta,
    phi: h.phi,
    phiMin: h.phiMin,
    rowNormRatio: h.rowNormRatio,
    theorem4KappaALowerBound: a.bounds.theorem4KappaALowerBound!,
    theorem3KappaSUpperBound: a.bounds.theorem3KappaSUpperBound,
    proposition2KappaSLowerBound: a.bounds.proposition2KappaSLowerBound!,
    rates: Object.fromEntries(ALGORITHM_IDS.map((id) => [id, a.rates[id].rate])) as Record<AlgorithmId, number>,
    corollary1: sc.lhs === null ? null : { lhs: sc.lhs, rhs: sc.rhs, holds: sc.holds },
    fasterOfApcDhbm: a.recommendation.exact.faster,
  };
}

/** |value - reference| <= bound |reference| + rounding, for every estimate the sparse path reports. */
function expectBoundHolds(e: Estimate, value: number, reference: number, rounding: number, what: string): void {
  expect(e.relativeErrorBound, `${what}: a finite bound`).not.toBeNull();
  const difference = Math.abs(value - reference) / Math.abs(reference);
  expect(difference, `${what}: ${value} vs ${reference}, bound ${e.relativeErrorBound}`).toBeLessThanOrEqual(
    (e.relativeErrorBound as number) + rounding,
  );
}

/** The decisions built from the values: the same on both paths when the values agree (none is near a threshold). */
function expectSameDecisions(sparse: Analysis, dense: Analysis): void {
  expect(sparse.recommendation.algorithm).toBe(dense.recommendation.algorithm);
  expect(sparse.recommendation.regime).toBe(dense.recommendation.regime);
  expect(sparse.recommendation.exact.tie).toBe(dense.recommendation.exact.tie);
  expect(sparse.bounds.proposition1).toEqual(dense.bounds.proposition1);
  expect(sparse.bounds.theorem2.hypothesisHolds).toBe(dense.bounds.theorem2.hypothesisHolds);
  expect(sparse.bounds.theorem3.hypothesisHolds).toBe(dense.bounds.theorem3.hypothesisHolds);
  expect(Object.keys(sparse.bounds.table1).sort()).toEqual(Object.keys(dense.bounds.table1).sort());
  for (const id of ALGORITHM_IDS) {
    const s = sparse.recommendation.predictedIterations[id];
    const d = dense.recommendation.predictedIterations[id];
    // ceil(ln tol / ln rho) may step by one where the rates differ in their last digits.
    if (d === null || d === undefined) expect(s).toBe(d);
    else expect(Math.abs((s as number) - d), `predictedIterations.${id}`).toBeLessThanOrEqual(Math.max(1, 1e-6 * d));
  }
}

describe('sparse analysis on the heterogeneity fixtures (matrix in CSR)', () => {
  for (const f of fixtures) {
    // sherman5 (n = 3312): a few seconds on the dense path, well under one on the sparse one.
    it(`${f.name}: the fixture's values, the dense path's values and decisions`, { timeout: 120_000 }, () => {
      const sparse = analyzeFixture(f, 'csr');
      checkFixture(f, sparse);
      const dense = analyzeFixture(f, 'dense');
      checkFixture({ ...f, expected: expectedOf(dense) }, sparse);
      expectSameDecisions(sparse, dense);

      // Every iterative value says how it was obtained, and its bound holds against the fixture up to
      // the fixture's own accuracy (./fixtureChecks.ts).
      const estimates = sparse.conditioning.estimates;
      expect(estimates).toBeDefined();
      expect(dense.conditioning.estimates).toBeUndefined();
      expect(dense.heterogeneity.estimates).toBeUndefined();
      const e = f.expected;
      const c = sparse.conditioning;
      expectBoundHolds(estimates!.kappaS, c.kappaS, e.kappaS, kappaSTolerance(e.kappaS), 'kappaS');
      expectBoundHolds(estimates!.lambdaMaxS, c.lambdaMaxS, e.lambdaMaxS, 64 * EPS, 'lambdaMaxS');
      expectBoundHolds(estimates!.lambdaMinS, c.lambdaMinS, e.lambdaMinS, kappaSTolerance(e.kappaS), 'lambdaMinS');
      expectBoundHolds(estimates!.kappaAtA, c.kappaAtA, e.kappaAtA, kappaAtATolerance(e.kappaAtA), 'kappaAtA');
      const angles = sparse.heterogeneity.estimates!;
      expect(angles.unconvergedPairs).toBe(0);
      const angleTolerance = f.name.startsWith('tiny-angle') ? 1e-12 : 1e-9;
      expect(Math.abs(sparse.heterogeneity.thetaH - e.thetaH)).toBeLessThanOrEqual(
        (angles.thetaH.absoluteErrorBound as number) + angleTolerance,
      );
      // Pairs with disjoint supports are exactly pi/2 on both paths.
      let overlapping = 0;
      for (let i = 0; i < e.m; i++)
        for (let j = i + 1; j < e.m; j++) {
          if (sparse.heterogeneity.theta[i][j] === Math.PI / 2) expect(dense.heterogeneity.theta[i][j]).toBe(Math.PI / 2);
          else overlapping++;
        }
      expect(angles.overlappingPairs).toBeGreaterThanOrEqual(overlapping);
    });
  }

  it('permuted block diagonal: S = I and theta_H = pi/2 exactly, from the structure alone (Proposition 1)', () => {
    const a = analyzeFixture(
      fixtures.find((x) => x.name.startsWith('block-diagonal-permuted'))!,
      'csr',
    );
    expect(a.conditioning.kappaS).toBe(1);
    expect(a.heterogeneity.thetaH).toBe(Math.PI / 2);
    expect(a.rates.apc.rate).toBe(0);
    expect(a.conditioning.estimates!.kappaS.method).toBe('ratio');
    expect(a.conditioning.estimates!.lambdaMinS.method).toBe('structural');
    expect(a.heterogeneity.estimates!.thetaH.method).toBe('structural');
    expect(a.heterogeneity.estimates!.overlappingPairs).toBe(0);
  });
});

describe('sparse analysis: reporting', () => {
  it('reports the dense phases without gram-blocks, and the Analysis survives JSON', () => {
    const f = fixtures.find((x) => x.name.startsWith('gaussian-n40'))!;
    const system = buildDistributedSystem(
      createProblem({ A: csrOf(f), partition: partitionFromAssignment(Int32Array.from(f.partition.assignment), f.expected.m) }),
    );
    const phases: string[] = [];
    const work = analyzeWork(system);
    let step = work.next();
    while (!step.done) {
      const p: WorkProgress | undefined = step.value;
      if (p && phases[phases.length - 1] !== p.phase) phases.push(p.phase);
      step = work.next();
    }
    expect(phases).toEqual(['conditioning', 'principal-angles', 'local-angles', 'analysis']);
    const a = step.value;
    expect(JSON.parse(JSON.stringify(a))).toEqual(a);
    expect(runSync(analyzeWork(system))).toEqual(a);
  });
});

describeEachBackend("the machines' Gram solves", () => {
  it('solve the same after a release (each solver remade at its next solve), for the advisor that releases them per candidate', () => {
    const a = poisson2d(30);
    const system = buildDistributedSystem(
      createProblem({
        A: a,
        partition: partitionFromAssignment(
          Int32Array.from({ length: a.rows }, (_, r) => Math.floor(r / 150)),
          6,
        ),
      }),
    );
    const solves = machineGramSolves(system.machines.map((machine) => machine.gram));
    const b = Float64Array.from({ length: 150 }, (_, k) => Math.sin(k + 1));
    const before = new Float64Array(150);
    const after = new Float64Array(150);
    for (let machine = 0; machine < 6; machine++) {
      solves.solveL(machine, b, before);
      solves.solveLT(machine, before, before);
      solves.release();
      solves.solveL(machine, b, after);
      solves.solveLT(machine, after, after);
      expect(after).toEqual(before);
    }
    solves.release();
    solves.release();
  });

  it("factor a pair's shifted joint Grams (one pattern, several shifts) and another pair's as each would be factored alone", () => {
    const a = poisson2d(20);
    // Two pairs of neighbouring 40-row strips (one pattern: the Poisson strips' joint Grams all share it), then a
    // pair of strips apart (another pattern of the same order).
    const strips = (first: number, second: number): CsrMatrix =>
      gramMatrix(
        selectRows(
          a,
          Int32Array.from({ length: 80 }, (_, k) => (k < 40 ? first : second) * 40 + (k % 40)),
        ),
      );
    const shifted = (g: CsrMatrix, sigma: number): CsrMatrix => {
      const values = g.values.slice();
      for (let r = 40; r < 80; r++) for (let p = g.rowPtr[r]; p < g.rowPtr[r + 1]; p++) if (g.colIdx[p] >= 40) values[p] *= sigma;
      return { ...g, values };
    };
    const joints = [strips(2, 3), shifted(strips(2, 3), 2), shifted(strips(2, 3), 1.25), strips(4, 5), strips(1, 7), strips(6, 7)];
    expect(joints[3].colIdx).toEqual(joints[0].colIdx);
    expect(joints[4].colIdx.length).not.toBe(joints[0].colIdx.length);
    const solves = machineGramSolves([]);
    const { joint } = solves;
    if (joint === undefined) throw new Error('no joint Gram solves');
    const b = Float64Array.from({ length: 80 }, (_, k) => Math.cos(3 * k + 1));
    for (const g of joints) {
      const shared = new Float64Array(80);
      const alone = new Float64Array(80);
      const solver = joint.factor(g);
      solver.solve(b, shared);
      solver.release();
      const own = currentThreadGramSolver(gramFactorizer()(g));
      own.solve(b, alone);
      own.release();
      expect(shared).toEqual(alone);
      // A solve, not a copy of b.
      const back = new Float64Array(80);
      for (let r = 0; r < 80; r++) for (let p = g.rowPtr[r]; p < g.rowPtr[r + 1]; p++) back[r] += g.values[p] * shared[g.colIdx[p]];
      for (let r = 0; r < 80; r++) expect(Math.abs(back[r] - b[r])).toBeLessThan(1e-8);
    }
    solves.release();
  });
});

function csrOf(f: Fixture): CsrMatrix {
  const rows = f.A!;
  const n = rows.length;
  const rowPtr = new Int32Array(n + 1);
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (rows[i][j] !== 0) {
        colIdx.push(j);
        values.push(rows[i][j]);
      }
    }
    rowPtr[i + 1] = colIdx.length;
  }
  return { rows: n, cols: n, rowPtr, colIdx: Int32Array.from(colIdx), values: Float64Array.from(values) };
}

describe('Example 1 at n = 10^5 on the sparse path (Proposition 1)', () => {
  it('kappa(S) = 1, theta_H = pi/2 and APC exact after one iteration', { timeout: 300_000 }, () => {
    const n = 100_000;
    const { A, partition } = permutedBlockDiagonal(n, 5, 40, 11);
    const system: CsrSystem = buildDistributedSystem(createProblem({ A, partition }));
    const a = analyze(system);
    expect(a.conditioning.kappaS).toBe(1);
    expect(a.conditioning.lambdaMinS).toBe(1);
    expect(a.conditioning.lambdaMaxS).toBe(1);
    expect(a.heterogeneity.thetaH).toBe(Math.PI / 2);
    expect(a.heterogeneity.theta.every((row, i) => row.every((t, j) => t === (i === j ? 0 : Math.PI / 2)))).toBe(true);
    expect(a.heterogeneity.estimates!.overlappingPairs).toBe(0);
    expect(a.bounds.proposition1.hypothesisHolds).toBe(true);
    expect(a.rates.apc.rate).toBe(0);
    // A^T A is block diagonal too, with blocks of i.i.d. Gaussians: kappa(A^T A) is large and its
    // estimate comes with a bound.
    expect(a.conditioning.kappaAtA).toBeGreaterThan(1);
    expect(a.conditioning.estimates!.kappaAtA.converged).toBe(true);

    const apc = runAlgorithm(system, 'apc', spectralDataOf(a), { tolerance: 1e-10, maxIterations: 1 });
    expect(apc.status).toBe('converged');
    expect(apc.iterations).toBe(1);
    expect(apc.relativeError as number).toBeLessThan(1e-10);
  });
});

interface AnalysisReference {
  name: string;
  n: number;
  m: number;
  blockStarts: number[];
  kappaAtA: number;
  L: number;
  mu: number;
  kappaS: number;
  lambdaMinS: number;
  lambdaMaxS: number;
  thetaH: number;
  cosThetaH: number;
  thetaHPair: [number, number];
  theta: number[][];
  phi: (number | null)[];
  phiMin: number | null;
  rowNormRatio: number;
  theorem4KappaALowerBound: number;
  rates: Record<AlgorithmId, number>;
}

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const reference = JSON.parse(readFileSync(join(repositoryRoot, 'test', 'reference', 'sparse', 'analysis.json'), 'utf8')) as {
  cases: AnalysisReference[];
};

function gridMatrix(name: string): CsrMatrix {
  const poisson = /^poisson2d-k(\d+)-m\d+$/.exec(name);
  if (poisson) return poisson2d(Number(poisson[1]));
  const convection = /^convectionDiffusion2d-k(\d+)-peclet(\d+)-m\d+$/.exec(name);
  if (convection) return convectionDiffusion2d(Number(convection[1]), Number(convection[2]));
  throw new Error(`unknown reference matrix ${name}`);
}

describe('sparse analysis of grid matrices too large for the dense path (SciPy, test/reference/sparse/analysis.json)', () => {
  it('has the cases', () => {
    expect(reference.cases.map((c) => c.n)).toEqual([40_000, 40_000]);
  });

  for (const ref of reference.cases) {
    it(`${ref.name}: every value within 1e-6, each error bound holds`, { timeout: 300_000 }, () => {
      const A = gridMatrix(ref.name);
      const assignment = new Int32Array(ref.n);
      for (let i = 0; i < ref.m; i++) assignment.fill(i, ref.blockStarts[i], i + 1 < ref.m ? ref.blockStarts[i + 1] : ref.n);
      const a = analyze(buildDistributedSystem(createProblem({ A, partition: partitionFromAssignment(assignment, ref.m) })));
      const c = a.conditioning;
      const e = c.estimates!;
      // Rounding beyond the Krylov bounds: the reference's (64 eps) and, for the values through the LU of A
      // (mu, lambda_min(S)), its solves' ~kappa(A) eps.
      const kappaA = Math.sqrt(ref.kappaAtA);
      const luRounding = 64 * EPS * kappaA;
      for (const [key, rounding] of [
        ['L', 64 * EPS],
        ['lambdaMaxS', 64 * EPS],
        ['mu', luRounding],
        ['lambdaMinS', luRounding],
        ['kappaAtA', luRounding],
        ['kappaS', luRounding],
      ] as const) {
        expectRelative(c[key], ref[key], 1e-6, key);
        expectBoundHolds(e[key], c[key], ref[key], rounding, key);
      }
      const h = a.heterogeneity;
      expectAbsolute(h.thetaH, ref.thetaH, 1e-9, 'thetaH');
      expectAbsolute(h.cosThetaH, ref.cosThetaH, 1e-9, 'cosThetaH');
      expect(Math.abs(h.thetaH - ref.thetaH)).toBeLessThanOrEqual((h.estimates!.thetaH.absoluteErrorBound as number) + 1e-11);
      for (let i = 0; i < ref.m; i++)
        for (let j = 0; j < ref.m; j++) expectAbsolute(h.theta[i][j], ref.theta[i][j], 1e-9, `theta[${i}][${j}]`);
      // Strips of a symmetric grid give equal angles for many pairs: any pair tied with theta_H is right.
      const tied: string[] = [];
      for (let i = 0; i < ref.m; i++) for (let j = i + 1; j < ref.m; j++) if (ref.theta[i][j] - ref.thetaH <= 2e-9) tied.push(`${i},${j}`);
      expect(tied).toContain(h.thetaHPair!.join(','));
      for (let i = 0; i < ref.m; i++) expectAbsolute(h.phi[i] as number, ref.phi[i] as number, 1e-9, `phi[${i}]`);
      expectAbsolute(h.phiMin as number, ref.phiMin as number, 1e-9, 'phiMin');
      expectRelative(h.rowNormRatio, ref.rowNormRatio, 1e-9, 'rowNormRatio');
      expectRelative(a.bounds.theorem4KappaALowerBound!, ref.theorem4KappaALowerBound, 1e-6, 'theorem4KappaALowerBound');
      for (const id of ALGORITHM_IDS) expectAbsolute(a.rates[id].rate, ref.rates[id], 1e-6 * (1 - ref.rates[id]) + 1e-12, `rates.${id}`);
    });
  }
});

describe('the progress of the sparse analysis’ tasks on threads', () => {
  it('stays in conditioning while a spectral task runs, counting the pairs done beside it, then counts the pairs', () => {
    // Tasks 0-2 spectral (the LU's ends, L, lambda_max(S)), 3-12 pairs.
    const progressWith = (doneTasks: number[]): WorkProgress =>
      sparseTasksProgress(3, 13, doneTasks.length, (index) => doneTasks.includes(index));
    expect(progressWith([])).toEqual({ phase: 'conditioning', fraction: 0 });
    // The LU's ends still running (the TypeScript backend at n = 10^6), L, lambda_max(S) and eight pairs done beside it.
    expect(progressWith([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({ phase: 'conditioning', fraction: 10 / 13 });
    // L still running (native), the LU's ends and every pair but two done.
    expect(progressWith([0, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({ phase: 'conditioning', fraction: 10 / 13 });
    expect(progressWith([0, 1, 2, 3, 4])).toEqual({ phase: 'principal-angles', fraction: 2 / 10 });
    // Without pairs (the staged analysis), the spectral tasks alone.
    expect(sparseTasksProgress(2, 2, 1, (index) => index === 1)).toEqual({ phase: 'conditioning', fraction: 1 / 2 });
  });
});

describe('threads for a sparse analysis', () => {
  it('run its parts on threads from DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ nonzeros on, where the setup still has one', () => {
    // Poisson 141 x 141 has 98,841 nonzeros, 142 x 142 100,252.
    const systemOf = (side: number): CsrSystem => {
      const system = buildDistributedSystem(createProblem({ A: poisson2d(side), partition: { machines: 16 } }));
      if (system.storage !== 'csr') throw new Error('expected a CSR system');
      return system;
    };
    const below = systemOf(141);
    const above = systemOf(142);
    expect(nnzOf(below.A)).toBeLessThan(DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ);
    expect(nnzOf(above.A)).toBeGreaterThanOrEqual(DEFAULT_PARALLEL_ANALYSIS_TASKS_MIN_NNZ);
    setSolverThreads(2);
    try {
      expect(sparseAnalysisThreads(below)).toBe(1);
      expect(sparseAnalysisThreads(above)).toBe(2);
      expect(threadsForSetupTasks(nnzOf(above.A), 16)).toBe(1);
      for (const bad of [-1, Number.NaN]) expect(() => setParallelAnalysisTasksMinNnz(bad)).toThrow(InvalidParameterError);
    } finally {
      setSolverThreads('auto');
    }
  });
});

describeEachBackend('sparse analysis with its pairs of machines on threads', (backend) => {
  it('gives the angles and estimates of one thread, bit for bit, also for the pairs a worker computes', () => {
    // Rows dealt round robin: every pair of the 5 machines overlaps (10 pairs).
    const A = convectionDiffusion2d(24, 50);
    const assignment = Int32Array.from({ length: A.rows }, (_, k) => k % 5);
    const system = buildDistributedSystem(createProblem({ A, partition: { assignment: Array.from(assignment) } }));
    const analyzeOn = (threads: number): Analysis => {
      setSolverThreads(threads);
      const previous = setParallelAnalysisTasksMinNnz(threads > 1 ? 0 : Infinity);
      try {
        return analyze(system);
      } finally {
        setParallelAnalysisTasksMinNnz(previous);
        setSolverThreads('auto');
      }
    };
    // The tasks hold OpenBLAS to one thread (its dgemv splits sums by thread): the one-thread analysis as well, for the same bits.
    const blas = backend === 'native' ? nativeBlas() : null;
    const blasThreads = blas?.threads() ?? 1;
    blas?.setThreads(1);
    const single = analyzeOn(1);
    blas?.setThreads(blasThreads);
    expect(single.heterogeneity.estimates?.overlappingPairs).toBe(10);
    // The whole analysis on two threads: L beside the LU's ends and lambda_max(S)'s Lanczos (10 pairs of 5
    // machines: no reflection), then the pairs; the staged one: the pairs after the spectral data.
    const whole = analyzeOn(2);
    expect(whole.heterogeneity).toEqual(single.heterogeneity);
    expect(whole.conditioning).toEqual(single.conditioning);
    expect(single.conditioning.estimates?.lambdaMaxS.method).toBe('lanczos');
    setSolverThreads(2);
    const previous = setParallelAnalysisTasksMinNnz(0);
    try {
      const staged = runSync(spectralStageWork(system));
      expect(staged.spectral).toEqual(runSync(spectralStageWork(system, {}, true)).spectral);
      const rest = runSync(staged.rest());
      expect(rest.conditioning).toEqual(single.conditioning);
      expect(rest.heterogeneity).toEqual(single.heterogeneity);
    } finally {
      setParallelAnalysisTasksMinNnz(previous);
      setSolverThreads('auto');
    }
    // Every task of the whole analysis, the worker's included, gives the one-thread value.
    const tasksSpec = sparseAnalysisTasksSpec(system, true);
    blas?.setThreads(1);
    const results = runSync(heldTasksWork<SparseAnalysisTaskResult>('sparse', tasksSpec, tasksSpec.tasks.length, backend));
    blas?.setThreads(blasThreads);
    const c = single.conditioning;
    for (const result of results) {
      if (result.kind === 'L') expect(result.L.value).toBe(c.L);
      else if (result.kind === 'lu-ends') {
        expect(result.mu.value).toBe(c.mu);
        expect(result.lambdaMinS.value).toBe(c.lambdaMinS);
      } else if (result.kind === 'lambda-max-s') expect(result.lambdaMaxS.value).toBe(c.lambdaMaxS);
    }
    const pairAngles = results.flatMap((result) => (result.kind === 'pair' ? [result.angle.theta] : []));
    expect(pairAngles).toHaveLength(10);
    pairAngles.forEach((theta, q) =>
      expect(theta).toBe(single.heterogeneity.theta[tasksSpec.pairs.pairs[2 * q]][tasksSpec.pairs.pairs[2 * q + 1]]),
    );
    const spec = pairAnglesSpec(system, machineColumnSlots(A, system.partition.rowsOf));
    const angles = runSync(heldTasksWork<SparsePairAngle>('pairs', spec, spec.pairs.length / 2, backend));
    expect(angles).toHaveLength(10);
    angles.forEach((angle, q) => expect(angle.theta).toBe(single.heterogeneity.theta[spec.pairs[2 * q]][spec.pairs[2 * q + 1]]));
  });
});
