/**
 * The six algorithms on CSR storage (gradient methods: one CSR pass per machine; projection
 * methods: the Cholesky factor of each machine's A_i A_i^T, refined where it is ill-conditioned)
 * against the same methods on dense storage: the same iterates and residuals to 1e-10 relative over
 * 100 iterations on every fixture and every real square matrix of the reference set; the same
 * iteration counts and empirical rates through the runner; threaded CSR runs equal to one thread
 * bit for bit; a CSR system holds no dense matrix; a machine with dependent rows is refused naming
 * it. The dense path is the reference (its own tests check it against NumPy and ml-matrix).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { ALGORITHM_IDS, algorithms, type AlgorithmId } from '../../../src/solvers/algorithms/registry.js';
import type { IterativeMethod, SpectralData } from '../../../src/solvers/algorithms/types.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { SingularMatrixError } from '../../../src/solvers/errors.js';
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
import { normProductBound } from '../../support/csrNorms.js';

/** | |A| |x| |: the scale of the rounding errors of A x. */
function absoluteProductNorm(a: CsrMatrix, x: Float64Array): number {
  let s2 = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let e = a.rowPtr[i]; e < a.rowPtr[i + 1]; e++) s += Math.abs(a.values[e] * x[a.colIdx[e]]);
    s2 += s * s;
  }
  return Math.sqrt(s2);
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

describe('the six algorithms on CSR storage agree with dense storage', () => {
  for (const { label, A, partition } of cases) {
    it(`${label}: every algorithm, 100 iterations`, () => {
      const csr = csrFromDense(A);
      const dense = buildDistributedSystem(createProblem({ A, partition }));
      const sparse = buildDistributedSystem(createProblem({ A: csr, partition }));
      expect(sparse.storage).toBe('csr');
      expect(Array.from(sparse.b)).toEqual(Array.from(dense.b));
      // Parameters for the intervals [L / 1e4, L] (L >= lambda_max(A^T A)) and [m / 1e4, m] (lambda_max(S) <= m):
      // stable on every case, whatever the true spectra.
      const L = normProductBound(csr);
      const spectral: SpectralData = { m: dense.m, lambdaMinS: dense.m / 1e4, lambdaMaxS: dense.m, mu: L / 1e4, L };
      for (const id of ALGORITHM_IDS) {
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
            worst = Math.max(worst, relativeDifference(onCsr.estimate, onDense.estimate));
            const residual = Math.sqrt(onDense.residualNormSquared());
            // Relative, down to the rounding floor of A x - b, which is relative to | |A| |x| |.
            expect(Math.abs(Math.sqrt(onCsr.residualNormSquared()) - residual), `${id}, iteration ${k}`).toBeLessThanOrEqual(
              1e-10 * residual + 1e-12 * absoluteProductNorm(csr, onDense.estimate),
            );
            const consensus = onDense.consensusDistance();
            if (consensus === null) expect(onCsr.consensusDistance()).toBeNull();
            else expect(Math.abs((onCsr.consensusDistance() as number) - consensus)).toBeLessThanOrEqual(1e-9 * (consensus + 1e-3));
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

const predictedIterations = (rho: number): number => (rho <= 0 ? 1 : Math.ceil(Math.log(1e-10) / Math.log(rho)));

describe('runs through the runner on CSR storage', () => {
  const fixtures = loadFixtures().filter((f) => ['example2-n40-p8-sigma0.1', 'gaussian-n24-m24-mu0', 'uneven-n27'].includes(f.name));

  for (const fixture of fixtures) {
    const runnable = ALGORITHM_IDS.filter((id) => predictedIterations(fixture.expected.rates[id]) < 20_000);
    it(`${fixture.name}: ${runnable.join(', ')} take the iterations and reach the empirical rates of dense storage`, () => {
      const rows = fixture.A as number[][];
      const A = fixtureMatrix(fixture);
      const partition = { assignment: fixture.partition.assignment };
      const dense = buildDistributedSystem(createProblem({ A, partition }));
      const sparse = buildDistributedSystem(createProblem({ A: csrFromDense(A), partition }));
      const spectral = spectralOf({ rows, assignment: fixture.partition.assignment, m: dense.m });
      for (const id of runnable) {
        const rho = fixture.expected.rates[id];
        const options = { tolerance: 1e-10, maxIterations: 2 * predictedIterations(rho) + 500 };
        const onDense = runAlgorithm(dense, id, spectral, options);
        const onCsr = runAlgorithm(sparse, id, spectral, options);
        expect(onCsr.status, id).toBe('converged');
        expect(onDense.status, id).toBe('converged');
        expect(Math.abs(onCsr.iterations - onDense.iterations), id).toBeLessThanOrEqual(1);
        expect(onCsr.relativeResidual, id).toBeLessThanOrEqual(1e-10);
        expect(relativeDifference(onCsr.solution, onDense.solution), id).toBeLessThanOrEqual(1e-9);
        expect(Math.abs((onCsr.empiricalRate as number) - (onDense.empiricalRate as number)), id).toBeLessThanOrEqual(1e-6);
        expect(Math.abs((onCsr.empiricalRate as number) - rho), id).toBeLessThanOrEqual(0.1 * (1 - rho));
      }
    });
  }
});

describe('a CSR system', () => {
  it('holds the rows in CSR and the factors of A_i A_i^T only: nothing p x c or n x n', () => {
    const A = parseMatrixMarket(matrixMarket('sherman5.mtx'));
    const csr = csrFromDense(A);
    const system = buildDistributedSystem(createProblem({ A: csr, partition: { machines: 8 } }));
    expect(system.A).toBe(csr);
    let storedEntries = 0;
    for (const machine of system.machines) {
      const nnz = machine.a.rowPtr[machine.p];
      for (const value of [machine.a.rowPtr, machine.a.colIdx, machine.a.values, machine.b, machine.cols, machine.rows])
        expect(value.length).toBeLessThanOrEqual(nnz + machine.c + machine.p + 1);
      // L_i: the fill of a sparse factor, far from the p x p of a dense one (or the p x c of Q_i).
      expect(machine.gram.symbolic.nnzL).toBeLessThan((machine.p * machine.p) / 4);
      expect(machine.c).toBeLessThan(system.n);
      storedEntries += nnz;
    }
    expect(storedEntries).toBe(csr.rowPtr[csr.rows]);
  });

  it('refines the solves of ill-conditioned machines only', () => {
    const refinements = (file: string): number[] =>
      buildDistributedSystem(
        createProblem({ A: csrFromDense(parseMatrixMarket(matrixMarket(file))), partition: { machines: 4 } }),
      ).machines.map((machine) => machine.gramRefinement);
    // gr_30_30: kappa(A) = 200, every machine well conditioned; fs1831: kappa(A) = 2e13.
    expect(refinements('gr_30_30.mtx')).toEqual([0, 0, 0, 0]);
    expect(Math.min(...refinements('fs1831.mtx'))).toBeGreaterThan(0);
  });

  it('refuses a machine whose rows are dependent, naming the machine and the row', () => {
    // Rows 1 and 2 are equal, on machine 1 together (A is singular; its support has room for both).
    const A = csrFromDense({ rows: 4, cols: 4, data: Float64Array.from([4, 1, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 0, 0, 1, 3]) });
    let thrown: unknown = null;
    try {
      buildDistributedSystem(createProblem({ A, partition: { assignment: [0, 1, 1, 0] } }));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SingularMatrixError);
    expect((thrown as SingularMatrixError).details).toMatchObject({ machine: 1 });
    expect([1, 2]).toContain((thrown as SingularMatrixError).details.row);
  });
});

describe('threaded CSR runs', () => {
  forceThreads(2);

  it('give exactly the iterates of one thread, every algorithm', () => {
    const A = parseMatrixMarket(matrixMarket('gr_30_30.mtx'));
    const system = buildDistributedSystem(createProblem({ A: csrFromDense(A), partition: { machines: 3 } }));
    expect(gradientRowChunks(system).ranges.length).toBeGreaterThan(2);
    const L = normProductBound(system.A);
    const spectral: SpectralData = { m: 3, lambdaMinS: 3e-3, lambdaMaxS: 3, mu: L / 1e3, L };
    const create = (id: AlgorithmId, threads: number): IterativeMethod => {
      setSolverThreads(threads);
      try {
        return algorithms[id].create(system, algorithms[id].optimal(spectral).parameters);
      } finally {
        setSolverThreads(2);
      }
    };
    for (const id of ALGORITHM_IDS) {
      const single = create(id, 1);
      const threaded = create(id, 2);
      try {
        expect(threaded.threads, id).toBe(2);
        for (let k = 0; k < 30; k++) {
          single.step();
          threaded.step();
          expect(threaded.residualNormSquared(), id).toBe(single.residualNormSquared());
          expect(threaded.consensusDistance(), id).toBe(single.consensusDistance());
        }
        expect(Array.from(threaded.estimate), id).toEqual(Array.from(single.estimate));
      } finally {
        single.dispose?.();
        threaded.dispose?.();
      }
    }
    expect(activeSolverWorkers()).toBe(0);
  });
});
