/**
 * `npm start`: the whole service in one process: the HTTP API and one worker (whose jobs run in
 * sandboxed child processes). Without REDIS_URL a private redis-server is started first, keeping its
 * data in DATA_DIR (append-only file; one service per DATA_DIR, see src/jobs/dataDirLock.ts).
 * Shutdown (SIGTERM/SIGINT): stop accepting requests, let running jobs finish (up to
 * SHUTDOWN_TIMEOUT_MS), close Redis connections, stop the embedded redis-server last; the process
 * ends within SHUTDOWN_TIMEOUT_MS and a second whatever Redis does (./shutdown.ts). The private
 * redis-server is started again when it exits otherwise (killed, crashed); past 5 restarts a minute the
 * service exits (1), for a process manager to start it again.
 */
import { buildApp } from './api/app.js';
import { loadConfig } from './config.js';
import { DataDirInUseError, lockDataDir, type DataDirLock } from './jobs/dataDirLock.js';
import { keepRedisRunning, startEmbeddedRedis, type KeptRedis } from './jobs/embeddedRedis.js';
import { checkAuthMode } from './jobs/apiKeys/authStartup.js';
import { createLogger } from './jobs/logger.js';
import { RedisJobService } from './jobs/redisJobService.js';
import { startWorker } from './jobs/worker.js';
import { RedisStudyService } from './jobs/studies/redisStudyService.js';
import { settlesWithin } from './jobs/store/redisConnection.js';
import { startStudyWorker } from './jobs/studies/studyWorker.js';
import { onShutdownSignal } from './shutdown.js';

const baseConfig = loadConfig();
const logger = createLogger(baseConfig, { role: 'main' });

let embedded: KeptRedis | null = null;
let dataLock: DataDirLock | null = null;
if (!baseConfig.REDIS_URL) {
  try {
    dataLock = await lockDataDir(baseConfig.DATA_DIR);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    logger.fatal({ dataDir: error.dataDir, ownerPid: error.ownerPid }, error.message);
    process.exit(1);
  }
  const lock = dataLock;
  const redisOptions = { bin: baseConfig.REDIS_SERVER_BIN, dataDir: lock.dataDir };
  const started = await startEmbeddedRedis(redisOptions);
  await lock.recordRedis(started.pid, started.port);
  logger.info(
    { redis: started.url, redisPid: started.pid, dataDir: lock.dataDir },
    'started a private redis-server keeping its data in DATA_DIR (append-only file, fsync every second; set REDIS_URL to use your own)',
  );
  // Killed or crashed, it is started again on its port and data: the connections come back by themselves.
  embedded = keepRedisRunning(started, () => startEmbeddedRedis({ ...redisOptions, port: started.port }), {
    exited: (exit, pid) => logger.error({ redisPid: pid, ...exit }, 'the private redis-server exited; starting it again on its data'),
    restarted: async (redis) => {
      await lock.recordRedis(redis.pid, redis.port);
      logger.warn({ redis: redis.url, redisPid: redis.pid }, 'the private redis-server runs again');
    },
    // A service whose store cannot run serves nothing: exit, for a process manager to start it again.
    gaveUp: (error) => {
      logger.fatal({ err: error }, 'the private redis-server cannot be kept running; exiting');
      process.exit(1);
    },
  });
}
const config = { ...baseConfig, REDIS_URL: baseConfig.REDIS_URL ?? embedded!.current().url };

const jobService = await RedisJobService.start(config, logger);
if (!(await checkAuthMode(config, jobService.keys, logger, { embeddedRedis: embedded !== null }))) {
  await jobService.close();
  await embedded?.stop();
  process.exit(1);
}
const worker = await startWorker(config, logger);
const studyService = await RedisStudyService.start(config, logger);
const studyWorker = await startStudyWorker(config, logger);
const app = await buildApp({ config, jobService, studyService, logger });
const address = await app.listen({ host: config.HOST, port: config.PORT });
logger.info({ url: address, docs: `${address}/docs`, redis: config.REDIS_URL }, `service listening on ${address}`);

onShutdownSignal(logger, config.SHUTDOWN_TIMEOUT_MS, async (budget) => {
  // Ends the event streams; a request still under way (an upload) does not hold up the workers' grace.
  if (!(await settlesWithin(app.close(), budget.left()))) logger.warn('requests still under way; closing anyway');
  await Promise.all([worker.close(budget.left()), studyWorker.close(budget.left())]);
  await Promise.all([studyService.close(), jobService.close()]);
  await embedded?.stop();
  await dataLock?.release();
});
