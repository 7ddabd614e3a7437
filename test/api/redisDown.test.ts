/**
 * Redis unreachable: readiness and job requests answer 503 promptly (fail-fast connections),
 * /metrics answers with lss_redis_up 0 and no queue depth, the process stays alive (/healthz 200),
 * and it recovers when Redis is back; also when Redis was already down when the service started.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { REDIS_SERVER_BIN, startTestRedis, startTestService, type TestService } from '../support/service.js';

let redis: EmbeddedRedis;
let service: TestService;

beforeAll(async () => {
  redis = await startTestRedis();
  service = await startTestService({}, { redis, worker: false });
});

afterAll(async () => {
  await service?.close();
  await redis?.stop();
});

/** A fresh redis-server on `port` (empty: the old data was not persisted), retried while the port is still being released. */
async function restartRedis(port: number): Promise<EmbeddedRedis> {
  let restarted: EmbeddedRedis | null = null;
  for (let attempt = 0; attempt < 20 && !restarted; attempt++) {
    restarted = await startEmbeddedRedis({ bin: REDIS_SERVER_BIN, port, startTimeoutMs: 5000 }).catch(() => null);
    if (!restarted) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(restarted).not.toBeNull();
  return restarted!;
}

async function waitUntilReady(app: FastifyInstance): Promise<void> {
  const deadline = Date.now() + 20_000;
  let status = 0;
  while (Date.now() < deadline && status !== 200) {
    status = (await app.inject({ url: '/readyz' })).statusCode;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(status).toBe(200);
}

/** The samples of /metrics (lines that are not comments). */
async function metricSamples(app: FastifyInstance): Promise<string[]> {
  const response = await app.inject({ url: '/metrics' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain/);
  return response.body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

function expectRedisDownMetrics(samples: string[]): void {
  expect(samples).toContain('lss_redis_up 0');
  expect(samples.filter((line) => line.startsWith('lss_queue_jobs'))).toEqual([]);
  // The process's own metrics are still there.
  expect(samples.some((line) => line.startsWith('lss_process_cpu_user_seconds_total '))).toBe(true);
}

function expectRedisUpMetrics(samples: string[]): void {
  expect(samples).toContain('lss_redis_up 1');
  expect(samples.find((line) => line.startsWith('lss_queue_jobs{state="waiting"}'))).toMatch(/ \d+$/);
}

const body = {
  type: 'analyze',
  matrix: {
    format: 'dense',
    data: [
      [2, 1],
      [1, 2],
    ],
  },
  partition: { machines: 2 },
};

describe('with Redis stopped', () => {
  it('answers 503 problems for readiness and jobs, and stays alive', async () => {
    const created = await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: body });
    expect(created.statusCode).toBe(202);
    const id = created.json<{ id: string }>().id;
    expect((await service.app.inject({ url: '/readyz' })).statusCode).toBe(200);
    expectRedisUpMetrics(await metricSamples(service.app));

    await redis.stop();

    const ready = await service.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(ready.json()).toMatchObject({ status: 503, code: 'store-unavailable' });

    const post = await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: body });
    expect(post.statusCode).toBe(503);
    expect(post.json()).toMatchObject({ status: 503, code: 'store-unavailable', type: '/problems/store-unavailable' });

    for (const url of [`/v1/jobs/${id}`, '/v1/jobs', `/v1/jobs/${id}/runs/apc/trace`]) {
      const response = await service.app.inject({ url });
      expect(response.statusCode, url).toBe(503);
    }
    expect((await service.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expectRedisDownMetrics(await metricSamples(service.app));
    // Validation still happens first: a bad body is a 4xx, not a 503.
    expect(
      (await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: { ...body, partition: { machines: 3 } } })).statusCode,
    ).toBe(422);
  });

  it('recovers when Redis is back', async () => {
    redis = await restartRedis(redis.port);
    await waitUntilReady(service.app);
    expect((await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: body })).statusCode).toBe(202);
    expectRedisUpMetrics(await metricSamples(service.app));
  });
});

describe('with Redis down since the service started', () => {
  let downRedis: EmbeddedRedis;
  let lateService: TestService;

  beforeAll(async () => {
    downRedis = await startTestRedis();
    await downRedis.stop();
    // Connections that have never been ready: BullMQ's queue waits for its first 'ready' before any command.
    lateService = await startTestService({}, { redis: downRedis, worker: false });
  });

  afterAll(async () => {
    await lateService?.close();
    await downRedis?.stop();
  });

  it('answers /metrics (lss_redis_up 0), /readyz and job requests at once, and recovers', async () => {
    expectRedisDownMetrics(await metricSamples(lateService.app));
    expect((await lateService.app.inject({ url: '/readyz' })).statusCode).toBe(503);
    expect((await lateService.app.inject({ method: 'POST', url: '/v1/jobs', payload: body })).statusCode).toBe(503);
    expect((await lateService.app.inject({ url: '/v1/jobs' })).statusCode).toBe(503);

    downRedis = await restartRedis(downRedis.port);
    await waitUntilReady(lateService.app);
    expectRedisUpMetrics(await metricSamples(lateService.app));
    expect((await lateService.app.inject({ method: 'POST', url: '/v1/jobs', payload: body })).statusCode).toBe(202);
  });
});
