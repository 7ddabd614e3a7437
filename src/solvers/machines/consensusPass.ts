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
import type { SolverSystem } from './machineData.js';
import type { ShardEngine } from '../parallel/engine.js';
import { checkStateLengths } from '../runner/snapshot.js';
import { CsrConsensusPass } from './csrConsensusPass.js';
import { startFleet } from './fleet.js';
import { DISTANCE2, RESIDUAL2 } from './machine.js';
import { CONSENSUS_PASS, CONSENSUS_START, CONSENSUS_START_AT } from './machineShard.js';
import { csrStorage, denseStorage } from './storage.js';

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
export function createConsensusPass(system: SolverSystem, gamma: number): ConsensusMachines {
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

  constructor(system: SolverSystem, gamma: number) {
    const { n, m } = system;
    const storages =
      system.storage === 'csr'
        ? system.machines.map(csrStorage)
        : system.machines.map((machine) => denseStorage(machine, { rows: false, basis: true }));
    const fleet = startFleet({ n, machines: storages, outputLengths: storages.map(() => n), scalarsPerChunk: 2, gamma });
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
    this.engine.run(CONSENSUS_PASS);
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
