/**
 * Runs independent tasks (a sparse setup's machines: each one's rows, Gram matrix and factorization;
 * its analysis' overlapping pairs of machines: each pair's principal angle) on several threads, as
 * cooperative work. The calling thread and `threads - 1` workers take task
 * indices from a shared counter in increasing order; a worker posts each result (its typed arrays
 * copied into shared memory, so that receiving it copies nothing) on its own MessagePort, which the
 * calling thread reads synchronously (receiveMessageOnPort) between its own tasks, at its own task's
 * time-slice points (at most every POLL_MS) and while it waits, yielding progress as results arrive (so that
 * progress moves while the calling thread runs a long task: the TypeScript LU of A at n = 10^6 takes minutes
 * while a worker computes L and every pair). Hence:
 *  - the results are those of one thread, task by task (each task is deterministic on its own);
 *  - a failure is the one a single thread would meet first: hand-out stops at the first failure,
 *    the tasks already handed out finish, and the lowest failed index is run again on the calling
 *    thread, which throws its error as the task throws it (typed errors and their details intact,
 *    which a message from a worker would not carry);
 *  - a worker that cannot start or dies costs time, not results: whatever task has no result at
 *    the end is run on the calling thread.
 * Cancellation (an error thrown in at a yield) stops the hand-out and terminates the workers.
 * With one thread no worker is started and the tasks run inline. Either way OpenBLAS is held to one thread while
 * they run (TaskPlan.blasThreads), so that a task computes the same bits on one thread as on several.
 *
 * This module knows tasks, not what they compute: the plan names the module whose `runTask` export
 * a worker runs (it must compute what the plan's own runTask computes on the calling thread).
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { relabelled, type Work, type WorkProgress } from '../cooperative.js';
import { CancelledError } from '../errors.js';
import type { BackendName } from '../linalg/backend.js';
import { holdBlasToOneThread, type BlasThreads, type Kernels } from '../linalg/kernels.js';
import { CONTROL_WORDS, DONE, GONE, MESSAGE_BYTES, NEXT } from './protocol.js';
import { endWorkerThread, sharedCopy, startWorkerThread } from './workerThreads.js';

/** Runs task `index` of a plan on (a worker's copy of) its spec. */
export type TaskRunner = (spec: unknown, index: number) => unknown;

export interface TaskPlan<Spec, Result> {
  /** URL of the module whose `runTask` export (a TaskRunner) a worker runs. */
  readonly taskModule: string;
  /** The backend every thread takes (per-thread state: ../linalg/backend.ts). */
  readonly backend: BackendName;
  /**
   * OpenBLAS's thread count (the kernels' blasThreads; null without OpenBLAS), held to one while the tasks run: threads
   * that each call a threaded BLAS (CHOLMOD's supernodal factorizations of a setup's machines) queue on its one thread
   * server and spin (at n = 10^6, m = 100, METIS's boxes' setup took 10.6-13.8 s on two threads so, 5.4-6.9 s held:
   * docs/performance.md); and held on one thread too, a task's BLAS sums in the order it does on several (results to
   * the bit).
   */
  readonly blasThreads: BlasThreads | null;
  readonly tasks: number;
  /** Threads, the calling one included (1: no worker). */
  readonly threads: number;
  /** Everything the tasks read: workers get one copy in shared memory. */
  readonly spec: Spec;
  /** The calling thread's runner, as cooperative work (its yields are time-slice points within a long task). */
  runTask(spec: Spec, index: number): Work<Result>;
  /** What to report when `done` tasks are done, `isDone(index)` telling which. */
  progress(done: number, isDone: (index: number) => boolean): WorkProgress;
}

/** A plan's backend and OpenBLAS threads: those of the kernels its tasks run on. */
export function onKernels({
  backend,
  blasThreads,
}: Pick<Kernels, 'backend' | 'blasThreads'>): Pick<TaskPlan<unknown, unknown>, 'backend' | 'blasThreads'> {
  return { backend, blasThreads };
}

/** What a task worker receives (structured clone; the spec's typed arrays live in shared memory). */
export interface TaskWorkerSetup {
  readonly taskModule: string;
  readonly backend: BackendName;
  readonly tasks: number;
  readonly spec: unknown;
  /** Where the worker posts a TaskReply per task. */
  readonly port: MessagePort;
  readonly control: SharedArrayBuffer;
  readonly message: SharedArrayBuffer;
}

/** A worker's report on one task: its result, or that it failed (the calling thread runs it again, to throw its error). */
export type TaskReply = { readonly index: number; readonly result: unknown } | { readonly index: number; readonly failed: true };

/** Longest wait between two looks at the workers' ports (ms): results are picked up and progress yielded at least this often. */
const POLL_MS = 20;

export function* runTasksWork<Spec, Result>(plan: TaskPlan<Spec, Result>): Work<Result[]> {
  const releaseBlas = holdBlasToOneThread(plan.blasThreads);
  try {
    return yield* tasksWork(plan);
  } finally {
    releaseBlas();
  }
}

function* tasksWork<Spec, Result>(plan: TaskPlan<Spec, Result>): Work<Result[]> {
  const { tasks, spec } = plan;
  const results = new Array<Result | undefined>(tasks);
  const has = new Uint8Array(tasks);
  let done = 0;
  const workers = Math.max(0, Math.min(plan.threads, tasks) - 1);
  const isDone = (index: number): boolean => has[index] === 1;
  if (workers === 0) {
    for (let i = 0; i < tasks; i++) {
      results[i] = yield* plan.runTask(spec, i);
      has[i] = 1;
      yield plan.progress(i + 1, isDone);
    }
    return results as Result[];
  }
  const control = new Int32Array(new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT));
  const message = new SharedArrayBuffer(MESSAGE_BYTES);
  const ports: MessagePort[] = [];
  const started: Worker[] = [];
  const receive = (): void => {
    for (const port of ports) {
      for (let received = receiveMessageOnPort(port); received !== undefined; received = receiveMessageOnPort(port)) {
        const reply = received.message as TaskReply;
        if (!('result' in reply)) {
          // Hand out nothing more: the calling thread runs the failed task again below.
          Atomics.store(control, NEXT, tasks);
          continue;
        }
        results[reply.index] = reply.result as Result;
        has[reply.index] = 1;
        done++;
      }
    }
  };
  // The calling thread's own task, the workers' results picked up at its time-slice points (at most every POLL_MS).
  let looked = 0;
  const ownTask = (index: number): Work<Result> =>
    relabelled(plan.runTask(spec, index), (progress) => {
      const now = performance.now();
      if (now - looked < POLL_MS) return progress;
      looked = now;
      const before = done;
      receive();
      return done > before ? plan.progress(done, isDone) : progress;
    });
  try {
    const shared = sharedCopy(spec);
    for (let w = 0; w < workers; w++) {
      const { port1, port2 } = new MessageChannel();
      ports.push(port1);
      const setup: TaskWorkerSetup = {
        taskModule: plan.taskModule,
        backend: plan.backend,
        tasks,
        spec: shared,
        port: port2,
        control: control.buffer,
        message,
      };
      started.push(startWorkerThread('taskWorker', setup, [port2]));
    }
    let localFailure: { index: number; error: unknown } | null = null;
    for (;;) {
      const i = Atomics.add(control, NEXT, 1);
      if (i >= tasks) break;
      try {
        results[i] = yield* ownTask(i);
      } catch (error) {
        if (error instanceof CancelledError) throw error;
        localFailure = { index: i, error };
        Atomics.store(control, NEXT, tasks);
        break;
      }
      has[i] = 1;
      done++;
      receive();
      yield plan.progress(done, isDone);
    }
    // The workers finish the tasks they hold (or are gone). Once every result is in, none holds one:
    // a worker still starting (~50 ms compiled, ~250 ms under tsx) is not waited for (ended below).
    for (;;) {
      receive();
      if (done >= tasks) break;
      const finished = Atomics.load(control, DONE);
      if (finished + Atomics.load(control, GONE) >= workers) break;
      yield plan.progress(done, isDone);
      Atomics.wait(control, DONE, finished, POLL_MS);
    }
    receive();
    // In index order: the first task without a result is the failure a single thread would meet first.
    for (let i = 0; i < tasks; i++) {
      if (has[i] === 1) continue;
      if (localFailure !== null && localFailure.index === i) {
        // The calling thread's own failure, rethrown as it was thrown.
        throw localFailure.error;
      }
      results[i] = yield* plan.runTask(spec, i);
      has[i] = 1;
      done++;
      yield plan.progress(done, isDone);
    }
    return results as Result[];
  } finally {
    Atomics.store(control, NEXT, tasks);
    for (const worker of started) endWorkerThread(worker);
    for (const port of ports) port.close();
  }
}
