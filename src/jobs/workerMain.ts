/**
 * `npm run start:worker`: one worker process against REDIS_URL. Run as many as needed, on any
 * host sharing that Redis; each runs WORKER_CONCURRENCY jobs at a time in sandboxed children.
 */
import { loadConfig } from '../config.js';
import { onShutdownSignal } from '../shutdown.js';
import { createLogger } from './logger.js';
import { startStudyWorker } from './studies/studyWorker.js';
import { startWorker } from './worker.js';

const config = loadConfig();
const logger = createLogger(config, { role: 'worker' });
if (!config.REDIS_URL) {
  logger.fatal('REDIS_URL is required for a worker process');
  process.exit(1);
}

const worker = await startWorker(config, logger);
// Study chunks and aggregations (POST /v1/studies), next to the jobs.
const studyWorker = await startStudyWorker(config, logger);
onShutdownSignal(logger, config.SHUTDOWN_TIMEOUT_MS, async (budget) => {
  await Promise.all([worker.close(budget.left()), studyWorker.close(budget.left())]);
});
