/**
 * A task worker thread (started by ./taskPool.ts): takes task indices from the shared counter until
 * none is left, posting each task's result (its typed arrays copied into shared memory) or, when the
 * task throws, that it failed; then counts itself DONE. A failed task stops the hand-out (the calling
 * thread runs it again to throw its error). An exit that was not asked for counts as GONE.
 */
import { workerData } from 'node:worker_threads';
import { useBackend } from '../linalg/backend.js';
import { DONE, GONE, NEXT } from './protocol.js';
import type { TaskReply, TaskRunner, TaskWorkerSetup } from './taskPool.js';
import { sharedCopy } from './workerThreads.js';

const setup = workerData as TaskWorkerSetup;
const control = new Int32Array(setup.control);
let leaving = false;

process.on('exit', () => {
  if (leaving) return;
  Atomics.add(control, GONE, 1);
  Atomics.notify(control, DONE);
});

// The backend is per thread: take the calling thread's, so that every task runs the same code.
useBackend(setup.backend);
const { runTask } = (await import(setup.taskModule)) as { runTask: TaskRunner };
for (;;) {
  const index = Atomics.add(control, NEXT, 1);
  if (index >= setup.tasks) break;
  let reply: TaskReply;
  try {
    reply = { index, result: sharedCopy(runTask(setup.spec, index)) };
  } catch {
    reply = { index, failed: true };
    Atomics.store(control, NEXT, setup.tasks);
  }
  setup.port.postMessage(reply);
}
setup.port.close();
leaving = true;
Atomics.add(control, DONE, 1);
Atomics.notify(control, DONE);
