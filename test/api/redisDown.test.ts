/**
 * Redis unreachable: readiness and job requests answer 503 promptly (fail-fast connections), the
 * process stays alive (/healthz 200), and it recovers when Redis is back.
 */
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
    const id = created.json().id as string;
    expect((await service.app.inject({ url: '/readyz' })).statusCode).toBe(200);

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
    // Validation still happens first: a bad body is a 4xx, not a 503.
    expect(
      (await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: { ...body, partition: { machines: 3 } } })).statusCode,
    ).toBe(422);
  });

  it('recovers when Redis is back', async () => {
    // A fresh redis-server on the same port (empty: the old data was not persisted).
    const port = redis.port;
    let restarted: EmbeddedRedis | null = null;
    for (let attempt = 0; attempt < 20 && !restarted; attempt++) {
      restarted = await startEmbeddedRedis({ bin: REDIS_SERVER_BIN, port, startTimeoutMs: 5000 }).catch(() => null);
      if (!restarted) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(restarted).not.toBeNull();
    redis = restarted!;
    const deadline = Date.now() + 20_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await service.app.inject({ url: '/readyz' })).statusCode;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect((await service.app.inject({ method: 'POST', url: '/v1/jobs', payload: body })).statusCode).toBe(202);
  });
});
