/**
 * A machine's operators on each storage (dense: Q_i and R; CSR: the Cholesky factor of A_i A_i^T)
 * against ml-matrix computations from its rows alone: A_i v, A_i^T w, P_i v = (I - A_i^+ A_i) v,
 * x_i(0) = A_i^+ b_i, A_i x - b_i, and the fused steps of the passes of the gradient methods (A_i^T (A_i x - b_i)), Cimmino
 * (A_i^+ (b_i - A_i x)) and APC (x_i + gamma P_i (xbar - x_i), with |A_i xbar - b_i|^2 and
 * |xbar - x_i|^2), on full and partial column supports, with the kernels of each backend.
 */
import { expect, it } from 'vitest';
import { Matrix, pseudoInverse } from 'ml-matrix';
import { buildDistributedSystem } from '../../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../../src/solvers/input/createProblem.js';
import { CsrMachine } from '../../../src/solvers/machines/csrMachine.js';
import { CIMMINO_PASS, CIMMINO_TERMS } from '../../../src/solvers/machines/cimminoPass.js';
import { CONSENSUS_PASS, CONSENSUS_STEP } from '../../../src/solvers/machines/consensusPass.js';
import { GRADIENT_PASS, GRADIENT_TERMS } from '../../../src/solvers/machines/gradientPass.js';
import { DenseMachine, Scratch } from '../../../src/solvers/machines/machine.js';
import type { Machine, MachinePass } from '../../../src/solvers/machines/machinePass.js';
import { passKernels } from '../../../src/solvers/machines/placement.js';
import { csrStorage, denseStorage } from '../../../src/solvers/machines/storage.js';
import { fromRows } from '../../../src/solvers/matrix.js';
import { partitionFromAssignment } from '../../../src/solvers/problem.js';
import { csrFromDense } from '../../../src/solvers/sparse/csr.js';
import { describeEachBackend } from '../../support/backends.js';
import { machineRows, prng, randomCase } from '../algorithms/support.js';

/** max_j |actual_j - expected_j| / max(1, max_j |expected_j|). */
function relativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let diff = 0;
  let scale = 1;
  for (let j = 0; j < expected.length; j++) {
    diff = Math.max(diff, Math.abs(actual[j] - expected[j]));
    scale = Math.max(scale, Math.abs(expected[j]));
  }
  return diff / scale;
}

const column = (values: ArrayLike<number>): Matrix => Matrix.columnVector(Array.from(values));

/** Runs phase `phase` of `pass` on one machine, its output region at `offset`; returns its scalars. */
function runPhase<Params>(
  pass: MachinePass<Params>,
  phase: number,
  machine: Machine,
  params: Params,
  input: Float64Array,
  output: Float64Array,
  offset: number,
): Float64Array {
  const scalars = new Float64Array(pass.scalarsPerMachine);
  const step = pass.steps[phase];
  if (machine.kind === 'dense') step.dense(machine, params, input, output, offset, scalars, 0);
  else step.csr(machine, params, input, output, offset, scalars, 0);
  return scalars;
}

interface OperatorUnderTest {
  readonly operator: Machine;
  readonly index: number;
  readonly p: number;
  readonly c: number;
  readonly full: boolean;
  readonly cols: Int32Array;
  readonly b: Float64Array;
}

describeEachBackend('machine operators', (backend) => {
  // Dense rows (full supports) and nearly block-orthogonal rows with exact zeros (partial supports).
  const cases: [string, number, number, number][] = [
    ['full supports', 60, 3, 1],
    ['partial supports', 70, 4, 0],
  ];
  for (const storage of ['dense', 'csr'] as const) {
    for (const [label, n, m, sigma] of cases) {
      it(`${storage} storage, ${label}: every operator equals its definition from A_i and b_i`, () => {
        const c = randomCase(n, m, 31 + n, sigma);
        const A = fromRows(c.rows);
        const problem = { n, b: Float64Array.from(c.rows, (row) => row.reduce((s, v) => s + v, 0)), xTrue: null };
        const partition = partitionFromAssignment(Int32Array.from(c.assignment), m);
        const scratch = new Scratch(n, n, n);
        const machines: OperatorUnderTest[] =
          storage === 'dense'
            ? buildDistributedSystem({ ...problem, A, partition }).machines.map((machine) => ({
                ...machine,
                operator: new DenseMachine(
                  denseStorage(machine, { rows: true, basis: true }),
                  n,
                  scratch,
                  passKernels({ backend, arenaKernels: null }),
                ),
              }))
            : buildDistributedSystem({ ...problem, A: csrFromDense(A), partition }).machines.map((machine) => ({
                ...machine,
                operator: new CsrMachine(csrStorage(machine), n, scratch, passKernels({ backend, arenaKernels: null })),
              }));
        const blocks = machineRows(c);
        const r = prng(5);
        const random = (length: number): Float64Array => Float64Array.from({ length }, () => r.normal());
        for (const machine of machines) {
          const { operator, p } = machine;
          expect(machine.full).toBe(sigma !== 0);
          const Ai = new Matrix(blocks[machine.index]);
          const bi = column(machine.b);
          const pinv = pseudoInverse(Ai);
          const projector = Matrix.eye(n).sub(pinv.mmul(Ai));

          const v = random(n);
          const av = new Float64Array(p + 2);
          operator.multiply(v, av, 2);
          expect(relativeError(av.subarray(2), Ai.mmul(column(v)).to1DArray())).toBeLessThan(1e-13);

          const w = random(p + 1);
          const y = random(n + 3);
          const yBefore = Float64Array.from(y);
          operator.multiplyTransposeAdd(w, 1, -0.5, y, 3);
          const atw = Ai.transpose()
            .mmul(column(w.subarray(1)))
            .to1DArray();
          expect(Array.from(y.subarray(0, 3))).toEqual(Array.from(yBefore.subarray(0, 3)));
          expect(
            relativeError(
              y.subarray(3),
              Array.from(atw, (value, j) => yBefore[3 + j] - 0.5 * value),
            ),
          ).toBeLessThan(1e-13);

          const projected = new Float64Array(n + 1);
          operator.project(v, projected, 1);
          expect(relativeError(projected.subarray(1), projector.mmul(column(v)).to1DArray())).toBeLessThan(1e-12);
          // P_i v lies in N(A_i).
          expect(relativeError(Ai.mmul(column(projected.subarray(1))).to1DArray(), new Array<number>(p).fill(0))).toBeLessThan(1e-12);

          const start = new Float64Array(2 * n).fill(7);
          operator.minimumNormSolution(start, n);
          expect(Array.from(start.subarray(0, n))).toEqual(new Array<number>(n).fill(7));
          expect(relativeError(start.subarray(n), pinv.mmul(bi).to1DArray())).toBeLessThan(1e-12);

          const x = random(n);
          const residual = Ai.mmul(column(x)).sub(bi);
          const term = new Float64Array(machine.c + 1).fill(NaN);
          const [residual2] = runPhase(GRADIENT_PASS, GRADIENT_TERMS, operator, {}, x, term, 1);
          const gradient = Ai.transpose().mmul(residual).to1DArray();
          expect(
            relativeError(
              term.subarray(1),
              Array.from(machine.cols, (j) => gradient[j]),
            ),
          ).toBeLessThan(1e-12);
          expect(residual2).toBeCloseTo(residual.norm() ** 2, 9);

          const cimmino = new Float64Array(machine.c).fill(NaN);
          const [cimminoResidual2] = runPhase(CIMMINO_PASS, CIMMINO_TERMS, operator, {}, x, cimmino, 0);
          // (ml-matrix's add, sub and mul work in place)
          const correction = pinv.mmul(residual.clone().mul(-1)).to1DArray();
          expect(
            relativeError(
              cimmino,
              Array.from(machine.cols, (j) => correction[j]),
            ),
          ).toBeLessThan(1e-11);
          expect(cimminoResidual2).toBeCloseTo(residual2, 9);

          // APC from x_i(0): x_i + gamma P_i (xbar - x_i), measured at xbar before the move.
          const gamma = 1.3;
          const local = Float64Array.from(start.subarray(n));
          const xi = column(local);
          const [consensusResidual2, distance2Measured] = runPhase(CONSENSUS_PASS, CONSENSUS_STEP, operator, { gamma }, x, local, 0);
          const distance2 = column(x).sub(xi).norm() ** 2;
          const expected = xi
            .clone()
            .add(projector.mmul(column(x).sub(xi)).mul(gamma))
            .to1DArray();
          expect(relativeError(local, expected)).toBeLessThan(1e-11);
          expect(consensusResidual2).toBeCloseTo(residual.norm() ** 2, 8);
          expect(distance2Measured).toBeCloseTo(distance2, 9);

          const residualOut = new Float64Array(p + 1).fill(NaN);
          expect(operator.residual(x, residualOut, 1)).toBeCloseTo(residual2, 9);
          expect(relativeError(residualOut.subarray(1), residual.to1DArray())).toBeLessThan(1e-12);
        }
      });
    }
  }

  it('a pass on a part the storage does not hold says so', () => {
    const c = randomCase(20, 2, 3, 1);
    const A = fromRows(c.rows);
    const partition = partitionFromAssignment(Int32Array.from(c.assignment), 2);
    const [machine] = buildDistributedSystem(createProblem({ A, partition })).machines;
    const kernels = passKernels({ backend, arenaKernels: null });
    const onlyRows = new DenseMachine(denseStorage(machine, { rows: true, basis: false }), 20, new Scratch(20, 20, 20), kernels);
    expect(() => onlyRows.project(new Float64Array(20), new Float64Array(20), 0)).toThrow(/no basis Q_i/);
    const onlyBasis = new DenseMachine(denseStorage(machine, { rows: false, basis: true }), 20, new Scratch(20, 20, 20), kernels);
    expect(() => runPhase(GRADIENT_PASS, GRADIENT_TERMS, onlyBasis, {}, new Float64Array(20), new Float64Array(20), 0)).toThrow(
      /no rows of A_i/,
    );
  });
});
