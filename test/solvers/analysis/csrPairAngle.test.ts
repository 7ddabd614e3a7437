/**
 * A small CSR pair whose smallest principal angles the sparse routes cannot separate (plat362's two halves: angles of
 * 2.0e-11 and 2.9e-11 rad, cos^2 = 1 to rounding) gets the dense path's computation on its rows: theta_H against the
 * long-double reference of scripts/csrPairAngleReference.py (test/fixtures/plat362PairAngle.json) and the dense
 * analysis' value, both backends. It stopped at 20,000 Lanczos products with theta_H = 1.5e-5 +- 1.5e-5, unconverged.
 * Pairs the sparse routes converge on keep their methods and values.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../../src/solvers/analysis/analyze.js';
import { SMALL_PAIR_PRODUCTS } from '../../../src/solvers/analysis/csrPairAngle.js';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { csrToDense } from '../../../src/solvers/sparse/csr.js';
import { describeEachBackend } from '../../support/backends.js';
import { readMatrixCsr } from '../sparse/support.js';

const reference = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'plat362PairAngle.json'), 'utf8')) as {
  thetaMinLongDouble: number;
  rowsA: [number, number];
};

describeEachBackend('a small CSR pair with angles near 0 that the sparse routes cannot separate', () => {
  const A = readMatrixCsr('plat362.mtx');

  it("plat362 on 2 machines: theta_H through the pair's dense bases, to a few eps of the long-double reference and of the dense analysis", () => {
    const analysis = analyze(buildDistributedSystem(createProblem({ A, partition: { machines: 2 } })));
    expect(reference.rowsA).toEqual([0, 181]);
    const { thetaH, estimates } = analysis.heterogeneity;
    expect(Math.abs(thetaH - reference.thetaMinLongDouble)).toBeLessThan(1e-15);
    expect(estimates!.thetaH).toMatchObject({ method: 'dense-bases', converged: true });
    // The sparse routes gave up after SMALL_PAIR_PRODUCTS products, not the 20,000 of their own cap.
    expect(estimates!.thetaH.iterations).toBeLessThanOrEqual(SMALL_PAIR_PRODUCTS + 20);
    expect(estimates!.unconvergedPairs).toBe(0);
    const dense = analyze(buildDistributedSystem(createProblem({ A: csrToDense(A), partition: { machines: 2 } })));
    expect(Math.abs(thetaH - dense.heterogeneity.thetaH)).toBeLessThan(1e-15);
  });

  it("keeps the sparse routes where they converge: plat362 on 4 to 16 machines, the dense analysis within the sparse one's bound", () => {
    for (const machines of [4, 8, 16]) {
      const sparse = analyze(buildDistributedSystem(createProblem({ A, partition: { machines } })));
      const dense = analyze(buildDistributedSystem(createProblem({ A: csrToDense(A), partition: { machines } })));
      expect(sparse.heterogeneity.estimates!.thetaH.method, `m = ${machines}`).not.toBe('dense-bases');
      expect(sparse.heterogeneity.estimates!.unconvergedPairs).toBe(0);
      // The sparse bound leaves out the operators' rounding (../sparse/spectrumOfS.ts): a few eps of the angle beside it.
      const bound = sparse.heterogeneity.estimates!.thetaMaxAbsoluteErrorBound! + 1e-13;
      for (let i = 0; i < machines; i++)
        for (let j = 0; j < machines; j++)
          expect(
            Math.abs(sparse.heterogeneity.theta[i][j] - dense.heterogeneity.theta[i][j]),
            `m = ${machines}, (${i}, ${j})`,
          ).toBeLessThan(bound);
    }
  });
});

describe('the reference', () => {
  it('is below what the cosine route can resolve: cos^2 of the smallest angle is 1 to rounding', () => {
    expect(1 - Math.cos(reference.thetaMinLongDouble) ** 2).toBeLessThan(Number.EPSILON);
  });
});
