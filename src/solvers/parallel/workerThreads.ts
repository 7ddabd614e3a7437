/**
 * Starting and ending the worker threads of solver runs (./engine.ts: a run's per-iteration chunks)
 * and of task pools (./taskPool.ts: a setup's independent tasks), and counting them.
 *
 * Worker code: the bootstrap below imports the entry module (./worker.ts or ./taskWorker.ts, or the
 * .js next to this module once compiled). Under tsx or vitest (.ts sources) it first registers tsx's
 * ESM hooks in the worker through tsx/esm/api: on Node 20, `--import tsx` in a worker's execArgv
 * does not give the worker's imports the hooks (importing a .ts file fails with
 * ERR_UNKNOWN_FILE_EXTENSION). A failure to load is recorded in the worker's shared control words
 * (FAILED, the message, GONE), so that the thread that started it never waits for it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type TransferListItem } from 'node:worker_threads';
import { DONE, FAILED, GONE, MESSAGE_BYTES, MESSAGE_LENGTH, READY, recordFailure } from './protocol.js';
import { isTypedArray, mapLeaves } from '../mapLeaves.js';

/** The worker entries of this directory. */
export type WorkerEntryName = 'worker' | 'taskWorker';

/** What every worker receives besides its own data: its shared control words and failure message. */
export interface WorkerChannel {
  readonly control: SharedArrayBuffer;
  readonly message: SharedArrayBuffer;
}

/** Where a worker finds its entry: the module to import, and tsx's ESM API to register first (null for compiled code). */
export interface WorkerEntry {
  readonly entryUrl: string;
  readonly tsxApiUrl: string | null;
}

let activeWorkers = 0;
let runningWorkers = 0;

/** Worker threads started by solver runs and setups and not yet released (dispose, or the end of their run). */
export function activeSolverWorkers(): number {
  return activeWorkers;
}

/** Worker threads whose exit has not been observed yet (exits are observed on the event loop). */
export function runningSolverWorkers(): number {
  return runningWorkers;
}

/** CommonJS script of every worker: registers tsx when the entry is TypeScript, then imports the entry. */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsxApiUrl !== null) (await import(workerData.tsxApiUrl)).register();
  await import(workerData.entryUrl);
})().catch((error) => {
  const control = new Int32Array(workerData.control);
  if (Atomics.compareExchange(control, ${FAILED}, 0, 1) === 0) {
    const bytes = new TextEncoder().encode(String((error && error.stack) || error)).subarray(0, ${MESSAGE_BYTES});
    new Uint8Array(workerData.message).set(bytes);
    Atomics.store(control, ${MESSAGE_LENGTH}, bytes.length);
  }
  Atomics.add(control, ${GONE}, 1);
  Atomics.notify(control, ${READY});
  Atomics.notify(control, ${DONE});
});
`;

const entries = new Map<WorkerEntryName, WorkerEntry>();

/** ./<name>.ts or ./<name>.js next to this module, and tsx's ESM API when it is .ts. */
function workerEntry(name: WorkerEntryName): WorkerEntry {
  const known = entries.get(name);
  if (known) return known;
  const typescript = import.meta.url.endsWith('.ts');
  const entryUrl = new URL(`./${name}.${typescript ? 'ts' : 'js'}`, import.meta.url).href;
  let tsxApiUrl: string | null = null;
  if (typescript) {
    const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
    const api = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, unknown> }).exports['./esm/api'];
    const target = typeof api === 'string' ? api : (api as { import: { default: string } }).import.default;
    tsxApiUrl = new URL(target, pathToFileURL(manifest)).href;
  }
  const entry = { entryUrl, tsxApiUrl };
  entries.set(name, entry);
  return entry;
}

/**
 * Starts a worker on entry `name` with `data` (plus where to find the entry) as its workerData. The
 * worker is unref'd (it never keeps a process alive) and counted until endWorkerThread.
 */
export function startWorkerThread<Data extends WorkerChannel>(
  name: WorkerEntryName,
  data: Data,
  transferList: readonly TransferListItem[] = [],
): Worker {
  const worker = new Worker(BOOTSTRAP, { eval: true, workerData: { ...data, ...workerEntry(name) }, transferList: [...transferList] });
  activeWorkers++;
  runningWorkers++;
  worker.on('exit', () => runningWorkers--);
  // An 'error' event without a listener would throw on the event loop; the failure is recorded in
  // the shared control words instead, where the starting thread looks for it.
  const control = new Int32Array(data.control);
  const message = new Uint8Array(data.message);
  worker.on('error', (error) => recordFailure(control, message, error));
  worker.unref();
  return worker;
}

/** Terminates a worker started by startWorkerThread (call once per worker). */
export function endWorkerThread(worker: Worker): void {
  activeWorkers--;
  worker.terminate().catch(() => undefined);
}

/**
 * A deep copy of plain data (arrays, objects, numbers, strings, typed arrays) whose typed arrays are
 * in shared memory: copies of those that are not, the others as they are (a setup's results from
 * ./taskPool.ts, shared already; nothing the threads share is written after it is handed over).
 * Posting it to another thread then copies nothing more and detaches nothing. (Transferring ArrayBuffers would detach them in the sender, and the first detached
 * ArrayBuffer of a process makes V8 check every later typed-array access for detachment: the row
 * kernels get ~20% slower for the rest of the process.) A typed array met twice (machines of one pattern share their
 * Gram factor's symbolic part) is copied once, also across the calls given the same `copies`.
 */
export function sharedCopy(value: unknown, copies = new WeakMap<ArrayBufferView, ArrayBufferView>()): unknown {
  return mapLeaves(value, isTypedArray, (view) => {
    if (view.buffer instanceof SharedArrayBuffer) return view;
    const had = copies.get(view);
    if (had !== undefined) return had;
    const source = view as Float64Array;
    const Construct = source.constructor as new (buffer: SharedArrayBuffer) => Float64Array;
    const copy = new Construct(new SharedArrayBuffer(source.byteLength));
    copy.set(source);
    copies.set(view, copy);
    return copy;
  });
}
