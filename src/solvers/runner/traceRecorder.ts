/**
 * Bounded per-iteration trace. Points are kept at iterations that are multiples of a stride (1 at
 * first); when the buffer is full the stride doubles and only the multiples of the new stride stay,
 * so memory is O(cap) for any run length while the points stay evenly spread over the run.
 * Iteration 0 (a multiple of every stride) is always kept; the latest iteration, when it is not on
 * the stride, is held in the first free slot until the next one replaces it, so the last iteration
 * of the run is always present. A run of at most cap points is kept whole.
 */
import { InvalidParameterError } from '../errors.js';
import { SnapshotMismatchError, type TraceRecorderState } from './snapshot.js';
import type { Trace } from './types.js';

/** Most points a trace keeps by default: 2048 points x 4 series x 8 bytes = 64 KiB per run. */
export const DEFAULT_TRACE_CAP = 2048;

export class TraceRecorder {
  private readonly iteration: Int32Array;
  private readonly relativeResidual: Float64Array;
  private readonly relativeError: Float64Array | null;
  private readonly consensusDistance: Float64Array | null;
  /** Points kept at multiples of the stride, in slots [0, committed). */
  private committed = 0;
  private stride = 1;
  /** The latest iteration when it is not a multiple of the stride (it lives in slot `committed`), else -1. */
  private pendingIteration = -1;
  private lastIteration = -1;

  constructor(
    readonly cap: number,
    withError: boolean,
    withConsensus: boolean,
  ) {
    if (!Number.isInteger(cap) || cap < 2) {
      throw new InvalidParameterError(`traceCap is ${cap}; it must be an integer >= 2 (the first and last iterations are always kept).`, {
        traceCap: cap,
      });
    }
    this.iteration = new Int32Array(cap);
    this.relativeResidual = new Float64Array(cap);
    this.relativeError = withError ? new Float64Array(cap) : null;
    this.consensusDistance = withConsensus ? new Float64Array(cap) : null;
  }

  /** Record iteration t (strictly increasing calls). */
  record(t: number, relativeResidual: number, relativeError: number | null, consensusDistance: number | null): void {
    this.lastIteration = t;
    this.pendingIteration = -1; // a pending point not on the stride is superseded by t
    // Full: thin out so that t (on the stride or as the pending last point) has a slot.
    while (this.committed >= this.cap) this.compact();
    const slot = this.committed;
    this.iteration[slot] = t;
    this.relativeResidual[slot] = relativeResidual;
    if (this.relativeError) this.relativeError[slot] = relativeError ?? Number.NaN;
    if (this.consensusDistance) this.consensusDistance[slot] = consensusDistance ?? Number.NaN;
    if (t % this.stride === 0) this.committed++;
    else this.pendingIteration = t;
  }

  /** Double the stride and keep only the committed points at multiples of it. */
  private compact(): void {
    this.stride *= 2;
    let kept = 0;
    for (let k = 0; k < this.committed; k++) {
      if (this.iteration[k] % this.stride !== 0) continue;
      this.iteration[kept] = this.iteration[k];
      this.relativeResidual[kept] = this.relativeResidual[k];
      if (this.relativeError) this.relativeError[kept] = this.relativeError[k];
      if (this.consensusDistance) this.consensusDistance[kept] = this.consensusDistance[k];
      kept++;
    }
    this.committed = kept;
  }

  /** Everything the recorder holds (copies of the slots in use), for a snapshot of the run (./snapshot.ts). */
  state(): TraceRecorderState {
    const used = this.committed + (this.pendingIteration >= 0 ? 1 : 0);
    return {
      cap: this.cap,
      iteration: this.iteration.slice(0, used),
      relativeResidual: this.relativeResidual.slice(0, used),
      relativeError: this.relativeError ? this.relativeError.slice(0, used) : null,
      consensusDistance: this.consensusDistance ? this.consensusDistance.slice(0, used) : null,
      committed: this.committed,
      stride: this.stride,
      pendingIteration: this.pendingIteration,
      lastIteration: this.lastIteration,
    };
  }

  /** Puts back a state() of a recorder with the same cap and series; later record() calls continue as they would have. */
  restore(state: TraceRecorderState): void {
    const used = state.committed + (state.pendingIteration >= 0 ? 1 : 0);
    const fits =
      state.cap === this.cap &&
      state.committed >= 0 &&
      used <= this.cap &&
      Number.isSafeInteger(state.stride) &&
      state.stride >= 1 &&
      state.iteration.length === used &&
      state.relativeResidual.length === used &&
      (state.relativeError === null) === (this.relativeError === null) &&
      (state.consensusDistance === null) === (this.consensusDistance === null) &&
      (state.relativeError?.length ?? used) === used &&
      (state.consensusDistance?.length ?? used) === used;
    if (!fits)
      throw new SnapshotMismatchError(
        `the trace snapshot (cap ${state.cap}, ${used} points) does not fit this run's trace (cap ${this.cap})`,
      );
    this.iteration.set(state.iteration);
    this.relativeResidual.set(state.relativeResidual);
    if (this.relativeError && state.relativeError) this.relativeError.set(state.relativeError);
    if (this.consensusDistance && state.consensusDistance) this.consensusDistance.set(state.consensusDistance);
    this.committed = state.committed;
    this.stride = state.stride;
    this.pendingIteration = state.pendingIteration;
    this.lastIteration = state.lastIteration;
  }

  /** The trace so far (copies), including the latest iteration. */
  finish(): Trace {
    const count = this.committed + (this.pendingIteration >= 0 ? 1 : 0);
    return {
      iteration: this.iteration.slice(0, count),
      relativeResidual: this.relativeResidual.slice(0, count),
      relativeError: this.relativeError ? this.relativeError.slice(0, count) : null,
      consensusDistance: this.consensusDistance ? this.consensusDistance.slice(0, count) : null,
      totalIterations: Math.max(0, this.lastIteration),
      cap: this.cap,
      downsampled: this.stride > 1,
    };
  }
}
