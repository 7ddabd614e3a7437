/**
 * A sandboxed child for test/jobs/sandboxChild.test.ts: BullMQ's child wrapper's answer to an uncaught exception
 * (bullmq/dist/cjs/classes/main-base.js: await sending the failure to the parent, then exit), then, with --guarded,
 * what the service's children add (src/jobs/sandboxChild.ts). Told to, it closes its channel and throws before
 * 'disconnect' is delivered (its listeners are taken off here, as a starved event loop would never run them).
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
process.once('message', () => {
  process.disconnect();
  throw new Error('thrown after the channel closed');
});
process.send?.('ready');
