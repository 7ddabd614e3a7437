/**
 * A thread's runner of the machines' passes (see ../parallel/engine.ts): chunk i is machine i of the
 * fleet (a whole machine, or a range of its rows for the gradient pass), built on the thread's copy
 * of its storage. Each pass writes only chunk i's region of the output, from outputOffset[i], and
 * its scalars, from i * scalarsPerChunk. This module is what the engine's workers import (its
 * `createShard`), so it imports no algorithm.
 */
import type { Shard, ShardFactory, ThreadContext } from '../parallel/protocol.js';
import { CsrMachine } from './csrMachine.js';
import { DenseMachine, Scratch, type MachineOperator } from './machine.js';
import { passKernels } from './placement.js';
import type { MachineStorage } from './storage.js';

/** The passes, as engine phases. */
export const GRADIENT_PASS = 0;
export const CONSENSUS_START = 1;
export const CONSENSUS_PASS = 2;
export const CIMMINO_PASS = 3;
/** x_i(0) from a warm start: the projection of the input onto machine i's solution set. */
export const CONSENSUS_START_AT = 4;

/** What every thread of a fleet's run reads. */
export interface FleetSpec {
  readonly machines: readonly MachineStorage[];
  /** Where chunk i's output starts (length: chunks + 1). */
  readonly outputOffset: Int32Array;
  readonly scalarsPerChunk: number;
  /** APC's gamma (0 for the other passes). */
  readonly gamma: number;
}

export class MachineShard implements Shard {
  private readonly machines: readonly MachineOperator[];
  private readonly outputOffset: Int32Array;
  private readonly scalarsPerChunk: number;
  private readonly gamma: number;

  constructor(spec: FleetSpec, n: number, context: ThreadContext) {
    const kernels = passKernels(context);
    let largestPartialSupport = 0;
    let largestSupport = 0;
    let largestRows = 0;
    for (const machine of spec.machines) {
      if (!machine.full) largestPartialSupport = Math.max(largestPartialSupport, machine.c);
      largestSupport = Math.max(largestSupport, machine.c);
      largestRows = Math.max(largestRows, machine.p);
    }
    const scratch = new Scratch(largestPartialSupport, largestSupport, largestRows);
    this.machines = spec.machines.map((storage) =>
      storage.storage === 'csr' ? new CsrMachine(storage, n, scratch, kernels) : new DenseMachine(storage, n, scratch, kernels),
    );
    this.outputOffset = spec.outputOffset;
    this.scalarsPerChunk = spec.scalarsPerChunk;
    this.gamma = spec.gamma;
  }

  run(phase: number, chunk: number, input: Float64Array, output: Float64Array, scalars: Float64Array): void {
    const machine = this.machines[chunk];
    const offset = this.outputOffset[chunk];
    const at = chunk * this.scalarsPerChunk;
    switch (phase) {
      case GRADIENT_PASS:
        scalars[at] = machine.gradientTerm(input, output, offset);
        return;
      case CONSENSUS_START:
        machine.minimumNormSolution(output, offset);
        return;
      case CONSENSUS_PASS:
        machine.consensusStep(this.gamma, input, output, offset, scalars, at);
        return;
      case CIMMINO_PASS:
        scalars[at] = machine.cimminoTerm(input, output, offset);
        return;
      case CONSENSUS_START_AT:
        machine.projectOntoSolutions(input, output, offset);
        return;
      default:
        throw new Error(`Unknown machine pass ${phase}`);
    }
  }
}

/** The engine's workers build their shard with this (see ShardPlan.shardModule). */
export const createShard: ShardFactory = (spec, n, context) => new MachineShard(spec as FleetSpec, n, context);
