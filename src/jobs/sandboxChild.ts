/**
 * What every sandboxed BullMQ child of this service (./processor.ts, ./studies/chunkProcessor.ts) does first: leave
 * when its worker process is gone. A SIGKILLed worker sends its children no signal; only their IPC channel closes.
 *  - On 'disconnect' (the channel closed) the child exits.
 *  - On an uncaught exception once the channel is closed it exits too. BullMQ's child wrapper (6.x) answers an uncaught
 *    exception by sending the failure to its parent and awaiting the send; on a closed channel the send rejects, the
 *    rejection comes back as another uncaught exception, and so on: a loop of microtasks that never lets the event loop
 *    deliver 'disconnect'. Seen in CI: a child orphaned by the worker a studies test kills spun at a full core and grew to
 *    2.9 GB for 28 minutes. The wrapper's listener runs first (it was added first) and does not block this one.
 */
export function leaveWithParent(): void {
  if (!process.send) return;
  process.on('disconnect', () => process.exit(1));
  process.on('uncaughtException', () => {
    if (!process.connected) process.exit(1);
  });
}
