/**
 * A solver worker thread (started by ./engine.ts): loads its code and the shard module while the calling thread
 * lays out the run's data, receives its setup (a WorkerSetup, by message), builds its chunk runner from the
 * shared data, then runs phases until told to exit. In each phase it takes chunks from the shared
 * counter like every other thread and ends by incrementing DONE; a failure is recorded in the
 * shared control words (never thrown out of the loop, which would leave the calling thread waiting).
 */
import { once } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { useBackend } from '../linalg/backend.js';
import { attachArena, reviveArenaViews, wasmKernelsEnabled, type WasmRowKernels } from '../linalg/wasmRowKernels.js';
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
  type WorkerStart,
} from './protocol.js';

const start = workerData as WorkerStart;
const control = new Int32Array(start.control);
const message = new Uint8Array(start.message);
// An exit the calling thread did not ask for (e.g. a fatal error) must not leave it waiting.
const leave = goneOnUnaskedExit(control);

async function buildShard(): Promise<{ shard: Shard; setup: WorkerSetup } | null> {
  try {
    if (parentPort === null) throw new Error('A solver worker must run in a worker thread.');
    // Listening first: the setup may come while the modules load.
    const setupMessage = once(parentPort, 'message');
    // The backend is per thread: take the run's, so that every thread runs the same kernels.
    useBackend(start.backend);
    const { createShard } = (await import(start.shardModule)) as { createShard: ShardFactory };
    // Compiles the kernels' module (per thread) before the setup comes rather than after.
    if (start.arena) wasmKernelsEnabled();
    const [setup] = (await setupMessage) as [WorkerSetup];
    let spec = setup.spec;
    let arenaKernels: WasmRowKernels | null = null;
    if (setup.arena !== null) {
      arenaKernels = attachArena(setup.arena, start.slot);
      spec = reviveArenaViews(spec, setup.arena.memory);
    }
    return { shard: await createShard(spec, setup.n, { backend: start.backend, arenaKernels }), setup };
  } catch (error) {
    recordFailure(control, message, error);
    return null;
  } finally {
    Atomics.add(control, READY, 1);
    Atomics.notify(control, READY);
  }
}

function serve(shard: Shard, setup: WorkerSetup): void {
  // In an arena, the views must be on this thread's memory.buffer: the kernels find an arena by that object.
  const data = setup.arena !== null ? setup.arena.memory.buffer : setup.data;
  const views = dataViews(data, setup.dataOffset, setup.n, setup.outputLength, setup.chunks, setup.scalarsPerChunk);
  const busy = new Float64Array(start.busy);
  let generation = 0;
  for (;;) {
    generation = waitForChange(control, GENERATION, generation);
    const phase = Atomics.load(control, PHASE);
    if (phase === EXIT_PHASE) return;
    const started = performance.now();
    try {
      runChunks(control, setup.blocks, start.slot, shard, phase, views);
    } catch (error) {
      recordFailure(control, message, error);
    }
    // Written before DONE is counted: the calling thread reads it once every worker is.
    busy[start.slot] = performance.now() - started;
    Atomics.add(control, DONE, 1);
    Atomics.notify(control, DONE);
  }
}

const built = await buildShard();
if (built !== null) serve(built.shard, built.setup);
leave();
