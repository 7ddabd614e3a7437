/**
 * SIGTERM/SIGINT handling shared by the entry points: run the shutdown steps once, in order, then
 * exit; a second signal exits at once. The steps get SHUTDOWN_TIMEOUT_MS from the signal for what
 * deserves a grace period (running jobs), and the process exits SHUTDOWN_GRACE_MS after that in any
 * case: a step still waiting then waits on a Redis that is gone (its redis-server killed first, as
 * Ctrl-C on a terminal signals the whole process group), and nothing it could still do is worth a
 * process that does not end. Jobs left running resume elsewhere from their checkpoints.
 */
import type { Logger } from 'pino';

/**
 * How long after SHUTDOWN_TIMEOUT_MS the last steps (connections, the embedded redis-server) may take
 * before the process exits anyway. The exit itself took up to ~340 ms more on CI (the process tree's
 * exit handlers): 800 ms left SIGINT's exit at 4137 ms against the 4000 ms bound.
 */
export const SHUTDOWN_GRACE_MS = 400;

/** What the shutdown steps are given: the time left of SHUTDOWN_TIMEOUT_MS. */
export interface ShutdownBudget {
  /** Milliseconds until SHUTDOWN_TIMEOUT_MS after the signal (0 once past). */
  left(): number;
}

export function onShutdownSignal(logger: Logger, timeoutMs: number, shutdown: (budget: ShutdownBudget) => Promise<void>): void {
  let shuttingDown = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal, timeoutMs }, 'shutting down');
    const deadline = Date.now() + timeoutMs;
    setTimeout(() => {
      logger.error({ timeoutMs, graceMs: SHUTDOWN_GRACE_MS }, 'shutdown did not finish in time (Redis gone?); exiting now');
      process.exit(1);
    }, timeoutMs + SHUTDOWN_GRACE_MS).unref();
    shutdown({ left: () => Math.max(0, deadline - Date.now()) })
      .then(() => {
        logger.info('shutdown complete');
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
