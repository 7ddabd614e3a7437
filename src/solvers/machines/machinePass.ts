/**
 * A machine pass, described once: what every machine of a fleet computes in each phase, given the
 * broadcast vector and the pass's parameters (a step per storage: ./machine.ts's dense machine, or
 * ./csrMachine.ts's CSR one), what it writes (its region of the engine's output, its scalars), and
 * its name. The taskmaster's side (how the regions and scalars are combined) lives beside it in the
 * pass's file (./gradientPass.ts, ./cimminoPass.ts, ./consensusPass.ts), which registers the pass
 * here when it is loaded. A fleet (./fleet.ts) is started on a registered pass with its parameters;
 * its worker threads import the pass's module (registering it in their own registry) before they
 * build their machines (./machineShard.ts). An algorithm with a new per-machine step therefore
 * writes it in its pass's file and registers it: the machines and the fleet do not change.
 */
import type { CsrMachine } from './csrMachine.js';
import type { DenseMachine } from './machine.js';

/** A machine of a fleet, on either storage. */
export type Machine = DenseMachine | CsrMachine;

/** Parameters of a pass: plain numbers, copied to every thread (e.g. APC's gamma). */
export type PassParameters = Readonly<Record<string, number>>;

/**
 * One machine's work in one phase: reads `input` (the vector the taskmaster broadcasts, length n)
 * and the machine's storage; writes only its own region of `output` (from `offset`, of the length
 * the fleet gave it) and its own scalars (from `at`, the pass's scalarsPerMachine of them).
 */
export type StepOn<M, Params> = (
  machine: M,
  params: Params,
  input: Float64Array,
  output: Float64Array,
  offset: number,
  scalars: Float64Array,
  at: number,
) => void;

/** A phase's step on each storage (the same function for both when it only calls ./machine.ts's MachineOperator). */
export interface MachineStep<Params = PassParameters> {
  readonly dense: StepOn<DenseMachine, Params>;
  readonly csr: StepOn<CsrMachine, Params>;
}

export interface MachinePass<Params = PassParameters> {
  /** The registry's key: unique among the passes. */
  readonly name: string;
  /** URL of the module that defines and registers the pass (its import.meta.url): what the worker threads import. */
  readonly module: string;
  /** Scalars each machine writes in a phase. */
  readonly scalarsPerMachine: number;
  /** The phases: engine phase k runs steps[k] on every machine. */
  readonly steps: readonly MachineStep<Params>[];
}

// Parameters are checked by the pass's own steps: the registry holds passes of any parameter type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry of passes whose parameter types differ
type AnyPass = MachinePass<any>;

const registry = new Map<string, AnyPass>();

/** Registers a pass under its name (again for the same object is a no-op); returns it. Throws when another pass has the name. */
export function registerMachinePass<Params>(pass: MachinePass<Params>): MachinePass<Params> {
  const known = registry.get(pass.name);
  if (known !== undefined && known !== pass) throw new Error(`Another machine pass is registered as '${pass.name}' (${known.module}).`);
  registry.set(pass.name, pass);
  return pass;
}

/** The pass registered under `name` in this thread, or undefined. */
export function registeredMachinePass(name: string): MachinePass<PassParameters> | undefined {
  return registry.get(name);
}

/** Names of the passes registered in this thread. */
export function machinePassNames(): string[] {
  return [...registry.keys()];
}
