/**
 * The projection-consensus pass (APC, MLM) over the whole system: given the taskmaster's xbar, every
 * machine measures it (|A_i xbar - b_i|^2, |xbar - x_i|^2) and moves x_i <- x_i + gamma P_i (xbar - x_i).
 * createConsensusPass picks the form by storage:
 * - dense (ConsensusPass below): machine i keeps its own estimate x_i (region [i n, (i + 1) n) of the
 *   engine's output, so any thread can advance any machine), moved in one pass over its basis Q_i
 *   (./machine.ts). m n doubles, less than the bases' own n x p_i each;
 * - CSR (./csrConsensusPass.ts): the x_i are not kept. x_i(t) = y(t) + A_i^+ (b_i - A_i y(t)) for one
 *   shared y(t + 1) = (1 - gamma) y(t) + gamma xbar(t), so the state is y and each machine's offset on
 *   its column support: O(n + nnz) memory instead of m n, one Cimmino pass per iteration.
 * (A ConsensusPass on CSR storage also works, through the CSR rows and the Cholesky factor of
 * A_i A_i^T, ./csrMachine.ts: the tests compare the two forms.)
 */
import type { DistributedSystem } from './machineData.js';
import type { ShardEngine } from '../parallel/engine.js';
import { checkStateLengths } from '../runner/snapshot.js';
import { CsrConsensusPass } from './csrConsensusPass.js';
import { accumulateRowCombination, fusedRowPass } from '../linalg/rowKernels.js';
import type { CsrMachine } from './csrMachine.js';
import { startFleet } from './fleet.js';
import type { DenseMachine, MachineOperator } from './machine.js';
import { registerMachinePass, type StepOn } from './machinePass.js';
import { csrStorage, denseStorage } from './storage.js';

/** APC's step size (an object type, not an interface: so that it is a PassParameters, a record of numbers). */
type ConsensusParameters = { readonly gamma: number };

/** Offsets of a machine's two scalars. */
const RESIDUAL2 = 0;
const DISTANCE2 = 1;

/**
 * One pass over Q_i: |xbar - x_i|^2; x_i += gamma (xbar - x_i); row by row w_k = q_k . xbar - qtx0_k
 * and x_i -= gamma w_k q_k (= x_i + gamma P_i (xbar - x_i) overall, since Q_i^T x_i = qtx0);
 * |A_i xbar - b_i|^2 = |R^T w_i|^2. x_i = local[base .. base + n).
 */
const denseConsensusStep: StepOn<DenseMachine, ConsensusParameters> = (machine, { gamma }, xbar, local, base, scalars, at) => {
  const { n, kernels } = machine;
  const { p, c, full, cols } = machine.storage;
  const { q, qStart, qEnd, r, qtx0, localResidual2 } = machine.basis();
  const { supportX, supportUpdate } = machine.scratch;
  const w = machine.scratch.rowValues;
  let d2 = 0;
  for (let j = 0; j < n; j++) {
    const d = xbar[j] - local[base + j];
    d2 += d * d;
    local[base + j] += gamma * d;
  }
  if (full) {
    fusedRowPass(kernels.rows, q, p, c, qStart, qEnd, xbar, qtx0, w, 0, -gamma, local, base);
  } else {
    for (let t = 0; t < c; t++) {
      supportX[t] = xbar[cols[t]];
      supportUpdate[t] = 0;
    }
    fusedRowPass(kernels.rows, q, p, c, qStart, qEnd, supportX, qtx0, w, 0, gamma, supportUpdate, 0);
    for (let t = 0; t < c; t++) local[base + cols[t]] -= supportUpdate[t];
  }
  // A_i xbar - A_i A_i^+ b_i = R^T w_i (R upper triangular: row k of R is nonzero on [k, p) at most), orthogonal
  // to b_i - A_i A_i^+ b_i, the part of b_i outside the span of dependent rows (localResidual2, else 0).
  const residual = machine.scratch.rowValues2;
  residual.fill(0, 0, p);
  accumulateRowCombination(kernels.rows, r, p, p, machine.rStart, machine.rEnd, w, 0, 1, residual);
  let residual2 = localResidual2;
  for (let k = 0; k < p; k++) residual2 += residual[k] * residual[k];
  scalars[at + RESIDUAL2] = residual2;
  scalars[at + DISTANCE2] = d2;
};

/**
 * |xbar - x_i|^2; x_i += gamma (xbar - x_i); r_i = A_i xbar - b_i (= A_i (xbar - x_i)) with
 * |r_i|^2; x_i -= gamma A_i^T G_i^{-1} r_i, i.e. x_i + gamma P_i (xbar - x_i) overall.
 * The step moves x_i inside N(A_i), so A_i x_i = b_i throughout and A_i (xbar - x_i) is the
 * residual A_i xbar - b_i: computing it from b_i (as the dense step uses qtx0) gives
 * |A_i xbar - b_i|^2 for free and lets rounding drift of A_i x_i decay instead of accumulating.
 */
const csrConsensusStep: StepOn<CsrMachine, ConsensusParameters> = (machine, { gamma }, xbar, local, base, scalars, at) => {
  const { n } = machine;
  let d2 = 0;
  for (let j = 0; j < n; j++) {
    const d = xbar[j] - local[base + j];
    d2 += d * d;
    local[base + j] += gamma * d;
  }
  const { rowValues: r, rowValues2: y } = machine.scratch;
  const residual2 = machine.rowProducts(xbar, machine.storage.b, r);
  machine.solveGram(r, y);
  machine.addTranspose(y, 0, -gamma, local, base, true);
  scalars[at + RESIDUAL2] = residual2;
  scalars[at + DISTANCE2] = d2;
};

/** x_i(0) = A_i^+ b_i into machine i's region. */
const minimumNormStart: StepOn<MachineOperator, ConsensusParameters> = (machine, _params, _input, local, base) =>
  machine.minimumNormSolution(local, base);
/** x_i(0) from a warm start: the projection of the input x0 onto machine i's solutions. */
const projectedStart: StepOn<MachineOperator, ConsensusParameters> = (machine, _params, x0, local, base) =>
  machine.projectOntoSolutions(x0, local, base);

/** APC's machine pass on per-machine estimates (the phases below); parameter gamma. */
export const CONSENSUS_PASS = registerMachinePass<ConsensusParameters>({
  name: 'consensus',
  module: import.meta.url,
  scalarsPerMachine: 2,
  steps: [
    { dense: minimumNormStart, csr: minimumNormStart },
    { dense: projectedStart, csr: projectedStart },
    { dense: denseConsensusStep, csr: csrConsensusStep },
  ],
});
/** Its phases: x_i(0) = A_i^+ b_i; x_i(0) from a warm start; the step at xbar. */
export const CONSENSUS_START = 0;
export const CONSENSUS_START_AT = 1;
export const CONSENSUS_STEP = 2;

/** What APC and MLM ask of their machines (../algorithms/apc.ts). */
export interface ConsensusMachines {
  /** The taskmaster's xbar, which the pass reads (written only between passes). */
  readonly xbar: Float64Array;
  readonly threads: number;
  /**
   * Every machine's x_i(0): the minimum-norm solution of A_i x = b_i, or, given a guess x0, its
   * projection x0 + A_i^+ (b_i - A_i x0) onto {x : A_i x = b_i}. Leaves xbar unspecified.
   */
  start(initialGuess?: Float64Array): void;
  /** Measures xbar on every machine, then advances every x_i. */
  run(): void;
  /** |A xbar - b|^2 at the xbar of the last run(), summed in machine order. */
  residualNormSquared(): number;
  /** max_i |xbar - x_i| before the last run()'s step; NaN when any is NaN. */
  consensusDistance(): number;
  /** sum = x_1 + ... + x_m. */
  sumOfEstimates(sum: Float64Array): void;
  /** What the machines carry from one run() to the next (copies), for a snapshot of the method. */
  state(): Float64Array[];
  /** Puts back a state() of machines built on the same system; throws SnapshotMismatchError on other lengths. */
  restore(state: readonly Float64Array[]): void;
  dispose(): void;
}

/** The machines of APC / MLM in the form for the system's storage (see above). */
export function createConsensusPass(system: DistributedSystem, gamma: number): ConsensusMachines {
  return system.storage === 'csr' ? new CsrConsensusPass(system, gamma) : new ConsensusPass(system, gamma);
}

export class ConsensusPass implements ConsensusMachines {
  /** The taskmaster's xbar, which the pass reads (shared with the threads; written only between passes). */
  readonly xbar: Float64Array;
  readonly threads: number;
  private readonly engine: ShardEngine;
  private readonly n: number;
  private readonly m: number;
  /** x_i of machine i at [i n, (i + 1) n). */
  private readonly local: Float64Array;

  constructor(system: DistributedSystem, gamma: number) {
    const { n, m } = system;
    const storages =
      system.storage === 'csr'
        ? system.machines.map(csrStorage)
        : system.machines.map((machine) => denseStorage(machine, { rows: false, basis: true }));
    const fleet = startFleet({ pass: CONSENSUS_PASS, params: { gamma }, n, machines: storages, outputLengths: storages.map(() => n) });
    this.engine = fleet.engine;
    this.threads = this.engine.threads;
    this.xbar = this.engine.input;
    this.local = this.engine.output;
    this.n = n;
    this.m = m;
  }

  /** Every machine's x_i(0): the minimum-norm solution of A_i x = b_i, or the projection of the guess onto its solutions. */
  start(initialGuess?: Float64Array): void {
    if (initialGuess === undefined) {
      this.engine.run(CONSENSUS_START);
      return;
    }
    // The pass reads x0 where it reads xbar.
    this.xbar.set(initialGuess);
    this.engine.run(CONSENSUS_START_AT);
  }

  /** Measures xbar on every machine, then advances every x_i (one pass over each Q_i). */
  run(): void {
    this.engine.run(CONSENSUS_STEP);
  }

  /** |A xbar - b|^2 = sum_i |A_i xbar - b_i|^2 at the xbar of the last run(), summed in machine order. */
  residualNormSquared(): number {
    return this.engine.scalarSum(RESIDUAL2);
  }

  /** max_i |xbar - x_i| before the last run()'s step; NaN when any is NaN (a NaN, once seen, stays). */
  consensusDistance(): number {
    return Math.sqrt(this.engine.scalarMax(DISTANCE2));
  }

  /** sum = x_1 + ... + x_m, added in machine order. */
  sumOfEstimates(sum: Float64Array): void {
    const { m, n, local } = this;
    sum.set(local.subarray(0, n));
    for (let i = 1; i < m; i++) {
      const base = i * n;
      for (let j = 0; j < n; j++) sum[j] += local[base + j];
    }
  }

  /** [the m estimates x_i, machine after machine]. */
  state(): Float64Array[] {
    return [this.local.slice()];
  }

  restore(state: readonly Float64Array[]): void {
    checkStateLengths("APC's machines", state, [this.local.length]);
    this.local.set(state[0]);
  }

  dispose(): void {
    this.engine.dispose();
  }
}
