/**
 * A fleet: the machines of one run (or chunks of their rows), each with the storage its passes
 * read, started on the shard engine (../parallel/engine.ts) where ./placement.ts puts them: the
 * run's backend, its threads, and a WebAssembly arena on the TypeScript backend for dense data and for
 * the gradient pass's CSR chunks. What the machines compute is the fleet's pass (./machinePass.ts),
 * with its parameters; the system-level passes (./gradientPass.ts, ./consensusPass.ts,
 * ./cimminoPass.ts) define theirs and combine the machines' outputs.
 */
import { startShardEngine, type ShardEngine } from '../parallel/engine.js';
import type { ArenaStaging } from '../linalg/wasmRowKernels.js';
import { fleetPlacement, passKernels, type PassKernels } from './placement.js';
import { createLocalShard, type FleetSpec } from './machineShard.js';
import { registeredMachinePass, type MachinePass, type PassParameters } from './machinePass.js';
import { entriesRead, type MachineStorage } from './storage.js';
import { stepLayout, type StepRule } from './stepRules.js';

/** ./machineShard.ts or .js, whichever extension this module has: what the engine's workers import. */
const SHARD_MODULE = new URL(import.meta.url.endsWith('.ts') ? './machineShard.ts' : './machineShard.js', import.meta.url).href;

export interface FleetPlan<Params extends PassParameters> {
  /** What every machine computes (a registered pass), and with which parameters. */
  readonly pass: MachinePass<Params>;
  readonly params: Params;
  /** Length of the vectors the passes read (the system's n). */
  readonly n: number;
  /** Length of the engine's input vector, when the pass keeps more than x there (default n; x is its first n entries). */
  readonly inputLength?: number;
  readonly machines: readonly MachineStorage[];
  /** Length of each chunk's output region, in chunk order. */
  readonly outputLengths: ArrayLike<number>;
  /** The rule of a step phase (./machineShard.ts STEP_PHASE) over the chunks' outputs (their terms, on their supports), if any. */
  readonly step?: StepRule;
  /** Where arrays of the machines were made for the run's arena before it is laid out (./placement.ts gradientChunkStaging), if anywhere. */
  readonly arenaStaging?: ArenaStaging | null;
}

export interface Fleet {
  readonly engine: ShardEngine;
  /** Where chunk i's output starts in engine.output (length chunks + 1). */
  readonly outputOffset: Int32Array;
  /** The calling thread's kernels, for the taskmaster's reductions over the output. */
  readonly kernels: PassKernels;
}

export function startFleet<Params extends PassParameters>(plan: FleetPlan<Params>): Fleet {
  const { pass, params, n, machines, outputLengths, inputLength = n, step = null } = plan;
  // The worker threads find the pass by its name in the registry its module fills.
  if (registeredMachinePass(pass.name) !== pass)
    throw new Error(`The machine pass '${pass.name}' is not registered (registerMachinePass).`);
  const scalarsPerChunk = pass.scalarsPerMachine;
  const outputOffset = new Int32Array(machines.length + 1);
  for (let i = 0; i < machines.length; i++) outputOffset[i + 1] = outputOffset[i] + outputLengths[i];
  const placement = fleetPlacement(machines);
  const spec: FleetSpec = {
    pass: pass.name,
    module: pass.module,
    params: { ...params },
    n,
    step,
    stepLayout: step === null ? null : stepLayout(machines),
    machines,
    outputOffset,
    scalarsPerChunk,
  };
  const engine = startShardEngine<FleetSpec>({
    shardModule: SHARD_MODULE,
    backend: placement.backend,
    arena: placement.arena,
    arenaStaging: plan.arenaStaging ?? null,
    n: inputLength,
    chunks: machines.length,
    outputLength: outputOffset[machines.length],
    scalarsPerChunk,
    chunkWork: machines.map(entriesRead),
    // A method's run: what its threads measure of their slowdown prices later runs on the same storage.
    slowdownOf: machines[0]?.storage,
    spec,
    createShard: createLocalShard,
  });
  return { engine, outputOffset, kernels: passKernels(engine.context) };
}
