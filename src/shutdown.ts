/**
 * SIGTERM/SIGINT handling shared by the entry points: run the shutdown steps once, in order,
 * then exit; a second signal exits at once.
 */
import type { Logger } from 'pino';

export function onShutdownSignal(logger: Logger, shutdown: () => Promise<void>): void {
  let shuttingDown = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    shutdown()
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
