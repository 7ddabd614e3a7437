/**
 * The message a sandboxed attempt sends its worker once its computation is done and only its outcome remains to be
 * written (./limitedWorker.ts): JOB_TIMEOUT_MS limits the computation, and what is left is the store's time. Before it,
 * a job that computed in 1 s and then waited on a Redis stalled past JOB_TIMEOUT_MS could end failed `time-limit` (the
 * worker's end written before the job's own), its process having logged the job done.
 */
const ATTEMPT_COMPUTED = 'lss-attempt-computed';

/** In the job's process: tell the worker (BullMQ's parent, which ignores commands it does not know). */
export function reportComputed(): void {
  if (process.send && process.connected) process.send({ cmd: ATTEMPT_COMPUTED }, () => undefined);
}

export function isComputedMessage(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { cmd?: unknown }).cmd === ATTEMPT_COMPUTED;
}
