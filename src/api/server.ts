/**
 * `npm run start:api`: the HTTP API alone, against REDIS_URL (workers run elsewhere:
 * `npm run start:worker`, on any host sharing that Redis).
 */
import { loadConfig } from '../config.js';
import { checkAuthMode } from '../jobs/apiKeys/authStartup.js';
import { createLogger } from '../jobs/logger.js';
import { RedisJobService } from '../jobs/redisJobService.js';
import { RedisStudyService } from '../jobs/studies/redisStudyService.js';
import { settlesWithin } from '../jobs/store/redisConnection.js';
import { onShutdownSignal } from '../shutdown.js';
import { buildApp } from './app.js';

const config = loadConfig();
const logger = createLogger(config, { role: 'api' });
if (!config.REDIS_URL) {
  logger.fatal('REDIS_URL is required for the API alone (npm start runs everything, with a private Redis)');
  process.exit(1);
}

const jobService = await RedisJobService.start(config, logger);
if (!(await checkAuthMode(config, jobService.keys, logger, { embeddedRedis: false }))) {
  await jobService.close();
  process.exit(1);
}
const studyService = await RedisStudyService.start(config, logger);
const app = await buildApp({ config, jobService, studyService, logger });
const address = await app.listen({ host: config.HOST, port: config.PORT });
logger.info({ url: address, redis: config.REDIS_URL }, `API listening on ${address}`);

onShutdownSignal(logger, config.SHUTDOWN_TIMEOUT_MS, async (budget) => {
  if (!(await settlesWithin(app.close(), budget.left()))) logger.warn('requests still under way; closing anyway');
  await Promise.all([studyService.close(), jobService.close()]);
});
