/**
 * Warm starts (options.initialGuess): a run from an initial guess. DGD, D-HBM, D-NAG and block Cimmino start
 * at x(0) = guess; APC and MLM start machine i at the projection of the guess onto its solution set,
 * x_i(0) = x0 + A_i^+ (b_i - A_i x0), checked against the formula with ml-matrix's pseudo-inverse, on
 * dense storage and on CSR (whose machines keep y(0) = x0 and offsets, ../../../src/solvers/machines/csrConsensusPass.ts).
 * A converged solution given back converges within 3 iterations, for all six, dense and CSR.
 */
import { describe, expect, it } from 'vitest';
import { Matrix, pseudoInverse } from 'ml-matrix';
import { ALGORITHM_IDS, algorithms } from '../../../src/solvers/algorithms/registry.js';
import { ApcMethod } from '../../../src/solvers/algorithms/apc.js';
import { buildDistributedSystem, type DistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { DimensionMismatchError } from '../../../src/solvers/errors.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { runAlgorithm } from '../../../src/solvers/runner/runAlgorithm.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import { wellConditionedSystem } from '../parallel/support.js';

const base = wellConditionedSystem(30, 4, 23);
const { A } = base.system;
const partition = { assignment: Array.from(base.system.partition.assignment) };
const rhs = Float64Array.from({ length: A.rows }, (_, i) => Math.sin(2 * i + 1));
const storages: [string, DistributedSystem][] = [
  ['dense', buildDistributedSystem(createProblem({ A, rhs, partition }))],
  ['CSR', buildDistributedSystem(createProblem({ A: csrFromDense(A), rhs, partition }))],
];
const guess = Float64Array.from({ length: A.rows }, (_, i) => Math.cos(i) - 0.5);

/** The mean over machines of x0 + A_i^+ (b_i - A_i x0), with dense pseudo-inverses. */
function expectedXbar0(x0: Float64Array): number[] {
  const n = A.rows;
  const rows = Array.from({ length: n }, (_, k) => Array.from(A.data.subarray(k * n, (k + 1) * n)));
  const sum = new Array<number>(n).fill(0);
  for (let i = 0; i < base.system.m; i++) {
    const mine = partition.assignment.flatMap((machine, k) => (machine === i ? [k] : []));
    const Ai = new Matrix(mine.map((k) => rows[k]));
    const r = Matrix.columnVector(mine.map((k) => rhs[k])).sub(Ai.mmul(Matrix.columnVector(Array.from(x0))));
    const xi = pseudoInverse(Ai).mmul(r).to1DArray();
    for (let j = 0; j < n; j++) sum[j] += x0[j] + xi[j];
  }
  return sum.map((v) => v / base.system.m);
}

describe('warm start', () => {
  for (const [storage, system] of storages) {
    it(`${storage}: APC and MLM start each machine at the projection of the guess (xbar(0) their mean)`, () => {
      const expected = expectedXbar0(guess);
      for (const [gamma, eta] of [
        [1.1, 1.3],
        [1, 1],
      ]) {
        const method = new ApcMethod(system, gamma, eta, guess);
        try {
          const xbar = Array.from(method.estimate);
          xbar.forEach((v, j) => expect(v).toBeCloseTo(expected[j], 10));
        } finally {
          method.dispose();
        }
      }
    });

    it(`${storage}: DGD, D-HBM, D-NAG and Cimmino start at x(0) = guess`, () => {
      for (const id of ['dgd', 'dhbm', 'dnag', 'cimmino'] as const) {
        const method = algorithms[id].create(system, algorithms[id].optimal(base.spectral).parameters, guess);
        try {
          expect(Array.from(method.estimate)).toEqual(Array.from(guess));
        } finally {
          method.dispose?.();
        }
      }
    });

    it(`${storage}: a converged solution given back converges within 3 iterations, for all six`, () => {
      for (const id of ALGORITHM_IDS) {
        const cold = runAlgorithm(system, id, base.spectral, { tolerance: 1e-10, maxIterations: 100_000 });
        expect(cold.status, `${id}: ${cold.stopReason}`).toBe('converged');
        expect(cold.iterations).toBeGreaterThan(3);
        const warm = runAlgorithm(system, id, base.spectral, { tolerance: 1e-10, maxIterations: 100_000, initialGuess: cold.solution });
        expect(warm.status, `${id}: ${warm.stopReason}`).toBe('converged');
        expect(warm.iterations, id).toBeLessThanOrEqual(3);
      }
    });
  }

  it('a guess of another length is refused', () => {
    const [, system] = storages[0];
    expect(() =>
      runAlgorithm(system, 'dgd', base.spectral, { tolerance: 1e-8, maxIterations: 10, initialGuess: new Float64Array(3) }),
    ).toThrow(DimensionMismatchError);
  });
});
