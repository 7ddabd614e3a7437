/**
 * Several right-hand sides over one system: each column of a block run equals a separate run of
 * that right-hand side (its own job: its own problem, system and analysis) to 1e-10, for the six
 * algorithms on a dense and a CSR system; a converged column stops while the others go on; the block
 * passes run on the solver's threads, with the iterates of one thread to the bit.
 */
import { describe, expect, it } from 'vitest';
import { ALGORITHM_IDS } from '../../../src/solvers/algorithms/registry.js';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { useBackend } from '../../../src/solvers/linalg/backend.js';
import { fromRows, type CsrMatrix, type DenseMatrix } from '../../../src/solvers/matrix.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { csrToDense } from '../../../src/solvers/sparse/csr.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { multipleRhsWork } from '../../../src/solvers/runner/multipleRhs.js';
import { setParallelMinWork, setSolverThreads } from '../../../src/solvers/parallel/threads.js';

const K = 3;
const OPTIONS = { tolerance: 1e-9, maxIterations: 20_000 };

function rightHandSides(n: number, seed: number): Float64Array[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: K }, () => Float64Array.from({ length: n }, () => random.nextDouble() * 2 - 1));
}

function relativeDifference(x: Float64Array, y: Float64Array): number {
  let d = 0;
  let s = 0;
  for (let j = 0; j < x.length; j++) {
    d += (x[j] - y[j]) ** 2;
    s += y[j] ** 2;
  }
  return Math.sqrt(d / s);
}

/** A well-conditioned dense system: diagonally dominant with random off-diagonal entries. */
function denseMatrix(n: number): DenseMatrix {
  const random = new SeededRandom(7);
  const rows = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? n / 2 : random.nextDouble() - 0.5)));
  return fromRows(rows);
}

const cases: { name: string; A: DenseMatrix | CsrMatrix; m: number }[] = [
  { name: 'dense n = 24', A: denseMatrix(24), m: 4 },
  // Banded: each machine's column support is a strip (gathered and scattered by the block passes).
  { name: 'dense banded, partial supports', A: csrToDense(poisson2d(6)), m: 3 },
  { name: 'CSR Poisson 6 x 6', A: poisson2d(6), m: 3 },
];

describe.each(['typescript', 'native'] as const)('several right-hand sides (%s backend)', (backend) => {
  for (const { name, A, m } of cases) {
    describe(name, () => {
      const n = A.rows;
      const rhs = rightHandSides(n, 11);
      const separate = rhs.map((b) => {
        const system = buildDistributedSystem(createProblem({ A, rhs: b, partition: { machines: m } }));
        return { system, spectral: spectralDataOf(analyze(system)) };
      });
      const shared = separate[0];

      it.each([...ALGORITHM_IDS])('%s: each column equals its separate run to 1e-10', (id) => {
        useBackend(backend);
        try {
          const columns = runSync(multipleRhsWork(shared.system, id, shared.spectral, OPTIONS, rhs));
          expect(columns).toHaveLength(K);
          columns.forEach((column, j) => {
            const alone = runAlgorithm(separate[j].system, id, separate[j].spectral, OPTIONS);
            expect(column.status).toBe(alone.status);
            expect(column.status).toBe('converged');
            expect(column.iterations).toBe(alone.iterations);
            expect(relativeDifference(column.solution, alone.solution)).toBeLessThan(1e-10);
            expect(Math.abs(column.relativeResidual - alone.relativeResidual)).toBeLessThan(1e-10);
            expect(column.relativeError).toBeNull();
            expect(column.trace.iteration).toEqual(alone.trace.iteration);
            const traced = column.trace.relativeResidual;
            traced.forEach((r, t) => expect(Math.abs(r - alone.trace.relativeResidual[t])).toBeLessThan(1e-10 * Math.max(1, r)));
            // APC's and MLM's distance to consensus (measured by each machine on its thread in the block run).
            const distances = column.trace.consensusDistance;
            expect(distances === null).toBe(alone.trace.consensusDistance === null);
            distances?.forEach((d, t) => expect(Math.abs(d - alone.trace.consensusDistance![t])).toBeLessThan(1e-10 * Math.max(1, d)));
          });
        } finally {
          useBackend('auto');
        }
      });
    });
  }
});

describe('columns stop on their own tests', () => {
  it('a column that starts converged (b = 0) stops at iteration 0; the others run on', () => {
    const system = buildDistributedSystem(createProblem({ A: poisson2d(6), partition: { machines: 3 } }));
    const spectral = spectralDataOf(analyze(system));
    const rhs = [new Float64Array(36), ...rightHandSides(36, 3).slice(0, 2)];
    const columns = runSync(multipleRhsWork(system, 'apc', spectral, { ...OPTIONS, absoluteTolerance: 1e-30 }, rhs));
    expect(columns[0].iterations).toBe(0);
    expect(columns[0].status).toBe('converged');
    expect(columns[1].iterations).toBeGreaterThan(5);
    expect(columns[2].status).toBe('converged');
  });
});

describe.each(['typescript', 'native'] as const)('the block passes on the solver threads (%s backend)', (backend) => {
  // Threads forced on these small systems: every machine a chunk some thread takes.
  const run = (
    threads: number,
    system: ReturnType<typeof buildDistributedSystem>,
    id: (typeof ALGORITHM_IDS)[number],
    rhs: Float64Array[],
  ) => {
    useBackend(backend);
    setSolverThreads(threads);
    const previous = setParallelMinWork(0);
    try {
      const spectral = spectralDataOf(analyze(system));
      return runSync(multipleRhsWork(system, id, spectral, OPTIONS, rhs));
    } finally {
      setParallelMinWork(previous);
      setSolverThreads('auto');
      useBackend('auto');
    }
  };

  for (const { name, A, m } of cases) {
    it.each([...ALGORITHM_IDS])(`${name}, %s: two threads iterate as one, to the bit`, (id) => {
      const system = buildDistributedSystem(createProblem({ A, partition: { machines: m } }));
      const rhs = rightHandSides(A.rows, 5);
      const one = run(1, system, id, rhs);
      const two = run(2, system, id, rhs);
      two.forEach((column, j) => {
        expect(one[j].threads).toBe(1);
        expect(column.threads).toBe(2);
        expect(column.status).toBe('converged');
        expect(column.iterations).toBe(one[j].iterations);
        expect(column.solution).toEqual(one[j].solution);
        expect(column.trace.relativeResidual).toEqual(one[j].trace.relativeResidual);
      });
    });
  }
});
