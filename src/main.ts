/**
 * `npm start`: the whole service in one process: the HTTP API and one worker (whose jobs run in
 * sandboxed child processes). Without REDIS_URL a private redis-server is started first.
 * Shutdown (SIGTERM/SIGINT): stop accepting requests, let running jobs finish (up to
 * SHUTDOWN_TIMEOUT_MS), close Redis connections, stop the embedded redis-server last.
 */
import { buildApp } from './api/app.js';
import { loadConfig } from './config.js';
import { startEmbeddedRedis, type EmbeddedRedis } from './jobs/embeddedRedis.js';
import { createLogger } from './jobs/logger.js';
import { RedisJobService } from './jobs/redisJobService.js';
import { startWorker } from './jobs/worker.js';
import { onShutdownSignal } from './shutdown.js';

const baseConfig = loadConfig();
const logger = createLogger(baseConfig, { role: 'main' });

let embedded: EmbeddedRedis | null = null;
if (!baseConfig.REDIS_URL) {
  embedded = await startEmbeddedRedis({ bin: baseConfig.REDIS_SERVER_BIN });
  logger.info({ redis: embedded.url, redisPid: embedded.pid }, 'started a private redis-server (set REDIS_URL to use your own)');
}
const config = { ...baseConfig, REDIS_URL: baseConfig.REDIS_URL ?? embedded!.url };

const jobService = await RedisJobService.start(config, logger);
const worker = await startWorker(config, logger);
const app = await buildApp({ config, jobService, logger });
const address = await app.listen({ host: config.HOST, port: config.PORT });
logger.info({ url: address, docs: `${address}/docs`, redis: config.REDIS_URL }, `service listening on ${address}`);

onShutdownSignal(logger, async () => {
  await app.close();
  await worker.close(config.SHUTDOWN_TIMEOUT_MS);
  await jobService.close();
  await embedded?.stop();
});
