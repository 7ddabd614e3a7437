/**
 * APC's and MLM's machines on CSR storage without one n-vector per machine. The machines' estimates
 * are not independent state: with y(0) = 0 (a warm start: y(0) = x0, see start()) and
 *
 *   y(t + 1) = (1 - gamma) y(t) + gamma xbar(t),                                               (1)
 *
 * every machine's estimate is the projection of the one vector y(t) onto its solution set,
 *
 *   x_i(t) = y(t) + A_i^+ (b_i - A_i y(t)) =: y(t) + D_i(t),                                   (2)
 *
 * (by induction: x_i(0) = A_i^+ b_i, and APC's step x_i + gamma P_i (xbar - x_i) with P_i A_i^+ = 0
 * gives A_i^+ b_i + P_i ((1 - gamma) y + gamma xbar), which is (2) at y(t + 1)). D_i is affine in y,
 * so (1) carries over to it: D_i(t + 1) = (1 - gamma) D_i(t) + gamma A_i^+ (b_i - A_i xbar(t)), and
 * A_i^+ (b_i - A_i xbar) is block Cimmino's term at xbar (./cimminoPass.ts, the same CSR pass: two
 * passes over A_i and two triangular solves with the factor of A_i A_i^T). D_i lives on machine i's
 * column support C_i. So the state is y, xbar and the D_i: O(n + sum_i c_i) <= O(n + nnz) memory
 * where ./consensusPass.ts keeps m n, and an iteration costs one Cimmino pass plus O(n + sum_i c_i)
 * for the taskmaster instead of O(m n) for the machines. The same pass measures xbar: its scalar is
 * |A_i xbar - b_i|^2. The error of A_i x_i = b_i decays like (1 - gamma)^t under (1), as in the dense
 * pass.
 *
 * The consensus distance |xbar - x_i|^2 = sum_{j not in C_i} e_j^2 + sum_{j in C_i} (e_j - D_ij)^2
 * with e = xbar - y: the first sum is |e|^2 - sum_{j in C_i} e_j^2, both accumulated in double-double
 * (Knuth's two-sum) over the same rounded squares, so the difference is exact to ~1e-32 |e|^2 and does
 * not cancel when xbar = x_i while e is large (APC exact after one step on orthogonal machines).
 */
import type { DistributedSystem } from './machineData.js';
import type { ShardEngine } from '../parallel/engine.js';
import { checkStateLengths } from '../runner/snapshot.js';
import type { ConsensusMachines } from './consensusPass.js';
import { CIMMINO_PASS, CIMMINO_TERMS } from './cimminoPass.js';
import { startFleet } from './fleet.js';
import { addOnSupport, csrStorage, stripStart, type CsrMachineStorage } from './storage.js';

/** Scalar of a machine in the Cimmino pass: |A_i x - b_i|^2. */
const RESIDUAL2 = 0;

/**
 * One machine's share of the taskmaster's measure-and-advance (CsrConsensusPass.measureAndAdvance) over its
 * support, c columns (first + t when first >= 0, else cols[t]), with e = xbar - y before the step: into
 * sums, sum_{C_i} e_j^2 in double-double (high, low) and sum_{C_i} (e_j - D_ij)^2; then each D_ij = keep D_ij
 * + gamma term_ij, both from `base`. The calibration times it (../analysis/calibration.ts, consensusEntrySeconds).
 */
export function supportConsensusSums(
  xbar: Float64Array,
  y: Float64Array,
  offsets: Float64Array,
  terms: Float64Array,
  base: number,
  c: number,
  first: number,
  cols: Int32Array,
  keep: number,
  gamma: number,
  sums: Float64Array,
): void {
  let sum = 0;
  let low = 0;
  let close = 0;
  for (let t = 0; t < c; t++) {
    const j = first >= 0 ? first + t : cols[t];
    const e = xbar[j] - y[j];
    const square = e * e;
    const s = sum + square;
    const back = s - sum;
    low += sum - (s - back) + (square - back);
    sum = s;
    const d = e - offsets[base + t];
    close += d * d;
    offsets[base + t] = keep * offsets[base + t] + gamma * terms[base + t];
  }
  sums[0] = sum;
  sums[1] = low;
  sums[2] = close;
}

export class CsrConsensusPass implements ConsensusMachines {
  readonly xbar: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly machines: readonly CsrMachineStorage[];
  private readonly outputOffset: Int32Array;
  private readonly gamma: number;
  /** y of (1). */
  private readonly y: Float64Array;
  /** D_i of (2) on C_i, at [outputOffset[i], outputOffset[i + 1]) as the pass's terms. */
  private readonly offsets: Float64Array;
  /** Per machine, the consensus distance's sums over C_i (measureAndAdvance). */
  private readonly inside: Float64Array;
  private readonly insideLow: Float64Array;
  private readonly near: Float64Array;
  /** One machine's three sums (supportConsensusSums). */
  private readonly sums = new Float64Array(3);
  private residual2 = 0;
  private distance2 = 0;

  constructor(system: DistributedSystem, gamma: number) {
    if (system.storage !== 'csr') throw new Error('CsrConsensusPass: the system is not on CSR storage');
    const { n } = system;
    this.machines = system.machines.map(csrStorage);
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
    this.xbar = this.engine.input;
    this.gamma = gamma;
    this.y = new Float64Array(n);
    this.offsets = new Float64Array(this.outputOffset[this.machines.length]);
    const m = this.machines.length;
    this.inside = new Float64Array(m);
    this.insideLow = new Float64Array(m);
    this.near = new Float64Array(m);
  }

  /**
   * x_i(0) = A_i^+ b_i: y(0) = 0 and D_i(0) the Cimmino terms at 0; from a guess x0, (2) holds with
   * y(0) = x0: x_i(0) = x0 + A_i^+ (b_i - A_i x0), the projection of x0 (and the induction goes on as from 0).
   */
  start(initialGuess?: Float64Array): void {
    if (initialGuess === undefined) this.y.fill(0);
    else this.y.set(initialGuess);
    this.xbar.set(this.y);
    this.engine.run(CIMMINO_TERMS);
    this.offsets.set(this.engine.output);
  }

  /** Measures xbar (residual, consensus distance to every x_i), then advances y and every D_i by (1). */
  run(): void {
    const { engine } = this;
    engine.run(CIMMINO_TERMS);
    this.residual2 = engine.scalarSum(RESIDUAL2);
    this.distance2 = this.measureAndAdvance(engine.output);
  }

  /** The machines' terms of the last pass (the engine's output), which run() advances the offsets by. */
  lastTerms(): Float64Array {
    return this.engine.output;
  }

  residualNormSquared(): number {
    return this.residual2;
  }

  /** max_i |xbar - x_i| before the last run()'s step; NaN when any is NaN. */
  consensusDistance(): number {
    return Math.sqrt(this.distance2);
  }

  /** sum = x_1 + ... + x_m = m y + D_1 + ... + D_m, the D_i added in machine order. */
  sumOfEstimates(sum: Float64Array): void {
    const { machines, outputOffset, offsets, y } = this;
    const m = machines.length;
    for (let j = 0; j < y.length; j++) sum[j] = m * y[j];
    for (let i = 0; i < m; i++) addOnSupport(machines[i], offsets, outputOffset[i], sum);
  }

  /** [y, the offsets D_i]: with xbar (the method's), every x_i of (2). */
  state(): Float64Array[] {
    return [this.y.slice(), this.offsets.slice()];
  }

  restore(state: readonly Float64Array[]): void {
    checkStateLengths("APC's machines", state, [this.y.length, this.offsets.length]);
    this.y.set(state[0]);
    this.offsets.set(state[1]);
  }

  /** Doubles this pass holds on the calling thread: y, the offsets D_i, the engine's xbar and terms, 3 per machine. O(n + nnz). */
  heldDoubles(): number {
    return this.y.length + this.offsets.length + this.engine.input.length + this.engine.output.length + 3 * this.inside.length;
  }

  dispose(): void {
    this.engine.dispose();
  }

  /**
   * max_i |xbar - x_i|^2 (see the module comment; NaN when any is NaN), then the step (1) on y and
   * every D_i (D_i += gamma (term_i - D_i) as (1 - gamma) D_i + gamma term_i). Each machine's support
   * is read once for its sums and its offsets' step, then n once for |e|^2 and y's step: the
   * taskmaster's share of an iteration at large n is these passes over memory.
   */
  measureAndAdvance(terms: Float64Array): number {
    const { machines, outputOffset, offsets, y, xbar, gamma, inside, insideLow, near, sums } = this;
    const keep = 1 - gamma;
    for (let i = 0; i < machines.length; i++) {
      const { c, cols, full } = machines[i];
      supportConsensusSums(xbar, y, offsets, terms, outputOffset[i], c, full ? 0 : stripStart(cols), cols, keep, gamma, sums);
      inside[i] = sums[0];
      insideLow[i] = sums[1];
      near[i] = sums[2];
    }
    // |e|^2 in double-double: (total, totalLow).
    let total = 0;
    let totalLow = 0;
    for (let j = 0; j < y.length; j++) {
      const e = xbar[j] - y[j];
      const square = e * e;
      const s = total + square;
      const back = s - total;
      totalLow += total - (s - back) + (square - back);
      total = s;
      y[j] = keep * y[j] + gamma * xbar[j];
    }
    let largest = 0;
    for (let i = 0; i < machines.length; i++) {
      const far = machines[i].full ? 0 : Math.max(0, total - inside[i] + (totalLow - insideLow[i]));
      const distance2 = far + near[i];
      if (Number.isNaN(distance2)) return Number.NaN;
      largest = Math.max(largest, distance2);
    }
    return largest;
  }
}
