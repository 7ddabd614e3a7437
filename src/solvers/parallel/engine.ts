/**
 * Runs one iteration's machine work on several threads. A method cuts its work into chunks
 * (machines for APC, MLM and Cimmino; row ranges of the machines for the gradient methods), each
 * writing only its own region of a shared output (APC: its x_i; Cimmino: its A_i^+ r_i; a row
 * range: its gradient term) and its own scalars. A phase is: the calling thread publishes the
 * input vector (xbar or x, shared memory) and bumps a generation counter; every thread, the calling
 * one included, runs its own block of chunks, then takes what is left of the others' (./protocol.ts
 * chunkBlocks: a thread runs the same chunks phase after phase, its data in its own caches); the calling
 * thread waits until the workers are done (an Atomics barrier), then reduces the chunks' outputs in
 * chunk order. A method may also cut a phase by another rule over the same chunk indices (the block
 * methods' step phase: chunk c is a range of rows, ../machines/blockShard.ts) in which each chunk
 * writes only its own rows of the input and reads no row another chunk writes; the barrier and the
 * next phase's generation order those writes before the next phase's reads.
 * Hence:
 *  - the iterates do not depend on the thread count nor on which thread ran which chunk: they are
 *    the single-thread iterates, bit for bit;
 *  - a thread that is late (descheduled by another process, or given larger chunks) takes fewer
 *    chunks instead of holding the others up for half an iteration.
 * The method's step() stays synchronous: the calling thread blocks in Atomics.wait (allowed on
 * Node's main thread) only for the part of a phase the workers take longer than it does.
 *
 * Lifetime: workers start when the method is created, first thing, and load their code while the calling thread lays
 * out the data (the data the chunks read is copied once into
 * shared memory, which every thread reads, the calling one included, so that a phase reads one copy
 * whichever thread takes which chunk; arrays in shared memory already are not copied; in a run placed in a WebAssembly
 * arena the data, input and output are copied once into the arena instead, but for arrays made there before (staged),
 * which every thread reads, even with one thread; see
 * ../linalg/wasmRowKernels.ts; with one thread and no arena the chunks read the system's arrays) and
 * end on dispose(), which the runner calls when the run ends however it ends. Workers are unref'd (a forgotten method never keeps a process alive) and a
 * FinalizationRegistry ends those of a method dropped undisposed. Every thread runs the plan's
 * backend (the native row kernels are single-threaded C, so threads are this engine's business
 * with either backend). With one thread (small problems, setSolverThreads(1)) no worker, shared
 * memory or barrier is involved: the chunks run inline.
 *
 * This module knows chunks, not what they compute: the plan names the module that builds a
 * worker's shard (../machines/machineShard.ts for the solvers' passes), and the caller chooses the
 * backend and the arena (../machines/placement.ts).
 *
 * Worker threads are started and counted by ./workerThreads.ts (shared with ./taskPool.ts).
 */
import type { Worker } from 'node:worker_threads';
import {
  CONTROL_WORDS,
  DONE,
  chunkBlocks,
  emptyBlocks,
  resetBlocks,
  runChunks,
  type DataViews,
  EXIT_PHASE,
  FAILED,
  GENERATION,
  GONE,
  MESSAGE_BYTES,
  PHASE,
  READY,
  SPIN_LIMIT,
  WAIT_SLICE_MS,
  dataLength,
  dataViews,
  failureMessage,
  type Shard,
  type ThreadContext,
  type WorkerSetup,
  type WorkerStart,
} from './protocol.js';
import type { BackendName } from '../linalg/backend.js';
import { WasmArena, attachArena, type ArenaStaging, type WasmRowKernels } from '../linalg/wasmRowKernels.js';
import { threadsForRun } from './threads.js';
import { endWorkerThread, sharedCopy, startWorkerThread } from './workerThreads.js';

export type { Shard, ShardFactory, ThreadContext } from './protocol.js';
export { activeSolverWorkers, runningSolverWorkers } from './workerThreads.js';

/** Longest wait for the workers to load and build their shards before the run falls back to one thread. */
export const WORKER_STARTUP_TIMEOUT_MS = 30_000;

/** How a method's per-iteration work is cut into chunks and run, and where (chosen by the caller, ../machines/placement.ts). */
export interface ShardPlan<Spec> {
  /**
   * URL of the module whose `createShard` export (a ShardFactory) builds a worker's shard; it must
   * build what `createShard` below builds on the calling thread.
   */
  readonly shardModule: string;
  /** The run's backend: every thread takes it, so that every thread runs the same kernels. */
  readonly backend: BackendName;
  /** Whether the run's data goes into a WebAssembly arena (see ../linalg/wasmRowKernels.ts; none when unavailable). */
  readonly arena: boolean;
  /** Where arrays of the spec were made for that arena before it is laid out: they stay where they are (not copied). */
  readonly arenaStaging?: ArenaStaging | null;
  /**
   * Per thread in an arena: the longest vector its slot stages (default n) and the entries of work
   * space it has besides (default 0; a shard's own blocks for the kernels, WasmRowKernels.workspace).
   */
  readonly arenaSlot?: { readonly maxCols: number; readonly workEntries: number };
  /** Length of the shared input vector. */
  readonly n: number;
  /** Chunks of a phase; each writes its own region of the output and its own scalars. */
  readonly chunks: number;
  readonly outputLength: number;
  readonly scalarsPerChunk: number;
  /** Matrix entries each chunk reads per iteration (it shares the chunks out among the threads: chunkBlocks). */
  readonly chunkWork: ArrayLike<number>;
  /** Everything the chunks read. Workers get one copy of it in shared memory: keep it to what they read. */
  readonly spec: Spec;
  /** The chunk runner of the calling thread (it reads the spec as given, or its arena copy). */
  createShard(spec: Spec, n: number, context: ThreadContext): Shard;
  /**
   * Whether the run's start and phase synchronisation are kept for the time-to-solution model (lastThreadStartSeconds,
   * lastPhaseSyncSeconds; default true). False for runs that are not a method's iterations (an analysis' operator).
   */
  readonly priced?: boolean;
  /** The storage of a method's machines, when its runs measure the threads' slowdown for it (lastThreadSlowdown). */
  readonly slowdownOf?: SlowdownStorage;
}

let lastStartFailure = '';
let lastStartSeconds: number | null = null;

/**
 * Seconds the last threaded engine of this process took to start its workers (from the shared copy of
 * the data to every worker's shard built), or null before the first: what the time-to-solution model
 * prices a threaded run's start at (../analysis/timeToSolution.ts).
 */
export function lastThreadStartSeconds(): number | null {
  return lastStartSeconds;
}

/**
 * A phase's synchronisation, measured: its wall time less the chunks' work shared evenly over the
 * threads (the sum of the threads' busy times / T), i.e. the hand-over (the generation bump, the
 * workers waking), the barrier and whatever imbalance the chunks left. Averaged over a run's phases
 * after its first PHASES_SKIPPED, and kept when a run ends after at least PHASES_KEPT more. The early
 * phases stay in: they are dearer (the workers' code is not optimized yet: over runs of 200 phases,
 * dense n = 1000 on TypeScript, the mean was 120-160 us, over runs of 1000 40-80 us) and every run
 * pays for them, so the mean is a run's, and a short run's is higher.
 */
const PHASES_SKIPPED = 3;
const PHASES_KEPT = 20;
let lastPhaseSync: number | null = null;

/**
 * Mean seconds of a phase's synchronisation in the last threaded run of this process that ran at
 * least PHASES_KEPT phases, or null before the first: what the time-to-solution model prices a
 * threaded iteration's phase at (../analysis/timeToSolution.ts).
 */
export function lastPhaseSyncSeconds(): number | null {
  return lastPhaseSync;
}

/**
 * The threads' slowdown: how much longer a phase's chunks take run side by side on the run's threads (their busy times
 * summed) than one after another on the calling thread alone. Threads that share a last-level cache and memory
 * bandwidth run slower side by side: on the 2-core EPYC VM a dense n = 1000, m = 10 APC iteration took 0.19-0.24 ms on
 * two threads against 0.26 ms on one, where two processes of single-threaded dgemm each kept their speed alone (then any
 * thread took any chunk, so the chunks' data also moved between the cores; since each thread keeps its block of chunks,
 * ./protocol.ts chunkBlocks, the dense runs there measure 1.1-1.2).
 * A priced threaded run whose plan names its storage (ShardPlan.slowdownOf: a method's machines) measures it itself:
 * once SOLO_FROM of its phases have run threaded, its next SOLO_PHASES run on the calling thread alone, the workers left
 * waiting (the iterates do not depend on which thread runs a chunk: they are unchanged, and the run takes about
 * SOLO_PHASES (T - 1) / T phases longer), when this process has no measurement younger than SLOWDOWN_REFRESH_MS. The
 * first solo phase is not timed: the workers still spin through part of it (SPIN_LIMIT) before they sleep, and their
 * spin slows the calling thread. The ratio of the threaded phases' mean busy time to the timed solo phases' mean, phase
 * kind by phase kind (each weighted by how often it ran threaded), is kept when the run ends. Measured so on that VM
 * (quiet): 1.26-1.37 for dense APC, 1.17-1.24 for D-HBM (n = 1000, m = 10, native).
 */
const SOLO_FROM = 50;
const SOLO_PHASES = 8;
/** How long a measured slowdown stands before a run measures it again (the calibration's refresh, CALIBRATION_REFRESH_SECONDS). */
const SLOWDOWN_REFRESH_MS = 600_000;

/** The storage whose runs' threads' slowdown a run measures (ShardPlan.slowdownOf): dense passes and CSR ones differ. */
export type SlowdownStorage = 'dense' | 'csr';

const lastSlowdown: Record<SlowdownStorage, number | null> = { dense: null, csr: null };
/** When runs of each storage last ran solo phases (performance.now), or null. */
const lastSoloAt: Record<SlowdownStorage, number | null> = { dense: null, csr: null };

/**
 * The threads' slowdown (see SOLO_FROM) of the last threaded run on `storage` in this process that measured it, or null
 * before the first: what the time-to-solution model multiplies a threaded phase's chunk prices by
 * (../analysis/timeToSolution.ts). On the EPYC VM the dense runs measured 1.2-1.4, where the CSR ones' model (priced
 * per thread's share of the cache) needed none.
 */
export function lastThreadSlowdown(storage: SlowdownStorage): number | null {
  return lastSlowdown[storage];
}

/** A phase kind's busy milliseconds: summed over its threaded phases (all threads), and over its timed solo phases. */
interface PhaseBusy {
  threadedMs: number;
  threaded: number;
  soloMs: number;
  solo: number;
}

/** Why the last attempt to start worker threads failed ('' if none failed); such runs use one thread. */
export function lastThreadStartFailure(): string {
  return lastStartFailure;
}

/** Ends the workers of an engine that was garbage-collected without dispose(). */
const abandoned = new FinalizationRegistry<() => void>((release) => release());

/**
 * The engine for a method's run: `threads` threads when given, else threadsForRun(total work, chunks), or one when
 * worker threads cannot start (the reason is kept in lastThreadStartFailure()).
 */
export function startShardEngine<Spec>(plan: ShardPlan<Spec>, threads?: number): ShardEngine {
  let work = 0;
  for (let c = 0; c < plan.chunks; c++) work += plan.chunkWork[c];
  threads ??= threadsForRun(work, plan.chunks);
  if (threads > 1) {
    try {
      return new ShardEngine(plan, threads);
    } catch (error) {
      lastStartFailure = error instanceof Error ? error.message : String(error);
    }
  }
  return new ShardEngine(plan, 1);
}

/** The shared control words, failure message and busy times of a threaded run, and its workers, started (into `workers`). */
function startWorkers(
  plan: ShardPlan<unknown>,
  threads: number,
  workers: Worker[],
): { control: Int32Array; message: Uint8Array; busy: Float64Array } {
  // The header, then a word per thread for its block of chunks.
  const control = new SharedArrayBuffer((CONTROL_WORDS + threads) * Int32Array.BYTES_PER_ELEMENT);
  const message = new SharedArrayBuffer(MESSAGE_BYTES);
  const busy = new SharedArrayBuffer(threads * Float64Array.BYTES_PER_ELEMENT);
  const start: Omit<WorkerStart, 'slot'> = {
    shardModule: plan.shardModule,
    backend: plan.backend,
    arena: plan.arena,
    control,
    message,
    busy,
  };
  try {
    for (let t = 1; t < threads; t++) workers.push(startWorkerThread('worker', { ...start, slot: t }));
  } catch (error) {
    releaseWorkers(workers, new Int32Array(control));
    throw error;
  }
  return { control: new Int32Array(control), message: new Uint8Array(message), busy: new Float64Array(busy) };
}

export class ShardEngine {
  readonly threads: number;
  /** The vector every chunk reads in a phase (the method's estimate); shared memory when threaded. */
  readonly input: Float64Array;
  /** The chunks' outputs, each in its own region (layout chosen by the method). */
  readonly output: Float64Array;
  /** scalarsPerChunk scalars per chunk, chunk c at [c S, (c + 1) S). */
  readonly scalars: Float64Array;
  /** Where the calling thread runs: its kernels, for the caller's own reductions over the output. */
  readonly context: ThreadContext;
  private readonly local: Shard;
  private readonly chunks: number;
  /** Each thread's block of chunks (../parallel/protocol.ts chunkBlocks). */
  private readonly blocks: Int32Array;
  private readonly views: DataViews;
  private readonly control: Int32Array;
  private readonly message: Uint8Array;
  private readonly workers: Worker[] = [];
  /** Each thread's busy milliseconds in the current phase (slot 0 unused: the calling thread times its own). */
  private readonly busy: Float64Array;
  private readonly priced: boolean;
  private readonly slowdownOf: SlowdownStorage | null;
  private phases = 0;
  private syncMs = 0;
  /** Busy times by phase kind, for the threads' slowdown (lastThreadSlowdown). */
  private readonly phaseBusy = new Map<number, PhaseBusy>();
  private soloPhases = 0;
  /** Whether this run measures the threads' slowdown: decided at its SOLO_FROM-th phase (startsMeasuring). */
  private measuring: boolean | null = null;
  private disposed = false;

  constructor(plan: ShardPlan<unknown>, threads: number) {
    const { n, chunks, outputLength, scalarsPerChunk } = plan;
    this.priced = plan.priced ?? true;
    this.slowdownOf = this.priced ? (plan.slowdownOf ?? null) : null;
    this.chunks = chunks;
    this.threads = Math.max(1, Math.min(threads, chunks));
    this.blocks = chunkBlocks(plan.chunkWork, chunks, this.threads);
    const length = dataLength(n, outputLength, chunks, scalarsPerChunk) * Float64Array.BYTES_PER_ELEMENT;
    const startingAt = performance.now();
    // Threaded: the workers start first and load their code (~60-90 ms) while this thread lays out the data below
    // (at n = 10^6 the arena copy alone is ~200 ms); their setup follows by message.
    const channel = this.threads > 1 ? startWorkers(plan, this.threads, this.workers) : null;
    this.control = channel?.control ?? new Int32Array(CONTROL_WORDS);
    this.message = channel?.message ?? new Uint8Array(0);
    this.busy = channel?.busy ?? new Float64Array(0);
    try {
      // In an arena, the chunks' data, input and output go into WebAssembly memory, where the row
      // kernels run in WebAssembly SIMD (every thread, so the iterates stay those of one).
      const slot = plan.arenaSlot ?? { maxCols: n, workEntries: 0 };
      const arena = plan.arena
        ? WasmArena.forSpec(plan.spec, length, this.threads, slot.maxCols, slot.workEntries, plan.arenaStaging ?? null)
        : null;
      let spec: unknown = plan.spec;
      let data: ArrayBufferLike;
      let dataOffset = 0;
      let arenaKernels: WasmRowKernels | null = null;
      if (arena !== null) {
        spec = arena.copyInto(plan.spec);
        const all = arena.allocate(Float64Array, Float64Array.BYTES_PER_ELEMENT, length / Float64Array.BYTES_PER_ELEMENT);
        data = all.buffer;
        dataOffset = all.byteOffset;
        arenaKernels = attachArena(arena.layout, 0);
      } else if (this.threads === 1) {
        data = new ArrayBuffer(length);
      } else {
        data = new SharedArrayBuffer(length);
        // Every thread reads the one shared copy, the calling one included: any thread may take any chunk, so had the
        // calling thread kept the system's arrays, a phase would read the data from two copies (dense n = 1000, m = 10:
        // 16 MB where 8 MB stay in the last-level cache; one copy made a native iteration ~5-10% shorter).
        spec = sharedCopy(plan.spec);
      }
      this.views = dataViews(data, dataOffset, n, outputLength, chunks, scalarsPerChunk);
      this.input = this.views.input;
      this.output = this.views.output;
      this.scalars = this.views.scalars;
      this.context = { backend: plan.backend, arenaKernels };
      this.local = plan.createShard(spec, n, this.context);
      if (channel === null) return;
      // One copy of the chunks' data in shared memory, read by every worker: the arena's, or a copy.
      const setup: WorkerSetup = {
        n,
        chunks,
        outputLength,
        scalarsPerChunk,
        blocks: this.blocks,
        spec: arena !== null ? arena.describe(spec) : spec,
        arena: arena !== null ? arena.layout : null,
        data: data as SharedArrayBuffer,
        dataOffset,
      };
      for (const worker of this.workers) worker.postMessage(setup);
      this.awaitStartup();
      if (this.priced) lastStartSeconds = (performance.now() - startingAt) / 1000;
    } catch (error) {
      this.release();
      throw error;
    }
    // Closures below must not capture `this`: the finalization registry holds them strongly.
    const workers = this.workers;
    const controlWords = this.control;
    const release = (): void => releaseWorkers(workers, controlWords);
    abandoned.register(this, release, this);
  }

  /** Runs `phase` on every chunk (this thread takes chunks too) and returns when all are done. */
  run(phase: number): void {
    if (this.disposed) throw new Error('This solver run has ended: its threads were released.');
    const { control, local, chunks, blocks, views } = this;
    if (this.workers.length === 0) {
      for (let c = 0; c < chunks; c++) local.run(phase, c, views.input, views.output, views.scalars);
      return;
    }
    if (this.phases >= SOLO_FROM && this.soloPhases < SOLO_PHASES && (this.measuring ??= this.startsMeasuring())) {
      // A solo phase (see SOLO_FROM): every chunk on this thread, the workers left waiting.
      const soloStart = performance.now();
      for (let c = 0; c < chunks; c++) local.run(phase, c, views.input, views.output, views.scalars);
      if (this.soloPhases++ > 0) {
        const kind = this.busyOf(phase);
        kind.soloMs += performance.now() - soloStart;
        kind.solo++;
      }
      return;
    }
    const started = performance.now();
    resetBlocks(control, blocks);
    Atomics.store(control, DONE, 0);
    Atomics.store(control, PHASE, phase);
    Atomics.add(control, GENERATION, 1);
    Atomics.notify(control, GENERATION);
    let localError: unknown = null;
    const localStart = performance.now();
    try {
      runChunks(control, blocks, 0, local, phase, views);
    } catch (error) {
      localError = error;
      // The phase has failed: hand out no more chunks.
      emptyBlocks(control, blocks);
    }
    const localBusy = performance.now() - localStart;
    this.awaitWorkers();
    this.timePhase(phase, performance.now() - started, localBusy);
    // The calling thread's own chunk failed: rethrow what it threw, as it threw it.
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- whatever runChunks threw (unknown, an Error or not) is rethrown unchanged
    if (localError !== null) throw localError;
    if (Atomics.load(control, FAILED) !== 0) throw new Error(`A solver worker thread failed: ${failureMessage(control, this.message)}`);
  }

  /** Runs `phase` on chunk `chunk` alone on the calling thread, the workers left waiting: work too small to hand out. */
  runChunkHere(phase: number, chunk: number): void {
    if (this.disposed) throw new Error('This solver run has ended: its threads were released.');
    const { local, views } = this;
    local.run(phase, chunk, views.input, views.output, views.scalars);
  }

  /** Adds a phase's synchronisation (see lastPhaseSyncSeconds) and its busy time (lastThreadSlowdown) to this run's. */
  private timePhase(phase: number, wallMs: number, localBusyMs: number): void {
    const { busy } = this;
    let work = localBusyMs;
    for (let t = 1; t < busy.length; t++) work += busy[t];
    if (++this.phases <= PHASES_SKIPPED) return;
    this.syncMs += Math.max(0, wallMs - work / this.threads);
    const kind = this.busyOf(phase);
    kind.threadedMs += work;
    kind.threaded++;
  }

  /** Whether this run measures the threads' slowdown: it names its storage, and none was measured for it in this process for SLOWDOWN_REFRESH_MS. */
  private startsMeasuring(): boolean {
    const storage = this.slowdownOf;
    if (storage === null) return false;
    const now = performance.now();
    const last = lastSoloAt[storage];
    if (last !== null && now - last < SLOWDOWN_REFRESH_MS) return false;
    lastSoloAt[storage] = now;
    return true;
  }

  private busyOf(phase: number): PhaseBusy {
    let kind = this.phaseBusy.get(phase);
    if (kind === undefined) {
      kind = { threadedMs: 0, threaded: 0, soloMs: 0, solo: 0 };
      this.phaseBusy.set(phase, kind);
    }
    return kind;
  }

  /** This run's threads' slowdown (lastThreadSlowdown), or null when it timed no solo phase of a kind it ran threaded. */
  private slowdown(): number | null {
    let threaded = 0;
    let solo = 0;
    for (const kind of this.phaseBusy.values()) {
      if (kind.solo === 0 || kind.threaded === 0) continue;
      // Each kind weighted by its threaded phases: the mix of kinds an iteration has.
      threaded += kind.threadedMs;
      solo += (kind.soloMs / kind.solo) * kind.threaded;
    }
    return solo > 0 && threaded > 0 ? threaded / solo : null;
  }

  /** Sum over chunks, in chunk order, of scalar `index`. */
  scalarSum(index: number): number {
    const { scalars } = this;
    const stride = scalars.length / this.chunks;
    let s = 0;
    for (let k = index; k < scalars.length; k += stride) s += scalars[k];
    return s;
  }

  /** Largest over chunks of scalar `index`; NaN when any is NaN. */
  scalarMax(index: number): number {
    const { scalars } = this;
    const stride = scalars.length / this.chunks;
    let best = -Infinity;
    for (let k = index; k < scalars.length; k += stride) {
      const v = scalars[k];
      if (Number.isNaN(v)) return v;
      if (v > best) best = v;
    }
    return best;
  }

  /** Ends the worker threads (idempotent); the engine cannot run afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    abandoned.unregister(this);
    this.release();
  }

  private release(): void {
    const timed = this.phases - PHASES_SKIPPED;
    if (this.priced && this.workers.length > 0 && timed >= PHASES_KEPT) {
      lastPhaseSync = this.syncMs / timed / 1000;
      if (this.slowdownOf !== null) lastSlowdown[this.slowdownOf] = this.slowdown() ?? lastSlowdown[this.slowdownOf];
    }
    releaseWorkers(this.workers, this.control);
    this.workers.length = 0;
  }

  private awaitStartup(): void {
    const { control } = this;
    const expected = this.workers.length;
    const deadline = performance.now() + WORKER_STARTUP_TIMEOUT_MS;
    for (;;) {
      if (Atomics.load(control, FAILED) !== 0)
        throw new Error(`Solver worker threads failed to start: ${failureMessage(control, this.message)}`);
      const ready = Atomics.load(control, READY);
      if (ready >= expected) return;
      if (performance.now() > deadline) throw new Error(`Solver worker threads did not start within ${WORKER_STARTUP_TIMEOUT_MS} ms.`);
      Atomics.wait(control, READY, ready, 50);
    }
  }

  private awaitWorkers(): void {
    const { control } = this;
    const expected = this.workers.length;
    let spins = 0;
    for (;;) {
      const done = Atomics.load(control, DONE);
      if (done >= expected) return;
      if (spins < SPIN_LIMIT) {
        spins++;
        continue;
      }
      if (Atomics.load(control, GONE) !== 0) {
        throw new Error(`A solver worker thread ended during an iteration: ${failureMessage(control, this.message) || 'no message'}`);
      }
      Atomics.wait(control, DONE, done, WAIT_SLICE_MS);
    }
  }
}

/** Asks the workers to leave their loop, then terminates them (each released once). */
function releaseWorkers(workers: Worker[], control: Int32Array): void {
  if (workers.length === 0) return;
  Atomics.store(control, PHASE, EXIT_PHASE);
  Atomics.add(control, GENERATION, 1);
  Atomics.notify(control, GENERATION);
  for (const worker of workers.splice(0)) endWorkerThread(worker);
}
