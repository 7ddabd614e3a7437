/**
 * Block Cimmino's pass over the whole system: at x, machine i computes r_i = b_i - A_i x (one pass
 * over A_i, and |r_i|^2) and its term A_i^+ r_i = A_i^T (A_i A_i^T)^{-1} r_i on its support (one
 * pass over Q_i with R, ./machine.ts, or over A_i with the Cholesky factor of A_i A_i^T,
 * ./csrMachine.ts); the taskmaster adds the terms in machine order.
 */
import type { DistributedSystem } from './machineData.js';
import type { ShardEngine } from '../parallel/engine.js';
import { accumulateRowCombination, multiplyRows } from '../linalg/rowKernels.js';
import type { CsrMachine } from './csrMachine.js';
import { startFleet } from './fleet.js';
import type { DenseMachine } from './machine.js';
import { registerMachinePass, type PassParameters, type StepOn } from './machinePass.js';
import { addOnSupport, csrStorage, denseStorage, type MachineStorage } from './storage.js';

/** Scalar of a machine: |b_i - A_i x|^2. */
const RESIDUAL2 = 0;

/** r_i = b_i - A_i x (one pass over A_i), y = R^{-T} r_i, the term A_i^+ r_i = Q_i y (one pass over Q_i). */
const denseCimminoTerm: StepOn<DenseMachine, PassParameters> = (machine, _params, x, term, offset, scalars, at) => {
  const { kernels, scratch } = machine;
  const { p, c } = machine.storage;
  const { a, aStart, aEnd, b } = machine.rows();
  const { q, qStart, qEnd, r, qtx0 } = machine.basis();
  const residual = scratch.rowValues;
  const solved = scratch.rowValues2;
  const xs = machine.onSupport(x);
  multiplyRows(kernels.rows, a, p, c, aStart, aEnd, xs, residual, 0);
  let residual2 = 0;
  for (let k = 0; k < p; k++) {
    const s = b[k] - residual[k];
    residual[k] = s;
    residual2 += s * s;
  }
  if (machine.rankDeficient) {
    // A_i^+ (b_i - A_i x) = Q_i (qtx0 - Q_i^T x) (the pseudo-inverse: the projection onto the local least-squares solutions).
    multiplyRows(kernels.rows, q, p, c, qStart, qEnd, xs, solved, 0);
    for (let k = 0; k < p; k++) solved[k] = qtx0[k] - solved[k];
  } else {
    kernels.solveRTransposed(r, p, residual, solved);
  }
  term.fill(0, offset, offset + c);
  accumulateRowCombination(kernels.rows, q, p, c, qStart, qEnd, solved, 0, 1, term, offset);
  scalars[at + RESIDUAL2] = residual2;
};

/** r_i = A_i x - b_i with |r_i|^2, then the term -A_i^T G_i^{-1} r_i on the support. */
const csrCimminoTerm: StepOn<CsrMachine, PassParameters> = (machine, _params, x, term, offset, scalars, at) => {
  const { rowValues: r, rowValues2: y } = machine.scratch;
  // r = A_i x - b_i: the combination below takes its sign into the scale.
  const residual2 = machine.rowProducts(x, machine.storage.b, r);
  machine.solveGram(r, y);
  term.fill(0, offset, offset + machine.storage.c);
  machine.addTranspose(y, 0, -1, term, offset, false);
  scalars[at + RESIDUAL2] = residual2;
};

/** Block Cimmino's machine pass (also the CSR form of APC's, ./csrConsensusPass.ts): one phase, each machine's term and |b_i - A_i x|^2. */
export const CIMMINO_PASS = registerMachinePass<PassParameters>({
  name: 'cimmino',
  module: import.meta.url,
  scalarsPerMachine: 1,
  steps: [{ dense: denseCimminoTerm, csr: csrCimminoTerm }],
});
/** Its one phase. */
export const CIMMINO_TERMS = 0;

export class CimminoPass {
  /** The point the pass reads (shared with the threads; written only between passes). */
  readonly x: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly machines: readonly MachineStorage[];
  private readonly outputOffset: Int32Array;

  constructor(system: DistributedSystem) {
    const { n } = system;
    this.machines =
      system.storage === 'csr'
        ? system.machines.map(csrStorage)
        : system.machines.map((machine) => denseStorage(machine, { rows: true, basis: true }));
    const fleet = startFleet({
      pass: CIMMINO_PASS,
      params: {},
      n,
      machines: this.machines,
      outputLengths: this.machines.map((machine) => machine.c),
    });
    this.engine = fleet.engine;
    this.outputOffset = fleet.outputOffset;
    this.threads = this.engine.threads;
    this.x = this.engine.input;
  }

  /** Runs the pass at the current x; returns |A x - b|^2 (summed in machine order). */
  evaluate(): number {
    this.engine.run(CIMMINO_TERMS);
    return this.engine.scalarSum(RESIDUAL2);
  }

  /** direction = sum_i A_i^+ (b_i - A_i x) at the x of the last evaluate(), added in machine order. */
  direction(direction: Float64Array): void {
    const { machines, outputOffset } = this;
    const terms = this.engine.output;
    direction.fill(0);
    for (let i = 0; i < machines.length; i++) addOnSupport(machines[i], terms, outputOffset[i], direction);
  }

  dispose(): void {
    this.engine.dispose();
  }
}
