/**
 * A run's state between two iterations, as plain data (typed arrays and numbers): what a run needs
 * to go on in another process as if it had never stopped. Taking one (ResumableRun.snapshot in
 * ./runAlgorithm.ts) copies the method's state (IterativeMethod.state: the iterates and whatever
 * the iteration carries), the runner's loop state and the trace recorder's contents; a run given
 * one (`resumeFrom`) rebuilds its method on the same system, puts the state back and continues
 * from the next iteration, so it ends with the iterations, residuals and trace of the run that was
 * never interrupted, bit for bit (the iteration itself is deterministic: ../parallel/engine.ts).
 * Runs over several right-hand sides snapshot their block and their columns (BlockRunSnapshot).
 * When and where snapshots are kept is the caller's business (the service: src/jobs/checkpoints.ts).
 */
import type { BlockState } from '../algorithms/blockMethods.js';
import type { AlgorithmId } from '../algorithms/registry.js';
import type { Parameters } from '../algorithms/types.js';
import type { RunMeasures } from './runMeasures.js';
import type { RunResult } from './types.js';

export type { RunMeasures } from './runMeasures.js';

/** A TraceRecorder's contents (./traceRecorder.ts): the slots in use and its counters. */
export interface TraceRecorderState {
  readonly cap: number;
  readonly iteration: Int32Array;
  readonly relativeResidual: Float64Array;
  readonly relativeError: Float64Array | null;
  readonly consensusDistance: Float64Array | null;
  readonly committed: number;
  readonly stride: number;
  readonly pendingIteration: number;
  readonly lastIteration: number;
}

export interface RunSnapshot {
  readonly algorithm: AlgorithmId;
  /** The parameters the run iterates with (the user's over the optimal ones): a resumed run must have the very same. */
  readonly parameters: Parameters;
  /** Iterations done. */
  readonly iteration: number;
  /** Wall time of the run so far, carried into the resumed run's wallTimeMs. */
  readonly elapsedMs: number;
  readonly measures: RunMeasures;
  readonly trace: TraceRecorderState;
  /** IterativeMethod.state(). */
  readonly method: readonly Float64Array[];
}

/**
 * A run over several right-hand sides (./multipleRhs.ts) between two rounds: the block method's
 * state once, and each column's runner as a RunSnapshot (its iteration, measures and trace; its
 * `method` empty, the block holds it) while it runs, its result once it has ended. A resumed run
 * restores the block, keeps the ended columns' results and goes on with the others.
 */
export interface BlockRunSnapshot {
  readonly algorithm: AlgorithmId;
  readonly parameters: Parameters;
  /** Iterations the block has done: every running column's. */
  readonly iteration: number;
  readonly block: BlockState;
  /** One per right-hand side, in order. */
  readonly columns: readonly BlockColumnSnapshot[];
}

export type BlockColumnSnapshot = { readonly running: RunSnapshot } | { readonly ended: RunResult };

/** Whether a snapshot is of a run over several right-hand sides. */
export function isBlockRunSnapshot(snapshot: RunSnapshot | BlockRunSnapshot): snapshot is BlockRunSnapshot {
  return 'columns' in snapshot;
}

/**
 * A snapshot that does not belong to this run (another algorithm, other parameters or trace cap,
 * state arrays of other lengths: a snapshot from another version of the code, or of another job).
 * Not a SolverError: nothing is wrong with the problem; the caller starts the run afresh.
 */
export class SnapshotMismatchError extends Error {
  constructor(reason: string) {
    super(`The snapshot does not fit this run: ${reason}.`);
    this.name = 'SnapshotMismatchError';
  }
}

/** Throws SnapshotMismatchError unless `state` has exactly the given array lengths. */
export function checkStateLengths(what: string, state: readonly Float64Array[], lengths: readonly number[]): void {
  if (state.length !== lengths.length || state.some((array, k) => array.length !== lengths[k])) {
    const got = state.map((array) => array.length).join(', ');
    throw new SnapshotMismatchError(`${what}'s state has arrays of lengths [${got}], this method's [${lengths.join(', ')}]`);
  }
}

/** Whether two parameter sets are the same numbers, to the bit. */
export function sameParameters(a: Parameters, b: Parameters): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && Object.is(a[key], b[key]));
}
