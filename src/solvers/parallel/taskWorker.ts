/**
 * A task worker thread (started by ./taskPool.ts): takes task indices from the shared counter until
 * none is left, posting each task's result (its typed arrays copied into shared memory) or, when the
 * task throws, that it failed; then counts itself DONE. A failed task stops the hand-out (the calling
 * thread runs it again to throw its error). A worker that cannot load the task module, or exits
 * without being asked to, counts as GONE (once).
 */
import { workerData } from 'node:worker_threads';
import { useBackend } from '../linalg/backend.js';
import { DONE, NEXT, goneOnUnaskedExit, recordGone } from './protocol.js';
import type { TaskReply, TaskRunner, TaskWorkerSetup } from './taskPool.js';
import { sharedCopy } from './workerThreads.js';

const setup = workerData as TaskWorkerSetup;
const control = new Int32Array(setup.control);
const leave = goneOnUnaskedExit(control);

/** The task module's runner on the calling thread's backend, or null (counted GONE once) when either cannot load. */
async function taskRunner(): Promise<TaskRunner | null> {
  try {
    // The backend is per thread: take the calling thread's, so that every task runs the same code.
    useBackend(setup.backend);
    return ((await import(setup.taskModule)) as { runTask: TaskRunner }).runTask;
  } catch {
    // The calling thread runs this worker's share; it only needs to stop waiting for it.
    leave();
    recordGone(control);
    return null;
  }
}

/** Runs tasks until none is left, posting a reply for each. */
function serve(runTask: TaskRunner): void {
  for (;;) {
    const index = Atomics.add(control, NEXT, 1);
    if (index >= setup.tasks) return;
    let reply: TaskReply;
    try {
      reply = { index, result: sharedCopy(runTask(setup.spec, index)) };
    } catch {
      reply = { index, failed: true };
      Atomics.store(control, NEXT, setup.tasks);
    }
    setup.port.postMessage(reply);
  }
}

const runTask = await taskRunner();
if (runTask !== null) {
  serve(runTask);
  leave();
  Atomics.add(control, DONE, 1);
  Atomics.notify(control, DONE);
}
// The port stays open (closing it could drop replies not yet read): the calling thread ends this worker.
