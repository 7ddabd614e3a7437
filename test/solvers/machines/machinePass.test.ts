/**
 * A per-machine step defined and registered outside src/ (./dampedGradientPass.ts) runs on a fleet
 * of dense and of CSR machines, on one thread and on worker threads (which import the pass's module
 * by its URL), with each backend's kernels: the machines' terms add up to omega A^T (A x - b) and
 * their scalars to |A x - b|^2, computed here from the rows with ml-matrix. The registry refuses a
 * second pass under a taken name, and a fleet refuses an unregistered pass.
 */
import { describe, expect, it } from 'vitest';
import { Matrix } from 'ml-matrix';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { startFleet } from '../../../src/solvers/machines/fleet.js';
import { GRADIENT_PASS } from '../../../src/solvers/machines/gradientPass.js';
import { machinePassNames, registerMachinePass } from '../../../src/solvers/machines/machinePass.js';
import { csrStorage, denseStorage } from '../../../src/solvers/machines/storage.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import type { BackendName } from '../../../src/solvers/linalg/backend.js';
import { nativeBlas } from '../../../src/solvers/linalg/backend.js';
import { prng, randomCase } from '../algorithms/support.js';
import { forceThreads } from '../parallel/support.js';
import { relativeDifference } from '../sparse/support.js';
import { DAMPED_GRADIENT_PASS } from './dampedGradientPass.js';

const n = 40;
const m = 4;
const omega = 0.37;

/** omega sum_i A_i^T (A_i x - b_i) and sum_i |A_i x - b_i|^2 from a fleet of the damped pass over the system's machines. */
function fleetResult(storage: 'dense' | 'csr', x: Float64Array): { term: Float64Array; residual2: number; threads: number } {
  const c = randomCase(n, m, 11, 0);
  const A = fromRows(c.rows);
  const b = Float64Array.from(c.rows, (row, k) => row.reduce((s, v) => s + v, 0) + 0.1 * k);
  const partition = partitionFromAssignment(Int32Array.from(c.assignment), m);
  const problem = { n, b, xTrue: null, partition };
  const machines =
    storage === 'dense'
      ? buildDistributedSystem({ ...problem, A }).machines.map((machine) => denseStorage(machine, { rows: true, basis: false }))
      : buildDistributedSystem({ ...problem, A: csrFromDense(A) }).machines.map(csrStorage);
  const fleet = startFleet({ pass: DAMPED_GRADIENT_PASS, params: { omega }, n, machines, outputLengths: machines.map(() => n) });
  try {
    fleet.engine.input.set(x);
    fleet.engine.run(0);
    const term = new Float64Array(n);
    for (let i = 0; i < machines.length; i++) {
      for (let j = 0; j < n; j++) term[j] += fleet.engine.output[fleet.outputOffset[i] + j];
    }
    return { term, residual2: fleet.engine.scalarSum(0), threads: fleet.engine.threads };
  } finally {
    fleet.engine.dispose();
  }
}

function reference(x: Float64Array): { term: number[]; residual2: number } {
  const c = randomCase(n, m, 11, 0);
  const A = new Matrix(c.rows);
  const b = Matrix.columnVector(c.rows.map((row, k) => row.reduce((s, v) => s + v, 0) + 0.1 * k));
  const r = A.mmul(Matrix.columnVector(Array.from(x))).sub(b);
  return { term: A.transpose().mmul(r).mul(omega).to1DArray(), residual2: r.norm() ** 2 };
}

const backends: BackendName[] = nativeBlas() === null ? ['typescript'] : ['typescript', 'native'];

for (const backend of backends) {
  for (const threads of [1, 2]) {
    describe(`a pass registered by a test module, ${backend} backend, ${threads} thread(s)`, () => {
      forceThreads(threads, backend);
      for (const storage of ['dense', 'csr'] as const) {
        it(`${storage} machines: the terms add up to omega A^T (A x - b), the scalars to |A x - b|^2`, () => {
          const r = prng(3);
          const x = Float64Array.from({ length: n }, () => r.normal());
          const got = fleetResult(storage, x);
          const want = reference(x);
          expect(got.threads).toBe(threads);
          expect(relativeDifference(got.term, want.term)).toBeLessThan(1e-12);
          expect(got.residual2).toBeCloseTo(want.residual2, 8);
        });
      }
    });
  }
}

describe('the machine pass registry', () => {
  it('holds the passes of src/ and the test pass under their names, and refuses a second pass under a taken name', () => {
    expect(machinePassNames()).toEqual(expect.arrayContaining(['gradient', 'test:damped-gradient']));
    expect(registerMachinePass(GRADIENT_PASS)).toBe(GRADIENT_PASS);
    expect(() => registerMachinePass({ ...GRADIENT_PASS })).toThrow(/Another machine pass is registered as 'gradient'/);
  });

  it('a fleet refuses a pass that is not registered', () => {
    const unregistered = { ...DAMPED_GRADIENT_PASS, name: 'test:unregistered' };
    expect(() => startFleet({ pass: unregistered, params: { omega }, n: 1, machines: [], outputLengths: [] })).toThrow(/not registered/);
  });
});
