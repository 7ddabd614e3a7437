/**
 * The partition advisor on its check cases, on both backends: a shuffled
 * block-diagonal matrix (kappa(S) = 1, theta_H = pi/2, APC done in one iteration on the advised
 * partition), a shuffled 2-D Poisson matrix and a shuffled gr_30_30 (../shared/matrices), against
 * the NumPy values of scripts/partitionReference.py (./shuffledCases.json): the advised kappa(S)
 * within 1.5x of the natural partition's and at least 10x below the shuffled contiguous one's (or,
 * where the natural partition itself is less than 10x below it, at most the natural one's).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { runSync } from '../../../src/solvers/cooperative.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import type { CsrMatrix } from '../../../src/solvers/matrix.js';
import { adviseWork } from '../../../src/solvers/partitioning/advisor.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { poisson2d } from '../../../src/solvers/sparse/generators.js';
import { describeEachBackend } from '../../support/backends.js';
import { readMatrixCsr } from '../sparse/support.js';
import { shuffleCsr, shuffledBlockDiagonal } from './cases.js';

interface ShuffledCase {
  name: string;
  n: number;
  m: number;
  rowPerm: number[];
  colPerm: number[];
  kappaSNatural: number;
  kappaSShuffledContiguous: number;
}
const reference = JSON.parse(readFileSync(join(import.meta.dirname, 'shuffledCases.json'), 'utf8')) as { cases: ShuffledCase[] };

function naturalMatrix(name: string): CsrMatrix {
  if (name === 'poisson2d-30') return poisson2d(30);
  return readMatrixCsr(`${name}.mtx`);
}

describeEachBackend('partition advisor', () => {
  it('finds the blocks of a shuffled block-diagonal matrix: kappa(S) = 1, theta_H = pi/2, APC in one iteration', () => {
    const { A } = shuffledBlockDiagonal(12, 100);
    const problem = createProblem({ A, partition: { machines: 12 } });
    const advice = runSync(adviseWork(problem));
    const best = advice.candidates.find((c) => c.strategy === advice.best)!;
    expect(Math.abs(best.kappaS - 1)).toBeLessThan(1e-9);
    expect(best.thetaH).toBeCloseTo(Math.PI / 2, 12);
    expect(advice.candidates.find((c) => c.strategy === 'given')!.kappaS).toBeGreaterThan(100);
    expect(advice.givenRatio).toBeGreaterThan(100);

    const system = buildDistributedSystem(createProblem({ A, partition: { assignment: best.assignment } }));
    const run = runAlgorithm(system, 'apc', spectralDataOf(analyze(system)), { tolerance: 1e-8, maxIterations: 50 });
    expect(run.status).toBe('converged');
    expect(run.iterations).toBe(1);
  });

  for (const testCase of reference.cases) {
    it(`on a shuffled ${testCase.name}: within 1.5x of the natural partition's kappa(S), far below the shuffled contiguous one`, () => {
      const A = shuffleCsr(naturalMatrix(testCase.name), Int32Array.from(testCase.rowPerm), Int32Array.from(testCase.colPerm));
      const advice = runSync(adviseWork(createProblem({ A, partition: { machines: testCase.m } })));
      const given = advice.candidates[0];
      // The given partition is the shuffled contiguous one: NumPy's value.
      expect(given.kappaS / testCase.kappaSShuffledContiguous - 1).toBeLessThan(1e-6);
      const best = advice.candidates.find((c) => c.strategy === advice.best)!;
      expect(best.withinImbalance).toBe(true);
      expect(best.kappaS).toBeLessThanOrEqual(1.5 * testCase.kappaSNatural);
      // 10x below the shuffled contiguous partition, or as far below as the natural partition is when
      // that is less (gr_30_30: its natural strips are only 6.6x below the shuffled ones).
      const factor = Math.min(10, testCase.kappaSShuffledContiguous / testCase.kappaSNatural);
      expect(best.kappaS).toBeLessThanOrEqual(testCase.kappaSShuffledContiguous / factor);
    });
  }
});
