/**
 * A run over several right-hand sides b_1 .. b_K of one system (PETSc's KSPMatSolve): the system's
 * setup (partition, factorizations) is shared, and the K columns iterate together as one block
 * (../algorithms/blockMethods.ts), each stopped by its own test. Each column is the runner of
 * ./runAlgorithm.ts (runWork: the same stopping rules, statuses, trace and diagnosis, to the word),
 * reading its column of the block method; the K runners advance in lockstep, and the block steps
 * once per round for every column still running. A column's runner that stops retires its column
 * (the block shrinks). The result is one RunResult per column, as K separate runs would return.
 *
 * Resumable as a single-vector run is (./snapshot.ts): between two rounds every running column's
 * runner waits at its yield and the block is at their iteration, so the block method's state, the
 * runners' snapshots and the ended columns' results are the whole run (BlockRunSnapshot). A run
 * given one rebuilds the block method, retires the ended columns, puts the state back and resumes
 * each running column's runner from its snapshot: it ends with the uninterrupted run's columns.
 */
import { createBlockMethod, type BlockIterativeMethod, type BlockState } from '../algorithms/blockMethods.js';
import type { AlgorithmId } from '../algorithms/registry.js';
import type { IterativeMethod, Parameters, SpectralData } from '../algorithms/types.js';
import { CancelledError, DimensionMismatchError } from '../errors.js';
import type { Work, WorkProgress } from '../cooperative.js';
import type { DistributedSystem } from '../distributed/distributedSystem.js';
import { checkRhsMagnitude } from '../input/magnitudes.js';
import { runWork } from './runAlgorithm.js';
import { checkStateLengths, SnapshotMismatchError, type BlockRunSnapshot, type RunSnapshot } from './snapshot.js';
import type { RunOptions, RunResult } from './types.js';

/** The block method and the iteration it is at, shared by the columns' views. */
class SharedBlock {
  iteration = 0;
  /** The iteration of the snapshot the block was restored to (0: none), where every column resumes. */
  restoredAt = 0;
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

  /**
   * Puts back the block of a snapshot taken at `iteration`: the columns it lacks retired, its blocks
   * (checked against this method's own lengths at that width) and measures set.
   */
  restore(state: BlockState, iteration: number): void {
    const K = this.method.columns;
    if (state.residual2.length !== K || state.consensus.length !== K) {
      throw new SnapshotMismatchError(`its block has measures of ${state.residual2.length} columns, this run ${K}`);
    }
    const active = new Set(state.active);
    for (let column = 0; column < K; column++) if (!active.has(column)) this.retire(column);
    checkStateLengths(
      'the block',
      state.blocks,
      this.method.state().blocks.map((block) => block.length),
    );
    this.method.restore(state);
    this.iteration = iteration;
    this.restoredAt = iteration;
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

  /** Nothing: the block's state is the run's (BlockRunSnapshot.block). */
  state(): Float64Array[] {
    return [];
  }

  /** The block, restored by the first column's runner, was at the snapshot's iteration: so is this column. */
  restore(state: readonly Float64Array[]): void {
    checkStateLengths('a column of the block', state, []);
    this.iteration = this.block.restoredAt;
  }

  dispose(): void {
    if (this.retired) return;
    this.retired = true;
    this.block.retire(this.column);
  }
}

export interface ResumableBlockRunOptions extends RunOptions {
  /**
   * A snapshot of this same run (same system, right-hand sides, algorithm, parameters and trace cap)
   * taken by an earlier startMultipleRhsRun: the run continues from it. One that does not fit throws
   * SnapshotMismatchError from the first next().
   */
  resumeFrom?: BlockRunSnapshot;
}

/** A run over several right-hand sides and a way to look at it between rounds. */
export interface ResumableBlockRun {
  readonly work: Work<RunResult[]>;
  /**
   * The run's state while its generator waits at a yield, between two rounds; null before the
   * first round is done and once the run has ended. The block's arrays are views, valid until the
   * run goes on (encode or copy them at once); the rest is copies, and the ended columns' results.
   */
  snapshot(): BlockRunSnapshot | null;
}

/**
 * Runs algorithm `id` on every right-hand side of `rhs` (each of length n) over the one system;
 * options as runAlgorithm's (initialGuess: x(0) of every column). x* is unknown for every column
 * (relativeError null, errorTolerance refused). Yields { phase: 'solve', algorithm, iteration,
 * relativeResidual: the largest over the columns still running } once per round.
 */
export function multipleRhsWork(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: RunOptions,
  rhs: readonly Float64Array[],
): Work<RunResult[]> {
  return startMultipleRhsRun(system, id, spectral, options, rhs).work;
}

/** multipleRhsWork, resumable: from `options.resumeFrom` when given, with snapshots between rounds. */
export function startMultipleRhsRun(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: ResumableBlockRunOptions,
  rhs: readonly Float64Array[],
): ResumableBlockRun {
  rhs.forEach((b, j) => checkRhsMagnitude(b, `rhs column ${j}`));
  // Set by the generator while it waits at its yield (the only time the block and the runners agree).
  let takeSnapshot: (() => BlockRunSnapshot) | null = null;
  const work = blockRunWork(system, id, spectral, options, rhs, (take) => {
    takeSnapshot = take;
  });
  return { work, snapshot: () => (takeSnapshot === null ? null : takeSnapshot()) };
}

/** Throws SnapshotMismatchError unless `snapshot` could be of a run of `id` over K columns. */
function checkBlockSnapshotFits(snapshot: BlockRunSnapshot, id: AlgorithmId, K: number): void {
  if (snapshot.algorithm !== id) throw new SnapshotMismatchError(`it is of a ${snapshot.algorithm} run, this run is ${id}`);
  if (snapshot.columns.length !== K) throw new SnapshotMismatchError(`it has ${snapshot.columns.length} columns, this run ${K}`);
  const running = snapshot.columns.flatMap((column, j) => ('running' in column ? [j] : []));
  if (running.length === 0 || running.join() !== snapshot.block.active.join()) {
    throw new SnapshotMismatchError(`its block iterates columns [${snapshot.block.active.join(', ')}], its runs [${running.join(', ')}]`);
  }
  for (const column of snapshot.columns) {
    if ('running' in column && column.running.iteration !== snapshot.iteration) {
      throw new SnapshotMismatchError(`a column is at iteration ${column.running.iteration}, its block at ${snapshot.iteration}`);
    }
  }
}

function* blockRunWork(
  system: DistributedSystem,
  id: AlgorithmId,
  spectral: SpectralData | null,
  options: ResumableBlockRunOptions,
  rhs: readonly Float64Array[],
  snapshotsAt: (take: (() => BlockRunSnapshot) | null) => void,
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
  const { resumeFrom, ...runOptions } = options;
  if (resumeFrom) checkBlockSnapshotFits(resumeFrom, id, rhs.length);
  let block: SharedBlock | null = null;
  const newBlock = (parameters: Parameters): SharedBlock => {
    const shared = new SharedBlock(createBlockMethod(id, system, parameters, rhs, options.initialGuess), system.n);
    if (resumeFrom) {
      try {
        shared.restore(resumeFrom.block, resumeFrom.iteration);
      } catch (error) {
        shared.method.dispose();
        throw error;
      }
    }
    return shared;
  };
  const create =
    (column: number) =>
    (parameters: Parameters): IterativeMethod => {
      block ??= newBlock(parameters);
      return new ColumnView(block, column);
    };
  const results: (RunResult | undefined)[] = rhs.map((_, j) => {
    const column = resumeFrom?.columns[j];
    return column !== undefined && 'ended' in column ? column.ended : undefined;
  });
  // Each running column's runner, and its snapshot while it waits at its yield.
  const takes: ((() => RunSnapshot) | null)[] = rhs.map(() => null);
  const runs = rhs.map((b, j) => {
    if (results[j] !== undefined) return null;
    const column = resumeFrom?.columns[j];
    const resume = column !== undefined && 'running' in column ? column.running : undefined;
    const at = (take: (() => RunSnapshot) | null): void => {
      takes[j] = take;
    };
    return runWork(system, id, spectral, { ...runOptions, resumeFrom: resume }, at, { b, xTrue: null, create: create(j) });
  });
  const snapshot = (): BlockRunSnapshot => {
    const columns = rhs.map((_, j) => {
      const ended = results[j];
      return ended === undefined ? { running: takes[j]!() } : { ended };
    });
    // Every running column's runner iterates the block's parameters, at its iteration.
    const { parameters } = columns.flatMap((column) => ('running' in column ? [column.running] : []))[0]!;
    return { algorithm: id, parameters, iteration: block!.iteration, block: block!.method.state(), columns };
  };
  try {
    let live = runs.flatMap((run, j) => (run === null ? [] : [j]));
    while (live.length > 0) {
      let worst = 0;
      let iteration = 0;
      for (const j of live) {
        const next = runs[j]!.next();
        if (next.done) results[j] = next.value;
        else if (next.value !== undefined) {
          iteration = next.value.iteration ?? iteration;
          worst = Math.max(worst, next.value.relativeResidual ?? 0);
        }
      }
      live = live.filter((j) => results[j] === undefined);
      if (live.length === 0) break;
      snapshotsAt(snapshot);
      try {
        yield { phase: 'solve', algorithm: id, iteration, relativeResidual: worst } satisfies WorkProgress;
      } catch (thrown) {
        if (!(thrown instanceof CancelledError)) throw thrown;
        // Each column's runner ends 'cancelled' at the yield it waits at.
        for (const j of live) {
          const end = runs[j]!.throw(thrown);
          if (end.done) results[j] = end.value;
        }
        live = live.filter((j) => results[j] === undefined);
      } finally {
        snapshotsAt(null);
      }
    }
    return results as RunResult[];
  } finally {
    for (const [j, run] of runs.entries()) if (results[j] === undefined) run?.return(undefined as never);
  }
}
