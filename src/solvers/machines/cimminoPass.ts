/**
 * Block Cimmino's pass over the whole system: at x, machine i computes r_i = b_i - A_i x (one pass
 * over A_i, and |r_i|^2) and its term A_i^+ r_i = A_i^T (A_i A_i^T)^{-1} r_i on its support (one
 * pass over Q_i with R, ./machine.ts, or over A_i with the Cholesky factor of A_i A_i^T,
 * ./csrMachine.ts); the taskmaster adds the terms in machine order.
 */
import type { SolverSystem } from './machineData.js';
import type { ShardEngine } from '../parallel/engine.js';
import { startFleet } from './fleet.js';
import { CIMMINO_PASS } from './machineShard.js';
import { csrStorage, denseStorage, type MachineStorage } from './storage.js';

/** Scalar of a machine: |b_i - A_i x|^2. */
const RESIDUAL2 = 0;

export class CimminoPass {
  /** The point the pass reads (shared with the threads; written only between passes). */
  readonly x: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly machines: readonly MachineStorage[];
  private readonly outputOffset: Int32Array;

  constructor(system: SolverSystem) {
    const { n } = system;
    this.machines =
      system.storage === 'csr'
        ? system.machines.map(csrStorage)
        : system.machines.map((machine) => denseStorage(machine, { rows: true, basis: true }));
    const fleet = startFleet({ n, machines: this.machines, outputLengths: this.machines.map((machine) => machine.c), scalarsPerChunk: 1 });
    this.engine = fleet.engine;
    this.outputOffset = fleet.outputOffset;
    this.threads = this.engine.threads;
    this.x = this.engine.input;
  }

  /** Runs the pass at the current x; returns |A x - b|^2 (summed in machine order). */
  evaluate(): number {
    this.engine.run(CIMMINO_PASS);
    return this.engine.scalarSum(RESIDUAL2);
  }

  /** direction = sum_i A_i^+ (b_i - A_i x) at the x of the last evaluate(), added in machine order. */
  direction(direction: Float64Array): void {
    const { machines, outputOffset } = this;
    const terms = this.engine.output;
    direction.fill(0);
    for (let i = 0; i < machines.length; i++) {
      const { c, cols, full } = machines[i];
      const offset = outputOffset[i];
      if (full) for (let t = 0; t < c; t++) direction[t] += terms[offset + t];
      else for (let t = 0; t < c; t++) direction[cols[t]] += terms[offset + t];
    }
  }

  dispose(): void {
    this.engine.dispose();
  }
}
