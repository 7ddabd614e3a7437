/**
 * Per-key limits (AUTH_MODE=keys) through HTTP against a real Redis, without a worker (jobs stay
 * queued): requests per second (429 rate-limited with Retry-After, counted in Redis), jobs queued
 * or running at once and stored bytes (429 quota-exceeded with Retry-After, nothing stored for the
 * refused request, nothing accepted dropped), 413 quota-too-large for a request that can never fit,
 * and the slots and bytes given back when jobs end or are deleted.
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import type { CreatedApiKey } from '../../src/jobs/apiKeys/apiKey.js';
import { RedisJobService } from '../../src/jobs/redisJobService.js';
import type { Job, JobPage, ProblemDetails } from '../../src/jobs/types.js';
import { startTestService, type TestService } from '../support/service.js';
import { SMALL_ANALYZE } from '../support/requests.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ AUTH_MODE: 'keys', RATE_LIMIT_PER_SECOND: 1000 }, { worker: false, listen: true });
});

afterAll(async () => {
  await service?.close();
});

function as(key: CreatedApiKey, options: InjectOptions): Promise<LightMyRequestResponse> {
  return service.app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${key.key}` } });
}

function dense(n: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? n : 1)));
}

function expectRetryLater(response: LightMyRequestResponse, code: string): ProblemDetails {
  expect(response.statusCode, response.body).toBe(429);
  const problem = response.json<ProblemDetails>();
  expect(problem.code).toBe(code);
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${response.headers['retry-after']}`).toBe(true);
  return problem;
}

describe('requests per second', () => {
  it("answers 429 rate-limited with Retry-After past the key's limit, counting in Redis; other keys are not affected", async () => {
    const keys = service.jobService.keys;
    const limited = await keys.create({ name: 'limited', quotas: { requestsPerSecond: 3 } });
    const other = await keys.create({ name: 'other' });
    // 20 requests at once against 3 per second: whatever the window's boundaries, some are refused.
    const answers = await Promise.all(Array.from({ length: 20 }, () => as(limited, { url: '/v1/jobs' })));
    const refused = answers.filter((response) => response.statusCode === 429);
    expect(refused.length).toBeGreaterThanOrEqual(20 - 2 * 3);
    expect(answers.filter((response) => response.statusCode === 200).length).toBeGreaterThanOrEqual(1);
    expectRetryLater(refused[0], 'rate-limited');
    expect(refused[0].headers['ratelimit-limit']).toBe('3');
    expect((await as(other, { url: '/v1/jobs' })).statusCode).toBe(200);
  });
});

describe('the request-rate headers (IETF draft RateLimit-*), over a socket', () => {
  it('are on every answer counted against a key, and a 429 has them with Retry-After, as the document declares', async () => {
    const key = await service.jobService.keys.create({ name: 'headers', quotas: { requestsPerSecond: 2 } });
    const get = () => fetch(`${service.baseUrl}/v1/jobs`, { headers: { authorization: `Bearer ${key.key}` } });
    const answers = await Promise.all(Array.from({ length: 8 }, get));
    const accepted = answers.filter((response) => response.status === 200);
    const refused = answers.filter((response) => response.status === 429);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(8 - 2 * 2);
    for (const response of [...accepted, ...refused]) {
      expect(response.headers.get('ratelimit-limit')).toBe('2');
      expect(Number(response.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(0);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
    for (const response of refused) {
      expect(response.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await response.json()) as ProblemDetails).code).toBe('rate-limited');
    }
    // Open paths are not counted: no headers.
    const health = await fetch(`${service.baseUrl}/healthz`);
    expect(health.headers.get('ratelimit-limit')).toBeNull();

    // The document declares them on every 429 (the contract check of test/support/contract.ts reads them from there).
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { required?: boolean }> }> }>>;
    };
    const tooMany = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.responses['429']));
    expect(tooMany.filter(Boolean).length).toBeGreaterThan(10);
    for (const response of tooMany.filter(Boolean)) {
      expect(Object.keys(response.headers ?? {}).sort()).toEqual([
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'Retry-After',
      ]);
      expect(response.headers?.['Retry-After'].required).toBe(true);
    }
  });
});

describe('requests per second across API instances', () => {
  it('counts one window per key in Redis, shared by every instance', async () => {
    const key = await service.jobService.keys.create({ name: 'two instances', quotas: { requestsPerSecond: 4 } });
    const otherService = await RedisJobService.start(service.config, pino({ level: 'silent' }));
    const other = await buildApp({ config: service.config, jobService: otherService });
    try {
      // The new instance's rate-limit connection to Redis comes up in the background, and until it is ready the
      // store's errors let requests through uncounted (skipOnError: RateLimit-Reset 0). Wait for a request of
      // another key that each instance counted in Redis (Reset >= 1), so that the burst below meets both counting.
      const warmUp = await service.jobService.keys.create({ name: 'warm-up', quotas: { requestsPerSecond: 1000 } });
      for (const app of [service.app, other]) {
        const deadline = performance.now() + 10_000;
        for (;;) {
          const response = await app.inject({ url: '/v1/jobs', headers: { authorization: `Bearer ${warmUp.key}` } });
          if (response.headers['ratelimit-reset'] !== '0' || performance.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      const headers = { authorization: `Bearer ${key.key}` };
      // 12 at once, half through each instance. The window (1 s) starts at its first request, so the
      // requests span at most floor(T / 1 s) + 1 windows: 4 allowed in each, where an instance
      // counting alone would allow 4 in each window on each instance (8 in one window).
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, k) => (k % 2 === 0 ? service.app : other).inject({ url: '/v1/jobs', headers })),
      );
      const windows = Math.floor((performance.now() - started) / 1000) + 1;
      const allowed = answers.filter((response) => response.statusCode === 200).length;
      expect(allowed, `${windows} window(s)`).toBeLessThanOrEqual(Math.min(12, 4 * windows));
      expect(answers.filter((response) => response.statusCode === 429).length).toBe(12 - allowed);
    } finally {
      await other.close();
      await otherService.close();
    }
  });
});

describe('jobs queued or running at once', () => {
  it('refuses the job past the limit with 429 quota-exceeded and Retry-After, keeps those accepted, and takes jobs again once one ends', async () => {
    const key = await service.jobService.keys.create({ name: 'two slots', quotas: { activeJobs: 2 } });
    const accepted: Job[] = [];
    for (let k = 0; k < 2; k++) {
      const response = await as(key, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE });
      expect(response.statusCode, response.body).toBe(202);
      accepted.push(response.json<Job>());
    }
    const refused = await as(key, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE });
    expect(expectRetryLater(refused, 'quota-exceeded').detail).toMatch(/2 jobs queued or running/);
    // Nothing stored for the refused request; nothing accepted dropped.
    const listed = (await as(key, { url: '/v1/jobs' })).json<JobPage>().items.map((job) => job.id);
    expect(listed.sort()).toEqual(accepted.map((job) => job.id).sort());
    // The first (small, its key's only job) waits for a small-job slot, the second by priority.
    const counts = await service.jobService.queueCounts();
    expect(counts.waiting + counts.prioritized).toBeGreaterThanOrEqual(2);

    // Another key has its own slots.
    const other = await service.jobService.keys.create({ name: 'other slots', quotas: { activeJobs: 2 } });
    expect((await as(other, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE })).statusCode).toBe(202);

    // A cancelled job frees its slot.
    expect((await as(key, { method: 'POST', url: `/v1/jobs/${accepted[0].id}/cancel` })).json<Job>().status).toBe('cancelled');
    expect((await as(key, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE })).statusCode).toBe(202);
    expectRetryLater(await as(key, { method: 'POST', url: '/v1/jobs', payload: SMALL_ANALYZE }), 'quota-exceeded');
  });
});

describe('jobs queued or running at once, submitted concurrently over sockets', () => {
  it('admits exactly the limit: each admission no longer prunes the others just admitted, whose documents are not written yet', async () => {
    // A QA pass sent 20 at once with a key limited to 2 and had 5 accepted (11 of 20 at a limit of 3).
    const key = await service.jobService.keys.create({ name: 'racing slots', quotas: { activeJobs: 2 } });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${service.baseUrl}/v1/jobs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(SMALL_ANALYZE),
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 202)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(18);
    expect((await as(key, { url: '/v1/jobs?limit=50' })).json<JobPage>().items).toHaveLength(2);
  });
});

describe('stored bytes', () => {
  it('answers 413 quota-too-large for a job or a matrix that alone exceeds the limit', async () => {
    const key = await service.jobService.keys.create({ name: 'small store', quotas: { storedBytes: 20_000 } });
    const big = await as(key, {
      method: 'POST',
      url: '/v1/jobs',
      payload: { type: 'analyze', matrix: { format: 'dense', data: dense(60) }, partition: { machines: 2 } },
    });
    expect(big.statusCode, big.body).toBe(413);
    expect(big.json<ProblemDetails>().code).toBe('quota-too-large');

    const entries = Array.from({ length: 2000 }, (_, i) => `${i + 1} ${i + 1} 2`).join('\n');
    const upload = await as(key, {
      method: 'POST',
      url: '/v1/matrices',
      payload: `%%MatrixMarket matrix coordinate real general\n2000 2000 2000\n${entries}\n`,
      headers: { 'content-type': 'text/plain' },
    });
    expect(upload.statusCode, upload.body).toBe(413);
    expect(upload.json<ProblemDetails>().code).toBe('quota-too-large');
    expect((await as(key, { url: '/v1/jobs' })).json<JobPage>().items).toEqual([]);
  });

  it('answers 429 quota-exceeded once the stored bytes are used up, and takes data again after a delete', async () => {
    const key = await service.jobService.keys.create({ name: 'filled store', quotas: { storedBytes: 48_000 } });
    const job = { type: 'analyze', matrix: { format: 'dense', data: dense(40) }, partition: { machines: 2 } };
    // Each job counts about 12.8 kB of A plus its document (8 KB and the angles): two fit, the third does not.
    const first = await as(key, { method: 'POST', url: '/v1/jobs', payload: job });
    expect(first.statusCode, first.body).toBe(202);
    expect((await as(key, { method: 'POST', url: '/v1/jobs', payload: job })).statusCode).toBe(202);
    const refused = await as(key, { method: 'POST', url: '/v1/jobs', payload: job });
    expect(expectRetryLater(refused, 'quota-exceeded').detail).toMatch(/stored bytes/);
    const matrix = await as(key, {
      method: 'POST',
      url: '/v1/matrices',
      payload: '%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n',
      headers: { 'content-type': 'text/plain' },
    });
    expect(matrix.statusCode, matrix.body).toBe(201);
    expect((await as(key, { url: '/v1/jobs' })).json<JobPage>().items).toHaveLength(2);

    const firstId = first.json<Job>().id;
    await as(key, { method: 'POST', url: `/v1/jobs/${firstId}/cancel` });
    expect((await as(key, { method: 'DELETE', url: `/v1/jobs/${firstId}` })).statusCode).toBe(204);
    expect((await as(key, { method: 'POST', url: '/v1/jobs', payload: job })).statusCode).toBe(202);
  });
});
