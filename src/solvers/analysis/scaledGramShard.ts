/**
 * The machines' factor solves of the scaled Gram operator S' (./kappaS.ts scaledGramOperator) on the solver threads
 * (../parallel/engine.ts): one chunk per machine, phase SOLVE_LT writing L_i^{-T} v_i over machine i's rows, phase
 * SOLVE_L writing L_i^{-1} t_i. The slots' sums between the two passes stay on the calling thread. Each machine's solve
 * is the one the calling thread would make, on the same factor with OpenBLAS held to one thread, so S' v, and
 * lambda_max(S) by Lanczos on it, are the same to the bit on any number of threads.
 *
 * Why: the partition advisor's exact pass runs lambda_max(S) after its likeliest best's pairs' angles. Run as one task
 * it was the pass' critical path, one core idle for ~18 s at n = 10^6 (docs/performance.md, "The advise job against
 * the analyze job on the Xeon"): its products are now shared by both.
 */
import type { BackendName } from '../linalg/backend.js';
import type { StoredGramFactor } from '../machines/placement.js';
import { startShardEngine, type Shard, type ShardFactory } from '../parallel/engine.js';
import { largestMachine, type MachineColumnSlots } from '../sparse/spectrumOfS.js';
import { solveMachineRows, type MachineSolvesPass } from './kappaS.js';
import { machineGramSolves, type MachineGramSolves } from './sparseAnalysis.js';

/** Phases: each machine's rows solved with L_i^{-T}, or with L_i^{-1}. */
const SOLVE_LT = 0;
const SOLVE_L = 1;

/** What every thread reads (the workers get it in shared memory). */
interface ScaledGramSpec {
  readonly rowsOfMachine: readonly Int32Array[];
  readonly factors: readonly StoredGramFactor[];
  /** The most rows of a machine (the thread's scratch). */
  readonly largest: number;
}

class ScaledGramShard implements Shard {
  readonly solves: MachineGramSolves;
  private readonly local: Float64Array;

  constructor(private readonly spec: ScaledGramSpec) {
    this.solves = machineGramSolves(spec.factors);
    this.local = new Float64Array(spec.largest);
  }

  run(phase: number, chunk: number, input: Float64Array, output: Float64Array): void {
    solveMachineRows(this.solves, chunk, this.spec.rowsOfMachine[chunk], phase === SOLVE_LT, input, output, this.local);
  }
}

/** The engine's workers build their shard with this (see ShardPlan.shardModule). */
export const createShard: ShardFactory = (spec) => new ScaledGramShard(spec as ScaledGramSpec);

/**
 * The machines' solves pass (./kappaS.ts MachineSolvesPass) on `threads` threads, the calling one included, for
 * `factors` (in shared memory already, as the caller's task pool had them, or copied there once). The caller holds
 * OpenBLAS to one thread meanwhile and calls dispose() when done: it ends the workers and lets go of this thread's
 * solvers. `threads` is how many it got (one when worker threads could not start).
 */
export function threadedMachineSolvesPass(
  slots: MachineColumnSlots,
  factors: readonly StoredGramFactor[],
  backend: BackendName,
  threads: number,
): { pass: MachineSolvesPass; threads: number; dispose(): void } {
  const n = slots.a.rows;
  let local: ScaledGramShard | null = null;
  const engine = startShardEngine<ScaledGramSpec>(
    {
      shardModule: import.meta.url,
      backend,
      arena: false,
      n,
      chunks: factors.length,
      outputLength: n,
      scalarsPerChunk: 0,
      // A machine's two triangular solves read its factor's nonzeros.
      chunkWork: factors.map((factor) => factor.values.length),
      spec: { rowsOfMachine: slots.rowsOfMachine, factors, largest: largestMachine(slots) },
      createShard: (spec) => (local = new ScaledGramShard(spec)),
      priced: false,
    },
    threads,
  );
  return {
    threads: engine.threads,
    pass: (transposed, from, to) => {
      engine.input.set(from);
      engine.run(transposed ? SOLVE_LT : SOLVE_L);
      to.set(engine.output);
    },
    dispose: () => {
      engine.dispose();
      local?.solves.release();
    },
  };
}
