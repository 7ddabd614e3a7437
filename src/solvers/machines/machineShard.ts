/**
 * A thread's runner of a fleet's pass (see ../parallel/engine.ts): chunk i is machine i of the
 * fleet (a whole machine, or a range of its rows for the gradient pass), built on the thread's copy
 * of its storage, and phase k runs step k of the fleet's pass (./machinePass.ts) on it. Each step
 * writes only chunk i's region of the output, from outputOffset[i], and its scalars, from
 * i * scalarsPerChunk. This module is what the engine's workers import (its `createShard`); it
 * imports no pass: a worker imports the fleet's pass module, which registers the pass.
 */
import type { Shard, ShardFactory, ThreadContext } from '../parallel/protocol.js';
import { CsrMachine } from './csrMachine.js';
import { DenseMachine, Scratch } from './machine.js';
import { registeredMachinePass, type Machine, type MachineStep, type PassParameters } from './machinePass.js';
import { passKernels, type PassKernels } from './placement.js';
import type { MachineStorage } from './storage.js';
import { STEP_RULE_CODE, stepRows, type StepLayout, type StepRule } from './stepRules.js';
import type { BlockStepKernel } from '../linalg/blockKernels.js';

/** What every thread of a fleet's run reads. */
export interface FleetSpec {
  /** The registered pass (./machinePass.ts) and the module that registers it. */
  readonly pass: string;
  readonly module: string;
  /** The pass's parameters. */
  readonly params: PassParameters;
  /** The system's n (the engine's input may be longer: ./fleet.ts FleetPlan.inputLength). */
  readonly n: number;
  /** The rule of the fleet's step phase (STEP_PHASE), or null when the taskmaster combines the outputs itself. */
  readonly step: StepRule | null;
  /** The machines' supports as the step reads them (./stepRules.ts stepLayout; in the run's arena when it has one), with `step`. */
  readonly stepLayout: StepLayout | null;
  readonly machines: readonly MachineStorage[];
  /** Where chunk i's output starts (length: chunks + 1). */
  readonly outputOffset: Int32Array;
  readonly scalarsPerChunk: number;
}

/**
 * Phase bit of the step phase: chunk index k is then the k-th of as many ranges of columns as there are chunks,
 * on which the chunks' terms are summed and the fleet's rule applied (./stepRules.ts stepRows; on the native
 * backend the addon's step, the same operations): the taskmaster's sum and update, spread over the threads.
 */
export const STEP_PHASE = 1 << 16;

/** The step phase in one range of all n columns, run as chunk 0 (the others do nothing): a step the calling thread takes alone. */
export const WHOLE_STEP_PHASE = STEP_PHASE | 1;

export class MachineShard implements Shard {
  private readonly machines: readonly Machine[];
  private readonly steps: readonly MachineStep[];
  private readonly params: PassParameters;
  private readonly outputOffset: Int32Array;
  private readonly scalarsPerChunk: number;
  private readonly spec: FleetSpec;
  private readonly kernels: PassKernels;
  /**
   * The step kernel (the addon's, or WebAssembly's on the run's arena), else null: stepRows' loops; undefined until
   * this thread's first step phase (a fleet without a step never runs one).
   */
  private stepKernel: BlockStepKernel | null | undefined = undefined;
  /** stepRows' sums: as long as the longest range this thread has stepped. */
  private stepSums = new Float64Array(0);

  constructor(spec: FleetSpec, context: ThreadContext) {
    const { n } = spec;
    this.spec = spec;
    const pass = registeredMachinePass(spec.pass);
    if (pass === undefined) throw new Error(`No machine pass '${spec.pass}' is registered by ${spec.module}.`);
    const kernels = passKernels(context);
    this.kernels = kernels;
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
    this.steps = pass.steps;
    this.params = spec.params;
    this.outputOffset = spec.outputOffset;
    this.scalarsPerChunk = spec.scalarsPerChunk;
  }

  /** The step phase on columns [first, end). */
  private stepColumns(first: number, end: number, input: Float64Array, output: Float64Array): void {
    const { n, machines, outputOffset, step, stepLayout: layout } = this.spec;
    if (step === null || layout === null) throw new Error('This fleet has no step phase.');
    this.stepKernel ??= this.kernels.blockStep(n, 1, layout.strip, layout.cols, layout.colsOffset);
    if (this.stepKernel !== null) {
      this.stepKernel.run(STEP_RULE_CODE[step.rule], step.alpha, step.beta, 1, first, end, input, output, 0);
      return;
    }
    if (this.stepSums.length < end - first) this.stepSums = new Float64Array(end - first);
    stepRows(machines, outputOffset, 0, step, n, 1, 1, first, end, input, output, this.stepSums);
  }

  run(phase: number, chunk: number, input: Float64Array, output: Float64Array, scalars: Float64Array): void {
    if (phase === STEP_PHASE) {
      // Range `chunk` of as many as there are chunks.
      const { n } = this.spec;
      const chunks = this.machines.length;
      this.stepColumns(Math.floor((chunk * n) / chunks), Math.floor(((chunk + 1) * n) / chunks), input, output);
      return;
    }
    if (phase === WHOLE_STEP_PHASE) {
      if (chunk === 0) this.stepColumns(0, this.spec.n, input, output);
      return;
    }
    const step = this.steps[phase];
    if (step === undefined) throw new Error(`Unknown machine pass phase ${phase}`);
    const machine = this.machines[chunk];
    const offset = this.outputOffset[chunk];
    const at = chunk * this.scalarsPerChunk;
    if (machine.kind === 'dense') step.dense(machine, this.params, input, output, offset, scalars, at);
    else step.csr(machine, this.params, input, output, offset, scalars, at);
  }
}

/** The calling thread's shard: the fleet's caller has loaded (so registered) its pass. */
export function createLocalShard(spec: FleetSpec, _inputLength: number, context: ThreadContext): Shard {
  return new MachineShard(spec, context);
}

/** The engine's workers build their shard with this (see ShardPlan.shardModule), after importing the pass's module. */
export const createShard: ShardFactory = async (spec, _inputLength, context) => {
  const fleet = spec as FleetSpec;
  if (registeredMachinePass(fleet.pass) === undefined) await import(fleet.module);
  return new MachineShard(fleet, context);
};
