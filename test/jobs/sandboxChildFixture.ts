/**
 * A sandboxed child for test/jobs/sandboxChild.test.ts: BullMQ's child wrapper's answer to an uncaught exception
 * (bullmq/dist/cjs/classes/main-base.js: await sending the failure to the parent, then exit), with the service's guard
 * (src/jobs/sandboxChild.ts) when the child is started with the workers' execArgv (its preload), or with --guarded
 * (installed after the wrapper's listener, as the processor modules once did). Told to:
 *  - 'close and throw': it closes its channel and throws before 'disconnect' is delivered (its listeners are taken off
 *    here, as a starved event loop would never run them);
 *  - 'throw once orphaned': it blocks its event loop until its parent process is gone (so the closed channel is never
 *    read: process.connected stays true), then throws.
 */
import { leaveWithParent } from '../../src/jobs/sandboxChild.js';

const send = (message: unknown): Promise<void> =>
  new Promise((resolve, reject) => process.send?.(message, (error: Error | null) => (error ? reject(error) : resolve())));
// As the wrapper's async listener: a failed send leaves a rejected promise nobody handles.
process.on('uncaughtException', (error) => {
  void send({ failed: String(error) }).then(() => process.exit(0));
});
if (process.argv.includes('--guarded')) leaveWithParent();
process.removeAllListeners('disconnect');
process.once('message', (message) => {
  if (message === 'throw once orphaned') {
    const parent = process.ppid;
    const deadline = Date.now() + 20_000;
    while (process.ppid === parent && Date.now() < deadline);
  } else process.disconnect();
  throw new Error('thrown after the channel closed');
});
process.send?.('ready');
