/**
 * A solver worker thread (started by ./engine.ts): builds its chunk runner from the shared data it
 * was given, then runs phases until told to exit. In each phase it takes chunks from the shared
 * counter like every other thread and ends by incrementing DONE; a failure is recorded in the
 * shared control words (never thrown out of the loop, which would leave the calling thread waiting).
 */
import { workerData } from 'node:worker_threads';
import { useBackend } from '../linalg/backend.js';
import { attachArena, reviveArenaViews, type WasmRowKernels } from '../linalg/wasmRowKernels.js';
import {
  DONE,
  EXIT_PHASE,
  GENERATION,
  goneOnUnaskedExit,
  PHASE,
  READY,
  dataViews,
  recordFailure,
  runChunks,
  waitForChange,
  type Shard,
  type ShardFactory,
  type WorkerSetup,
} from './protocol.js';

const setup = workerData as WorkerSetup;
const control = new Int32Array(setup.control);
const message = new Uint8Array(setup.message);
// An exit the calling thread did not ask for (e.g. a fatal error) must not leave it waiting.
const leave = goneOnUnaskedExit(control);

async function buildShard(): Promise<Shard | null> {
  try {
    // The backend is per thread: take the run's, so that every thread runs the same kernels.
    useBackend(setup.backend);
    let spec = setup.spec;
    let arenaKernels: WasmRowKernels | null = null;
    if (setup.arena !== null) {
      arenaKernels = attachArena(setup.arena, setup.slot);
      spec = reviveArenaViews(spec, setup.arena.memory);
    }
    const { createShard } = (await import(setup.shardModule)) as { createShard: ShardFactory };
    return await createShard(spec, setup.n, { backend: setup.backend, arenaKernels });
  } catch (error) {
    recordFailure(control, message, error);
    return null;
  } finally {
    Atomics.add(control, READY, 1);
    Atomics.notify(control, READY);
  }
}

function serve(shard: Shard): void {
  // In an arena, the views must be on this thread's memory.buffer: the kernels find an arena by that object.
  const data = setup.arena !== null ? setup.arena.memory.buffer : setup.data;
  const views = dataViews(data, setup.dataOffset, setup.n, setup.outputLength, setup.chunks, setup.scalarsPerChunk);
  const busy = new Float64Array(setup.busy);
  let generation = 0;
  for (;;) {
    generation = waitForChange(control, GENERATION, generation);
    const phase = Atomics.load(control, PHASE);
    if (phase === EXIT_PHASE) return;
    const started = performance.now();
    try {
      runChunks(control, setup.order, shard, phase, views);
    } catch (error) {
      recordFailure(control, message, error);
    }
    // Written before DONE is counted: the calling thread reads it once every worker is.
    busy[setup.slot] = performance.now() - started;
    Atomics.add(control, DONE, 1);
    Atomics.notify(control, DONE);
  }
}

const shard = await buildShard();
if (shard !== null) serve(shard);
leave();
