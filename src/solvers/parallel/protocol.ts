/**
 * What the calling thread and the worker threads of one run share (see ./engine.ts): the shard
 * interface, the layout of the shared control words and data, and the spin-then-sleep wait.
 *
 * Control words (Int32Array over a SharedArrayBuffer):
 *   GENERATION  bumped by the calling thread to start a phase (workers wait for it to change);
 *   NEXT        the next chunk to take in the current phase (every thread takes chunks with Atomics.add);
 *   DONE        workers that finished the current phase (the calling thread waits for it to reach W);
 *   PHASE       the phase to run, or EXIT_PHASE;
 *   READY       workers that built their shard (start-up);
 *   FAILED      1 once a worker failed (its message in the message buffer);
 *   GONE        workers that ended without being asked to (the calling thread stops waiting for them).
 * Data (Float64Array over a SharedArrayBuffer): the input vector (n), the output the chunks write
 * (each chunk its own region), then `scalarsPerChunk` scalars per chunk. Plain stores to the data
 * are ordered before the Atomics operations that publish them (Atomics are sequentially consistent
 * in the JS memory model), so no data word is itself accessed atomically.
 */
import type { BackendName } from '../linalg/backend.js';
import type { ArenaLayout, WasmRowKernels } from '../linalg/wasmRowKernels.js';

/**
 * A thread's runner of chunks (machines, or row ranges): it can run any chunk of the run, holds
 * the thread's scratch buffers, and writes only the chunk's own region of the output and scalars.
 */
export interface Shard {
  run(phase: number, chunk: number, input: Float64Array, output: Float64Array, scalars: Float64Array): void;
}

/** Where one thread of a run runs its chunks: what a shard needs to choose its kernels. */
export interface ThreadContext {
  /** The run's backend (every thread runs the same kernels, so the iterates do not depend on the thread count). */
  readonly backend: BackendName;
  /** This thread's WebAssembly kernels on the run's arena, or null when the run has none. */
  readonly arenaKernels: WasmRowKernels | null;
}

/** Builds a worker's shard from its copy of the plan's spec (it may first import what the spec names). */
export type ShardFactory = (spec: unknown, n: number, context: ThreadContext) => Shard | Promise<Shard>;

export const GENERATION = 0;
export const NEXT = 1;
export const DONE = 2;
export const PHASE = 3;
export const READY = 4;
export const FAILED = 5;
export const GONE = 6;
export const MESSAGE_LENGTH = 7;
export const CONTROL_WORDS = 8;

/** PHASE value that ends the workers' loops. */
export const EXIT_PHASE = -1;
/** Bytes kept of a worker's error message. */
export const MESSAGE_BYTES = 4096;

/**
 * Polls before sleeping in Atomics.wait: ~20-60 microseconds, longer than the taskmaster's work
 * between two phases (an O(m n) reduction), so that a phase normally starts and ends without a
 * futex round trip (~10-100 microseconds each), yet short enough not to hold a core others need.
 */
export const SPIN_LIMIT = 1 << 15;
/** Longest single Atomics.wait, so that waits re-check GONE and FAILED now and then. */
export const WAIT_SLICE_MS = 200;

/**
 * What a worker thread starts with (its workerData): enough to load its code and the shard module while the
 * calling thread lays out the run's data (a copy of tens of megabytes at n = 10^6), which comes next as a WorkerSetup.
 */
export interface WorkerStart {
  /** URL of the module whose `createShard` export (a ShardFactory) builds this worker's shard. */
  readonly shardModule: string;
  /** The run's backend (see ThreadContext). */
  readonly backend: BackendName;
  /** Whether the run has a WebAssembly arena (the worker then compiles the kernels' module before its setup comes). */
  readonly arena: boolean;
  /** This worker's scratch slot in the arena (the calling thread has slot 0). */
  readonly slot: number;
  readonly control: SharedArrayBuffer;
  readonly message: SharedArrayBuffer;
  /** Milliseconds each thread spent on chunks in the current phase (a Float64Array, slot t at [t]; the calling thread's is 0). */
  readonly busy: SharedArrayBuffer;
}

/** What a worker thread receives by message once the run's data is laid out (structured clone; the typed arrays of `spec` live in shared memory). */
export interface WorkerSetup {
  /** Length of the input vector. */
  readonly n: number;
  readonly chunks: number;
  readonly outputLength: number;
  readonly scalarsPerChunk: number;
  /** The order in which chunks are handed out (largest first). */
  readonly order: Int32Array;
  readonly spec: unknown;
  /**
   * The run's WebAssembly arena (TypeScript backend with its WebAssembly kernels), or null: then
   * `spec` holds the places of its arrays in the arena, and the data is in the arena at dataOffset.
   */
  readonly arena: ArenaLayout | null;
  readonly data: SharedArrayBuffer;
  readonly dataOffset: number;
}

export interface DataViews {
  readonly input: Float64Array;
  readonly output: Float64Array;
  readonly scalars: Float64Array;
}

export function dataLength(n: number, outputLength: number, chunks: number, scalarsPerChunk: number): number {
  return n + outputLength + chunks * scalarsPerChunk;
}

/** The input, output and scalars, one after the other from byte `byteOffset` of `data` (shared or not). */
export function dataViews(
  data: ArrayBufferLike,
  byteOffset: number,
  n: number,
  outputLength: number,
  chunks: number,
  scalarsPerChunk: number,
): DataViews {
  const all = new Float64Array(data, byteOffset, dataLength(n, outputLength, chunks, scalarsPerChunk));
  return {
    input: all.subarray(0, n),
    output: all.subarray(n, n + outputLength),
    scalars: all.subarray(n + outputLength),
  };
}

/**
 * Takes chunks (order[Atomics.add(NEXT, 1)]) until none is left: every thread, the calling one
 * included, so a thread that is late (descheduled, or given larger chunks) simply takes fewer.
 */
export function runChunks(control: Int32Array, order: Int32Array, shard: Shard, phase: number, views: DataViews): void {
  const chunks = order.length;
  for (;;) {
    const i = Atomics.add(control, NEXT, 1);
    if (i >= chunks) return;
    shard.run(phase, order[i], views.input, views.output, views.scalars);
  }
}

/** Counts a worker GONE and wakes the calling thread wherever it waits for workers (READY, DONE). */
export function recordGone(control: Int32Array): void {
  Atomics.add(control, GONE, 1);
  Atomics.notify(control, DONE);
  Atomics.notify(control, READY);
}

/**
 * In a worker: counts it GONE if its thread exits before the returned `leave()` is called (a fatal
 * error), so that the calling thread never waits for it; after `leave()` an exit is an asked-for one.
 */
export function goneOnUnaskedExit(control: Int32Array): () => void {
  let leaving = false;
  process.on('exit', () => {
    if (!leaving) recordGone(control);
  });
  return () => {
    leaving = true;
  };
}

/** Records the first failure of a worker (message and FAILED flag). */
export function recordFailure(control: Int32Array, message: Uint8Array, error: unknown): void {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  if (Atomics.compareExchange(control, FAILED, 0, 1) !== 0) return;
  const bytes = new TextEncoder().encode(text).subarray(0, message.length);
  message.set(bytes);
  Atomics.store(control, MESSAGE_LENGTH, bytes.length);
}

export function failureMessage(control: Int32Array, message: Uint8Array): string {
  const length = Atomics.load(control, MESSAGE_LENGTH);
  return new TextDecoder().decode(message.slice(0, length));
}

/** Waits (spinning first) until control[index] differs from `value`; returns the new value. */
export function waitForChange(control: Int32Array, index: number, value: number): number {
  for (let spins = 0; spins < SPIN_LIMIT; spins++) {
    const now = Atomics.load(control, index);
    if (now !== value) return now;
  }
  for (;;) {
    const now = Atomics.load(control, index);
    if (now !== value) return now;
    Atomics.wait(control, index, value, WAIT_SLICE_MS);
  }
}
