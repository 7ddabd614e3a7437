/**
 * The gradient methods (DGD, D-NAG, D-HBM) on CSR storage against the same methods on dense
 * storage: the same iterates and residuals to 1e-10 relative over 100 iterations on every fixture
 * and every real square matrix of the reference set; the same iteration counts and empirical rates
 * through the runner; threaded CSR runs equal to one thread bit for bit; and a CSR system holds no
 * dense matrix. The dense path is the reference (its own tests check it against NumPy and ml-matrix).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import type { AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import { algorithms } from '../../../src/solvers/algorithms/registry.js';
import type { IterativeMethod, SpectralData } from '../../../src/solvers/algorithms/types.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { UnsupportedMatrixError } from '../../../src/solvers/errors.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { parseMatrixMarket } from '../../../src/solvers/input/matrixMarket.js';
import { gradientRowChunks } from '../../../src/solvers/machines/gradientPass.js';
import type { DenseMatrix } from '../../../src/solvers/matrix.js';
import type { PartitionInput } from '../../../src/solvers/input/types.js';
import { activeSolverWorkers } from '../../../src/solvers/parallel/engine.js';
import { setSolverThreads } from '../../../src/solvers/parallel/threads.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { csrFromDense, type CsrMatrix } from '../../../src/solvers/sparse/csr.js';
import { fixtureMatrix, loadFixtures, matrixMarket } from '../../support/fixtures.js';
import { MATRICES_DIR } from '../../support/sharedData.js';
import { spectralOf, forceThreads } from '../parallel/support.js';

const GRADIENT_METHODS: readonly AlgorithmId[] = ['dgd', 'dnag', 'dhbm'];

/** |A|_1 |A|_inf >= |A|_2^2 = lambda_max(A^T A): step sizes from it keep every gradient method stable. */
function normProductBound(a: CsrMatrix): number {
  const columnSums = new Float64Array(a.cols);
  let rowMax = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) {
      s += Math.abs(a.values[e]);
      columnSums[a.colIdx[e]] += Math.abs(a.values[e]);
    }
    rowMax = Math.max(rowMax, s);
  }
  return rowMax * Math.max(...columnSums);
}

function relativeDifference(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let d = 0;
  let s = 0;
  for (let j = 0; j < y.length; j++) {
    d += (x[j] - y[j]) ** 2;
    s += y[j] ** 2;
  }
  return Math.sqrt(d / Math.max(s, Number.MIN_VALUE));
}

interface Case {
  readonly label: string;
  readonly A: DenseMatrix;
  readonly partition: PartitionInput;
}

const SKIPPED_MATRICES = new Set(['ash608.mtx', 'qc324.mtx']); // rectangular, complex: not systems
const cases: Case[] = [
  ...loadFixtures().map((f) => ({ label: `fixture ${f.name}`, A: fixtureMatrix(f), partition: { assignment: f.partition.assignment } })),
  ...readdirSync(MATRICES_DIR)
    .filter((file) => file.endsWith('.mtx') && !SKIPPED_MATRICES.has(file))
    .sort()
    .map((file) => ({ label: `${file}, 4 machines`, A: parseMatrixMarket(matrixMarket(file)), partition: { machines: 4 } })),
];

describe('gradient methods on CSR storage agree with dense storage', () => {
  for (const { label, A, partition } of cases) {
    it(`${label}: DGD, D-NAG, D-HBM, 100 iterations`, () => {
      const csr = csrFromDense(A);
      const dense = buildDistributedSystem(createProblem({ A, partition }));
      const sparse = buildDistributedSystem(createProblem({ A: csr, partition }));
      expect(sparse.storage).toBe('csr');
      expect(Array.from(sparse.b)).toEqual(Array.from(dense.b));
      // Parameters of each method for the interval [L / 1e4, L] with L >= lambda_max(A^T A): stable on every case.
      const L = normProductBound(csr);
      const spectral: SpectralData = { m: dense.m, lambdaMinS: 1, lambdaMaxS: 1, mu: L / 1e4, L };
      for (const id of GRADIENT_METHODS) {
        const parameters = algorithms[id].optimal(spectral).parameters;
        const onDense = algorithms[id].create(dense, parameters);
        const onCsr = algorithms[id].create(sparse, parameters);
        try {
          let worst = 0;
          for (let k = 0; k <= 100; k++) {
            if (k > 0) {
              onDense.step();
              onCsr.step();
            }
            worst = Math.max(worst, k === 0 ? 0 : relativeDifference(onCsr.estimate, onDense.estimate));
            const r2 = onDense.residualNormSquared();
            expect(Math.abs(onCsr.residualNormSquared() - r2), `${id}, iteration ${k}`).toBeLessThanOrEqual(2e-10 * r2);
          }
          expect(worst, id).toBeLessThanOrEqual(1e-10);
          // The iterates moved: the comparison is not of two zero vectors.
          expect(Math.max(...Array.from(onDense.estimate, Math.abs)), id).toBeGreaterThan(1e-3);
        } finally {
          onDense.dispose?.();
          onCsr.dispose?.();
        }
      }
    });
  }
});

describe('runs through the runner on CSR storage', () => {
  const fixtures = loadFixtures().filter((f) => ['example2-n40-p8-sigma0.1', 'gaussian-n24-m24-mu0', 'uneven-n27'].includes(f.name));

  for (const fixture of fixtures) {
    it(`${fixture.name}: the iteration counts and empirical rates of dense storage, at the fixture's rates`, () => {
      const rows = fixture.A as number[][];
      const A = fixtureMatrix(fixture);
      const partition = { assignment: fixture.partition.assignment };
      const dense = buildDistributedSystem(createProblem({ A, partition }));
      const sparse = buildDistributedSystem(createProblem({ A: csrFromDense(A), partition }));
      const spectral = spectralOf({ rows, assignment: fixture.partition.assignment, m: dense.m });
      for (const id of GRADIENT_METHODS) {
        const options = { tolerance: 1e-10, maxIterations: 40_000 };
        const onDense = runAlgorithm(dense, id, spectral, options);
        const onCsr = runAlgorithm(sparse, id, spectral, options);
        expect(onCsr.status, id).toBe('converged');
        expect(onDense.status, id).toBe('converged');
        expect(Math.abs(onCsr.iterations - onDense.iterations), id).toBeLessThanOrEqual(1);
        expect(onCsr.relativeResidual, id).toBeLessThanOrEqual(1e-10);
        expect(relativeDifference(onCsr.solution, onDense.solution), id).toBeLessThanOrEqual(1e-9);
        expect(Math.abs((onCsr.empiricalRate as number) - (onDense.empiricalRate as number)), id).toBeLessThanOrEqual(1e-6);
        expect(Math.abs((onCsr.empiricalRate as number) - fixture.expected.rates[id]), id).toBeLessThanOrEqual(
          0.1 * (1 - fixture.expected.rates[id]),
        );
      }
    });
  }
});

describe('a CSR system', () => {
  it('holds the rows in CSR only: no dense matrix, no basis, the support of each machine', () => {
    const A = parseMatrixMarket(matrixMarket('sherman5.mtx'));
    const csr = csrFromDense(A);
    const system = buildDistributedSystem(createProblem({ A: csr, partition: { machines: 8 } }));
    expect(system.A).toBe(csr);
    let storedEntries = 0;
    for (const machine of system.machines) {
      // Only typed arrays of O(p + nnz_i + c_i) entries: nothing p x c or n x n.
      for (const value of [machine.a.rowPtr, machine.a.colIdx, machine.a.values, machine.b, machine.cols, machine.rows])
        expect(value.length).toBeLessThanOrEqual(machine.a.rowPtr[machine.p] + machine.c + machine.p + 1);
      expect(machine.c).toBeLessThan(system.n);
      storedEntries += machine.a.rowPtr[machine.p];
    }
    expect(storedEntries).toBe(csr.rowPtr[csr.rows]);
  });

  it('refuses the projection methods with a typed error (no basis of R(A_i))', () => {
    const A = parseMatrixMarket(matrixMarket('bfwa62.mtx'));
    const system = buildDistributedSystem(createProblem({ A: csrFromDense(A), partition: { machines: 2 } }));
    for (const id of ['apc', 'mlm', 'cimmino'] as const)
      expect(() =>
        algorithms[id].create(system, algorithms[id].optimal({ m: 2, lambdaMinS: 0.5, lambdaMaxS: 1.5, mu: 1, L: 2 }).parameters),
      ).toThrow(UnsupportedMatrixError);
    expect(activeSolverWorkers()).toBe(0);
  });
});

describe('threaded CSR runs', () => {
  forceThreads(2);

  it('give exactly the iterates of one thread (chunks of rows, summed in chunk order)', () => {
    const A = parseMatrixMarket(matrixMarket('gr_30_30.mtx'));
    const system = buildDistributedSystem(createProblem({ A: csrFromDense(A), partition: { machines: 3 } }));
    expect(gradientRowChunks(system).ranges.length).toBeGreaterThan(2);
    const L = normProductBound(system.A);
    const spectral: SpectralData = { m: 3, lambdaMinS: 1, lambdaMaxS: 1, mu: L / 1e3, L };
    const create = (id: AlgorithmId, threads: number): IterativeMethod => {
      setSolverThreads(threads);
      try {
        return algorithms[id].create(system, algorithms[id].optimal(spectral).parameters);
      } finally {
        setSolverThreads(2);
      }
    };
    for (const id of GRADIENT_METHODS) {
      const single = create(id, 1);
      const threaded = create(id, 2);
      try {
        expect(threaded.threads).toBe(2);
        for (let k = 0; k < 30; k++) {
          single.step();
          threaded.step();
          expect(threaded.residualNormSquared()).toBe(single.residualNormSquared());
        }
        expect(Array.from(threaded.estimate)).toEqual(Array.from(single.estimate));
      } finally {
        single.dispose?.();
        threaded.dispose?.();
      }
    }
    expect(activeSolverWorkers()).toBe(0);
  });
});
