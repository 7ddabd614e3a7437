/**
 * The partition refinement (src/solvers/partitioning/refinement.ts) on its own, on both backends: from a
 * poor start (round-robin) and from a good one (the multilevel partition), on CSR and dense storage,
 * with the size bounds loose and tight (then only swaps keep the sizes). Whatever it proposes, the
 * kappa(S) it returns is the exact one of its assignment (the analysis'), never above the start's, and
 * every machine stays within the bounds. The check against NumPy on the shuffled cases is in
 * ./advisor.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { partitionKappaSWork } from '../../../src/solvers/analysis/analyze.js';
import { runSync, type Work } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystemWork } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { selectedKernels } from '../../../src/solvers/linalg/kernels.js';
import type { CsrMatrix, DenseMatrix } from '../../../src/solvers/matrix.js';
import { machineSizeBounds, multilevelPartition } from '../../../src/solvers/partitioning/multilevel.js';
import { roundRobinAssignment } from '../../../src/solvers/partitioning/orderings.js';
import { DEFAULT_REFINEMENT_TRIES, MAX_REFINED_ROWS, refineAssignmentWork } from '../../../src/solvers/partitioning/refinement.js';
import { rowGraph } from '../../../src/solvers/partitioning/rowGraph.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { describeEachBackend } from '../../support/backends.js';
import { shuffledPoisson } from './cases.js';

function exactKappaS(A: DenseMatrix | CsrMatrix, assignment: Int32Array): Work<number> {
  return (function* () {
    const kernels = selectedKernels();
    const system = yield* buildDistributedSystemWork(createProblem({ A, partition: { assignment: Array.from(assignment) } }), kernels);
    return yield* partitionKappaSWork(kernels, system);
  })();
}

function randomDense(n: number, seed: number): DenseMatrix {
  const random = new SeededRandom(seed);
  const data = new Float64Array(n * n);
  for (let k = 0; k < n * n; k++) data[k] = random.nextNormal();
  for (let k = 0; k < n; k++) data[k * n + k] += 3;
  return { rows: n, cols: n, data };
}

function refine(A: DenseMatrix | CsrMatrix, m: number, start: Int32Array, imbalance: number) {
  const bounds = machineSizeBounds(A.rows, m, imbalance);
  const startKappaS = runSync(exactKappaS(A, start));
  let evaluations = 0;
  const refinement = runSync(
    refineAssignmentWork({
      kernels: selectedKernels(),
      a: A,
      m,
      start,
      startKappaS,
      bounds,
      evaluate: (assignment) => {
        evaluations++;
        return exactKappaS(A, assignment);
      },
    }),
  )!;
  return { refinement, startKappaS, bounds, evaluations };
}

function expectWithin(assignment: Int32Array, m: number, bounds: { lo: number; hi: number }): void {
  const sizes = new Array<number>(m).fill(0);
  for (const machine of assignment) sizes[machine]++;
  for (const size of sizes) {
    expect(size).toBeGreaterThanOrEqual(bounds.lo);
    expect(size).toBeLessThanOrEqual(bounds.hi);
  }
}

describeEachBackend('partition refinement', () => {
  const poisson = shuffledPoisson(12, 8).A;
  const dense = randomDense(60, 3);
  const starts: [string, DenseMatrix | CsrMatrix, number, Int32Array][] = [
    ['a shuffled Poisson matrix (CSR) from round-robin', poisson, 4, roundRobinAssignment(poisson.rows, 4)],
    [
      'a shuffled Poisson matrix (CSR) from its multilevel partition',
      poisson,
      4,
      multilevelPartition(rowGraph(selectedKernels(), poisson), 4, {}),
    ],
    ['a Gaussian matrix (dense) from round-robin', dense, 3, roundRobinAssignment(dense.rows, 3)],
  ];
  for (const [title, A, m, start] of starts) {
    for (const imbalance of [0.1, 0]) {
      it(`${title}, imbalance ${imbalance}: exact kappa(S), never above the start's, within the bounds`, () => {
        const { refinement, startKappaS, bounds, evaluations } = refine(A, m, start, imbalance);
        expect(refinement.kappaS).toBeLessThanOrEqual(startKappaS);
        expect(refinement.evaluations).toBe(evaluations);
        expect(evaluations).toBeLessThanOrEqual(DEFAULT_REFINEMENT_TRIES);
        expectWithin(refinement.assignment, m, bounds);
        // The reported kappa(S) is the analysis' of the returned assignment.
        expect(refinement.kappaS).toBe(runSync(exactKappaS(A, refinement.assignment)));
        if (refinement.accepted > 0) expect(refinement.kappaS).toBeLessThan(startKappaS);
        else expect(Array.from(refinement.assignment)).toEqual(Array.from(start));
      }, 60_000);
    }
  }

  it('lowers kappa(S) from a poor start (round-robin on a shuffled Poisson matrix)', () => {
    const { refinement, startKappaS } = refine(poisson, 4, roundRobinAssignment(poisson.rows, 4), 0.1);
    expect(refinement.accepted).toBeGreaterThan(0);
    expect(refinement.kappaS).toBeLessThan(startKappaS);
  }, 60_000);
});

describe('partition refinement limits', () => {
  it(`skips a matrix of more than ${MAX_REFINED_ROWS} rows without evaluating anything`, () => {
    const A = poisson2d(Math.ceil(Math.sqrt(MAX_REFINED_ROWS + 1)));
    const result = runSync(
      refineAssignmentWork({
        kernels: selectedKernels(),
        a: A,
        m: 4,
        start: roundRobinAssignment(A.rows, 4),
        startKappaS: 1e6,
        bounds: machineSizeBounds(A.rows, 4, 0.1),
        evaluate: () => {
          throw new Error('evaluated');
        },
      }),
    );
    expect(result).toBeNull();
  });
});
