/**
 * The partition advisor on a tall CSR matrix (ash608, 608 x 188, m = 4): each candidate analysed sparsely
 * (src/solvers/analysis/tallSparseAnalysis.ts), no dense copy, with the kappa(S) and theta_H the dense
 * analysis of the same assignment gives (to 1e-8 relative; theta_H to 1e-7 rad), on each backend.
 */
import { expect, it } from 'vitest';
import { runSync } from '../../../src/solvers/cooperative.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { adviseWork } from '../../../src/solvers/partitioning/advisor.js';
import { csrToDense } from '../../../src/solvers/sparse/csr.js';
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
