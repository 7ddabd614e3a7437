/**
 * A run over several right-hand sides b_1 .. b_K of one system (PETSc's KSPMatSolve): the system's
 * setup (partition, factorizations) is shared, and the K columns iterate together as one block
 * (../algorithms/blockMethods.ts), each stopped by its own test. Each column is the runner of
 * ./runAlgorithm.ts (runWork: the same stopping rules, statuses, trace and diagnosis, to the word),
 * reading its column of the block method; the K runners advance in lockstep, and the block steps
 * once per round for every column still running. A column's runner that stops retires its column
 * (the block shrinks). The result is one RunResult per column, as K separate runs would return.
 *
 * Not resumable: snapshots (./snapshot.ts) are of single-vector runs only; a run over K > 1
 * columns that is interrupted starts again from its beginning.
 */
import { createBlockMethod, type BlockIterativeMethod } from '../algorithms/blockMethods.js';
import type { AlgorithmId } from '../algorithms/registry.js';
import type { IterativeMethod, Parameters, SpectralData } from '../algorithms/types.js';
import { CancelledError, DimensionMismatchError } from '../errors.js';
import type { Work, WorkProgress } from '../cooperative.js';
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { runWork } from './runAlgorithm.js';
import { SnapshotMismatchError } from './snapshot.js';
import type { RunOptions, RunResult } from './types.js';

/** The block method and the iteration it is at, shared by the columns' views. */
class SharedBlock {
  iteration = 0;
  private readonly initial: { residual2: number; consensus: number | null; estimate: Float64Array }[];
  private readonly buffers: Float64Array[];
  private live: number;

  constructor(
    readonly method: BlockIterativeMethod,
    n: number,
  ) {
    const K = method.columns;
    this.live = K;
    this.buffers = Array.from({ length: K }, () => new Float64Array(n));
    // The first round's first runner steps the block before the others have measured iteration 0.
    this.initial = Array.from({ length: K }, (_, j) => {
      const estimate = new Float64Array(n);
      method.estimate(j, estimate);
      return { residual2: method.residualNormSquared(j), consensus: method.consensusDistance(j), estimate };
    });
  }

  advanceTo(iteration: number): void {
    while (this.iteration < iteration) {
      this.method.step();
      this.iteration++;
    }
  }

  residual2(column: number, iteration: number): number {
    return iteration === 0 ? this.initial[column].residual2 : this.method.residualNormSquared(column);
  }

  consensus(column: number, iteration: number): number | null {
    return iteration === 0 ? this.initial[column].consensus : this.method.consensusDistance(column);
  }

  estimate(column: number, iteration: number): Float64Array {
    if (iteration === 0) return this.initial[column].estimate;
    this.method.estimate(column, this.buffers[column]);
    return this.buffers[column];
  }

  retire(column: number): void {
    this.method.retire(column);
    if (--this.live === 0) this.method.dispose();
  }
}

/** Column j of the block as the runner sees a method. */
class ColumnView implements IterativeMethod {
  private iteration = 0;
  private retired = false;

  constructor(
    private readonly block: SharedBlock,
    private readonly column: number,
  ) {}

  get estimate(): Float64Array {
    return this.block.estimate(this.column, this.iteration);
  }

  get threads(): number {
    return this.block.method.threads;
  }

  residualNormSquared(): number {
    return this.block.residual2(this.column, this.iteration);
  }

  consensusDistance(): number | null {
    return this.block.consensus(this.column, this.iteration);
  }

  step(): void {
    this.iteration++;
    this.block.advanceTo(this.iteration);
  }

  state(): Float64Array[] {
    throw new SnapshotMismatchError('runs over several right-hand sides take no snapshots');
  }

  restore(): void {
    throw new SnapshotMismatchError('runs over several right-hand sides take no snapshots');
  }

  dispose(): void {
    if (this.retired) return;
    this.retired = true;
    this.block.retire(this.column);
  }
}

/**
 * Runs algorithm `id` on every right-hand side of `rhs` (each of length n) over the one system;
 * options as runAlgorithm's (initialGuess: x(0) of every column). x* is unknown for every column
 * (relativeError null, errorTolerance refused). Yields { phase: 'solve', algorithm, iteration,
 * relativeResidual: the largest over the columns still running } once per round.
 */
export function* multipleRhsWork(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: RunOptions,
  rhs: readonly Float64Array[],
): Work<RunResult[]> {
  rhs.forEach((b, j) => {
    if (b.length !== system.n) {
      throw new DimensionMismatchError(`Right-hand side ${j} has ${b.length} entries but the system has n = ${system.n} rows.`, {
        column: j,
        length: b.length,
        n: system.n,
      });
    }
  });
  let block: SharedBlock | null = null;
  const create =
    (column: number) =>
    (parameters: Parameters): IterativeMethod => {
      block ??= new SharedBlock(createBlockMethod(id, system, parameters, rhs, options.initialGuess), system.n);
      return new ColumnView(block, column);
    };
  const runs = rhs.map((b, j) => runWork(system, id, spectral, options, () => {}, { b, xTrue: null, create: create(j) }));
  const results: (RunResult | undefined)[] = rhs.map(() => undefined);
  try {
    let live = runs.map((_, j) => j);
    while (live.length > 0) {
      let worst = 0;
      let iteration = 0;
      for (const j of live) {
        const next = runs[j].next();
        if (next.done) results[j] = next.value;
        else if (next.value !== undefined) {
          iteration = next.value.iteration ?? iteration;
          worst = Math.max(worst, next.value.relativeResidual ?? 0);
        }
      }
      live = live.filter((j) => results[j] === undefined);
      if (live.length === 0) break;
      try {
        yield { phase: 'solve', algorithm: id, iteration, relativeResidual: worst } satisfies WorkProgress;
      } catch (thrown) {
        if (!(thrown instanceof CancelledError)) throw thrown;
        // Each column's runner ends 'cancelled' at the yield it waits at.
        for (const j of live) {
          const end = runs[j].throw(thrown);
          if (end.done) results[j] = end.value;
        }
        live = live.filter((j) => results[j] === undefined);
      }
    }
    return results as RunResult[];
  } finally {
    for (const [j, run] of runs.entries()) if (results[j] === undefined) run.return(undefined as never);
  }
}
