/**
 * The partition advisor on a tall CSR matrix (ash608, 608 x 188, m = 4): each candidate analysed sparsely
 * (src/solvers/analysis/tallSparseAnalysis.ts), no dense copy, with the kappa(S) and theta_H the dense
 * analysis of the same assignment gives (to 1e-8 relative; theta_H to 1e-7 rad), on each backend.
 */
import { expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { adviseWork } from '../../../src/solvers/partitioning/advisor.js';
import { csrFromDense, csrToDense } from '../../../src/solvers/sparse/csr.js';
import { analyze, spectralDataOf } from '../../../src/solvers/analysis/analyze.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import { SeededRandom } from '../../../src/solvers/random.js';
import { describeEachBackend } from '../../support/backends.js';
import { readMatrixCsr } from '../sparse/support.js';

describeEachBackend('partition advisor on a tall CSR matrix', () => {
  it("every candidate's kappa(S) and theta_H equal the dense analysis' of the same assignment", () => {
    const csr = readMatrixCsr('ash608.mtx');
    const sparse = runSync(adviseWork(createProblem({ A: csr, partition: { machines: 4 } }), { seed: 1 }));
    const dense = runSync(adviseWork(createProblem({ A: csrToDense(csr), partition: { machines: 4 } }), { seed: 1 }));
    let compared = 0;
    let anglesCompared = 0;
    for (const candidate of sparse.candidates) {
      const twin = dense.candidates.find((other) => other.assignment.every((machine, k) => machine === candidate.assignment[k]));
      if (twin === undefined) continue;
      compared++;
      expect(Math.abs(candidate.kappaS! - twin.kappaS!) / twin.kappaS!, candidate.strategy).toBeLessThan(1e-8);
      // theta_H where both computed it (the given partition's and each one's best).
      if (candidate.thetaH !== null && twin.thetaH !== null) {
        anglesCompared++;
        expect(Math.abs(candidate.thetaH - twin.thetaH), candidate.strategy).toBeLessThan(1e-7);
      }
    }
    // At least the given, contiguous and round-robin assignments, which depend only on N and m.
    expect(compared).toBeGreaterThanOrEqual(3);
    expect(anglesCompared).toBeGreaterThanOrEqual(1);
  });
});

describeEachBackend('partition advisor on a regression whose machines each span R^n', () => {
  for (const storage of ['dense', 'CSR'] as const) {
    it(`keeps the given partition at kappa(S) = 1 and builds no other candidate's system (${storage})`, () => {
      // 240 x 8 Gaussian rows on 4 machines of 60: each machine's rows span R^8, so S = 4 I on the given partition.
      const rows = 240;
      const n = 8;
      const data = new SeededRandom(11).fillNormal(new Float64Array(rows * n));
      const dense = { rows, cols: n, data };
      const A = storage === 'dense' ? dense : csrFromDense(dense);
      const problem = createProblem({ A, partition: { machines: 4 } });
      const advice = runSync(adviseWork(problem, { seed: 1 }));
      const [given, ...others] = advice.candidates;
      expect(given.strategy).toBe('given');
      expect(Math.abs(given.kappaS! - 1)).toBeLessThan(1e-8);
      expect(advice.best).toBe('given');
      expect(advice.summary).toMatch(
        /^The given partition is the best found: kappa\(S\) = 1 \(to 1e-8\), the least any partition has, so APC's optimal rate is 0/,
      );
      // The given partition is evaluated first: at kappa(S) = 1 the row graph's candidates are not made at all.
      expect(advice.candidates.map((c) => c.strategy)).toEqual(['given', 'contiguous', 'round-robin']);
      expect(advice.summary).toContain('No partition of the row graph was made (RCM, graph partitioners): none could be lower.');
      // The contiguous candidate is the given partition (evaluated once); the others are not evaluated, and say why.
      for (const candidate of others.filter((c) => c.strategy !== 'contiguous')) {
        expect(candidate.kappaS, candidate.strategy).toBeNull();
        expect(candidate.notComputed).toContain("the given partition's kappa(S) is 1 (to 1e-8), the least any partition has");
        expect(candidate.timeToSolution).toBeNull();
      }
      expect(others.some((c) => c.strategy === 'round-robin')).toBe(true);
      // What was not computed would not have been lower: round-robin's kappa(S), analysed, is 1 too.
      const roundRobin = others.find((c) => c.strategy === 'round-robin')!;
      const system = buildDistributedSystem(
        createProblem({ A, partition: partitionFromAssignment(Int32Array.from(roundRobin.assignment), 4) }),
      );
      expect(Math.abs(analyze(system).conditioning.kappaS - 1)).toBeLessThan(1e-8);
      // What the summary promises: APC on the given partition converges in at most one iteration, here to x_W of noisy labels
      // (each machine's rows span R^8: its start, the machines' local least-squares points averaged, is x_W already).
      const noisy = Float64Array.from({ length: rows }, (_, k) => 1 + 0.1 * Math.sin(k));
      const givenSystem = buildDistributedSystem(createProblem({ A, rhs: noisy, partition: { machines: 4 } }));
      const run = runAlgorithm(givenSystem, 'apc', spectralDataOf(analyze(givenSystem)), { tolerance: 1e-10, maxIterations: 100 });
      expect(run.status, run.stopReason).toBe('converged');
      expect(run.target).toBe('block-weighted');
      expect(run.iterations).toBeLessThanOrEqual(1);
    });
  }
});
