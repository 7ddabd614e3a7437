/**
 * The service as the tests drive it: a real redis-server (src/jobs/embeddedRedis.ts, never a
 * mock), the RedisJobService, the fastify app and, unless disabled, an in-process worker whose
 * jobs run in sandboxed child processes, exactly as in `npm start`.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { RedisJobService } from '../../src/jobs/redisJobService.js';
import type { Job } from '../../src/jobs/types.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { checkContract } from './contract.js';

/** Logs of the service under test: silent unless TEST_LOG_LEVEL is set (e.g. TEST_LOG_LEVEL=info). */
const LOG_LEVEL = (process.env.TEST_LOG_LEVEL ?? 'silent') as Config['LOG_LEVEL'];

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';

export function startTestRedis(): Promise<EmbeddedRedis> {
  return startEmbeddedRedis({ bin: REDIS_SERVER_BIN });
}

export interface TestService {
  app: FastifyInstance;
  config: Config;
  jobService: RedisJobService;
  worker: JobWorker | null;
  redis: EmbeddedRedis;
  /** http://127.0.0.1:port when started with listen: true. */
  baseUrl: string;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  /** Start an in-process worker (default true). */
  worker?: boolean;
  /** Listen on a free port (for SSE and the generated client). */
  listen?: boolean;
  /** Use this Redis instead of starting one (it is then not stopped by close()). */
  redis?: EmbeddedRedis;
}

function testConfig(redisUrl: string, overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), LOG_LEVEL, REDIS_URL: redisUrl, JOB_BACKOFF_MS: 100, ...overrides };
}

export async function startTestService(overrides: Partial<Config> = {}, options: TestServiceOptions = {}): Promise<TestService> {
  const redis = options.redis ?? (await startTestRedis());
  const config = testConfig(redis.url, overrides);
  const logger = pino({ level: LOG_LEVEL });
  const jobService = await RedisJobService.start(config, logger);
  const worker = options.worker === false ? null : await startWorker(config, logger);
  const app = await buildApp({ config, jobService, logger, responseValidation: 'strict', extend: checkContract });
  let baseUrl = '';
  if (options.listen) baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    config,
    jobService,
    worker,
    redis,
    baseUrl,
    async close() {
      await app.close();
      await worker?.close(5000);
      await jobService.close();
      if (!options.redis) await redis.stop();
    },
  };
}

export async function createJob(app: FastifyInstance, body: unknown): Promise<{ response: LightMyRequestResponse; job: Job }> {
  const response = await app.inject({ method: 'POST', url: '/v1/jobs', payload: body as object });
  return { response, job: response.json<Job>() };
}

export async function getJob(app: FastifyInstance, id: string): Promise<Job> {
  const response = await app.inject({ method: 'GET', url: `/v1/jobs/${id}` });
  if (response.statusCode !== 200) throw new Error(`GET /v1/jobs/${id}: ${response.statusCode} ${response.body}`);
  return response.json<Job>();
}

/** The solution x of a job's run (GET .../runs/{algorithm}/solution), failing on any status but 200. */
export async function getSolution(app: FastifyInstance, id: string, algorithm: string): Promise<number[]> {
  const response = await app.inject({ url: `/v1/jobs/${id}/runs/${algorithm}/solution` });
  if (response.statusCode !== 200) throw new Error(`GET solution of ${id} (${algorithm}): ${response.statusCode} ${response.body}`);
  return response.json<{ x: number[] }>().x;
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

/** Poll until the job ends (or `until` holds); generous timeouts, no timing assertions. */
export async function waitForJob(
  app: FastifyInstance,
  id: string,
  options: { timeoutMs?: number; until?: (job: Job) => boolean } = {},
): Promise<Job> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const until = options.until ?? ((job: Job) => FINISHED.has(job.status));
  for (;;) {
    const job = await getJob(app, id);
    if (until(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status} after the timeout: ${JSON.stringify(job.progress)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** POST /v1/jobs over the listening service's socket, then wait for the job to succeed (throws otherwise). */
export async function solveOverSocket(service: TestService, body: object, timeoutMs = 300_000): Promise<Job> {
  const response = await fetch(`${service.baseUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 202) throw new Error(`POST /v1/jobs: ${response.status} ${await response.text()}`);
  const job = await waitForJob(service.app, ((await response.json()) as Job).id, { timeoutMs });
  if (job.status !== 'succeeded') throw new Error(`job ${job.id} ended ${job.status}: ${JSON.stringify(job.error)}`);
  return job;
}

export async function runJob(app: FastifyInstance, body: unknown, timeoutMs?: number): Promise<Job> {
  const { response, job } = await createJob(app, body);
  if (response.statusCode !== 202) throw new Error(`POST /v1/jobs: ${response.statusCode} ${response.body}`);
  return waitForJob(app, job.id, { timeoutMs });
}
