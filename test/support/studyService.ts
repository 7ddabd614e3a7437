/**
 * The studies as the tests drive them: a real redis-server, the API (jobs and studies services, the
 * fastify app with the OpenAPI contract check) and separate worker processes (src/jobs/workerMain.ts,
 * as `npm run start:worker` runs them), which can be killed.
 */
import type { ChildProcess } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { RedisJobService } from '../../src/jobs/redisJobService.js';
import { RedisStudyService } from '../../src/jobs/studies/redisStudyService.js';
import type { Study } from '../../src/jobs/studies/types.js';
import { checkContract } from './contract.js';
import { spawnWorkerProcess } from './processes.js';
import { startTestRedis } from './service.js';

const LOG_LEVEL = (process.env.TEST_LOG_LEVEL ?? 'silent') as Config['LOG_LEVEL'];

export interface StudyTestService {
  app: FastifyInstance;
  config: Config;
  redis: EmbeddedRedis;
  workers: ChildProcess[];
  /** http://127.0.0.1:port (the app listens, for SSE). */
  baseUrl: string;
  spawnWorker(): ChildProcess;
  close(): Promise<void>;
}

export async function startStudyTestService(
  overrides: Partial<Config> = {},
  workerEnv: Record<string, string> = {},
): Promise<StudyTestService> {
  const redis = await startTestRedis();
  const config: Config = { ...loadConfig({}), LOG_LEVEL, REDIS_URL: redis.url, JOB_BACKOFF_MS: 100, ...overrides };
  const logger = pino({ level: LOG_LEVEL });
  const jobService = await RedisJobService.start(config, logger);
  const studyService = await RedisStudyService.start(config, logger);
  const app = await buildApp({ config, jobService, studyService, logger, responseValidation: 'strict', extend: checkContract });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const workers: ChildProcess[] = [];
  const spawnWorker = (): ChildProcess => {
    const child = spawnWorkerProcess(redis.url, workerEnv);
    workers.push(child);
    return child;
  };
  return {
    app,
    config,
    redis,
    workers,
    baseUrl,
    spawnWorker,
    async close() {
      for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
      await app.close();
      await studyService.close();
      await jobService.close();
      await redis.stop();
    },
  };
}

export async function getStudy(app: FastifyInstance, id: string): Promise<Study> {
  const response = await app.inject({ method: 'GET', url: `/v1/studies/${id}` });
  if (response.statusCode !== 200) throw new Error(`GET /v1/studies/${id}: ${response.statusCode} ${response.body}`);
  return response.json<Study>();
}

/** Poll until the study ends (or `until` holds); generous timeouts, no timing assertions. */
export async function waitForStudy(
  app: FastifyInstance,
  id: string,
  options: { timeoutMs?: number; until?: (study: Study) => boolean } = {},
): Promise<Study> {
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  const until = options.until ?? ((study: Study) => ['succeeded', 'failed', 'cancelled'].includes(study.status));
  for (;;) {
    const study = await getStudy(app, id);
    if (until(study)) return study;
    if (Date.now() > deadline)
      throw new Error(`study ${id} still ${study.status} after the timeout: ${JSON.stringify(study.progress.done)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function createStudy(app: FastifyInstance, body: unknown): Promise<Study> {
  const response = await app.inject({ method: 'POST', url: '/v1/studies', payload: body as object });
  if (response.statusCode !== 202) throw new Error(`POST /v1/studies: ${response.statusCode} ${response.body}`);
  return response.json<Study>();
}
