/**
 * What the calling thread and the worker threads of one run share (see ./engine.ts): the shard
 * interface, the layout of the shared control words and data, and the spin-then-sleep wait.
 *
 * Control words (Int32Array over a SharedArrayBuffer):
 *   GENERATION  bumped by the calling thread to start a phase (workers wait for it to change);
 *   NEXT        the next task to take (./taskPool.ts; the engine's chunks are taken from the blocks below);
 *   DONE        workers that finished the current phase (the calling thread waits for it to reach W);
 *   PHASE       the phase to run, or EXIT_PHASE;
 *   READY       workers that built their shard (start-up);
 *   FAILED      1 once a worker failed (its message in the message buffer);
 *   GONE        workers that ended without being asked to (the calling thread stops waiting for them).
 *   then one word per thread t (CONTROL_WORDS + t, the engine's runs): what is left of its block of chunks (runChunks).
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
  /** Thread t's block of chunks: [blocks[t], blocks[t + 1]) (see chunkBlocks). */
  readonly blocks: Int32Array;
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
 * The threads' blocks of chunks: thread t (the calling thread is 0, worker slot t is t) owns the consecutive chunks
 * [blocks[t], blocks[t + 1]), about an even share of the work each (chunkWork: matrix entries a chunk reads). A thread
 * runs its own block first, so that it runs the same chunks phase after phase and the data it writes in one phase (a
 * machine's term, the rows a step phase updates) is what it reads in the next, in its own core's caches: on the 2-core
 * EPYC VM, a CSR block iteration (Poisson n = 90,000, m = 20, 16 right-hand sides) took 3.4-3.6 ms when any thread took
 * any chunk (the lines moving between the cores) and 2.0-2.1 ms so. Then it takes what is left of the other blocks
 * from their ends, so that a late thread (descheduled, or given more work) holds the others up by one chunk at most.
 */
export function chunkBlocks(chunkWork: ArrayLike<number>, chunks: number, threads: number): Int32Array {
  const blocks = new Int32Array(threads + 1);
  let total = 0;
  for (let c = 0; c < chunks; c++) total += chunkWork[c];
  let done = 0;
  let c = 0;
  for (let t = 1; t < threads; t++) {
    const target = (total * t) / threads;
    // At least one chunk per block, and one left for each block after it.
    while (c < chunks - (threads - t) && (c < t || done + chunkWork[c] / 2 <= target)) done += chunkWork[c++];
    blocks[t] = c;
  }
  blocks[threads] = chunks;
  return blocks;
}

/**
 * A block's control word packs its next chunk (low 16 bits) and its end (high 16 bits), both from the block's start:
 * its owner takes from the front and the other threads from the end, each by one compareExchange. A block longer than
 * PACKED_BLOCK_LIMIT keeps its next chunk alone, from which every thread takes (Atomics.add).
 */
const PACKED_BLOCK_LIMIT = 0xffff;

function packed(blocks: Int32Array): boolean {
  for (let t = 0; t + 1 < blocks.length; t++) if (blocks[t + 1] - blocks[t] > PACKED_BLOCK_LIMIT) return false;
  return true;
}

/** Before a phase: every block whole again. */
export function resetBlocks(control: Int32Array, blocks: Int32Array): void {
  const whole = packed(blocks);
  for (let t = 0; t + 1 < blocks.length; t++) Atomics.store(control, CONTROL_WORDS + t, whole ? (blocks[t + 1] - blocks[t]) << 16 : 0);
}

/** After a chunk failed: no chunk left to take. */
export function emptyBlocks(control: Int32Array, blocks: Int32Array): void {
  const whole = packed(blocks);
  for (let t = 0; t + 1 < blocks.length; t++) Atomics.store(control, CONTROL_WORDS + t, whole ? 0 : blocks[t + 1] - blocks[t]);
}

/** The next chunk of block t from its front (fromEnd false) or its end, or -1 when none is left. */
function take(control: Int32Array, blocks: Int32Array, t: number, whole: boolean, fromEnd: boolean): number {
  const word = CONTROL_WORDS + t;
  if (!whole) {
    const k = Atomics.add(control, word, 1);
    return blocks[t] + k < blocks[t + 1] ? blocks[t] + k : -1;
  }
  for (;;) {
    const state = Atomics.load(control, word);
    const next = state & 0xffff;
    const end = (state >>> 16) & 0xffff;
    if (next >= end) return -1;
    const taken = fromEnd ? ((end - 1) << 16) | next : (end << 16) | (next + 1);
    if (Atomics.compareExchange(control, word, state, taken) === state) return blocks[t] + (fromEnd ? end - 1 : next);
  }
}

/**
 * Runs chunks until none is left (see chunkBlocks): thread `slot`'s own block from its front, then the other blocks
 * from their ends. Every thread does this, the calling one included.
 */
export function runChunks(control: Int32Array, blocks: Int32Array, slot: number, shard: Shard, phase: number, views: DataViews): void {
  const threads = blocks.length - 1;
  const whole = packed(blocks);
  for (let c = take(control, blocks, slot, whole, false); c >= 0; c = take(control, blocks, slot, whole, false))
    shard.run(phase, c, views.input, views.output, views.scalars);
  for (let d = 1; d < threads; d++) {
    const t = (slot + d) % threads;
    for (let c = take(control, blocks, t, whole, true); c >= 0; c = take(control, blocks, t, whole, true))
      shard.run(phase, c, views.input, views.output, views.scalars);
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
