/**
 * Fairness between API keys (issue 14 §2), with a real Redis and a 2-slot worker: one key holds 200
 * queued solve jobs, then a second key submits one small job; the second key's job starts among
 * the first jobs the worker takes, long before the flood drains. Asserted on the order in which the
 * worker took the jobs from the queue (BullMQ's processedOn, set when a job moves to active; the
 * priority of a job is 1 + its key's pending jobs), not on wall-clock time nor on the job's startedAt
 * (written by the slot's sandboxed child: a slow child start lets the other slot run a few more).
 */
import { Queue } from 'bullmq';
import type { InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApiKey } from '../../src/jobs/keys/apiKey.js';
import type { Job } from '../../src/jobs/types.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { startTestService, type TestService } from '../support/service.js';

const FLOOD = 200;

let service: TestService;
let worker: JobWorker | null = null;

beforeAll(async () => {
  service = await startTestService({ AUTH_MODE: 'keys', RATE_LIMIT_PER_SECOND: 100_000, WORKER_CONCURRENCY: 2 }, { worker: false });
});

afterAll(async () => {
  await worker?.close(5000);
  await service?.close();
});

function as(key: CreatedApiKey, options: InjectOptions) {
  return service.app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${key.key}` } });
}

const SOLVE = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 40, mean: 1, std: 1, seed: 5 },
  partition: { machines: 4 },
  algorithms: ['apc', 'dhbm'],
};

describe('fairness between keys', () => {
  it("starts a second key's job among the first on a 2-slot worker while another key has 200 solve jobs queued", async () => {
    const flooder = await service.jobService.keys.create({ name: 'flooder' });
    const newcomer = await service.jobService.keys.create({ name: 'newcomer' });
    const flood: string[] = [];
    for (let k = 0; k < FLOOD; k++) {
      const response = await as(flooder, {
        method: 'POST',
        url: '/v1/jobs',
        payload: { ...SOLVE, matrix: { ...SOLVE.matrix, seed: k + 1 } },
      });
      expect(response.statusCode, response.body).toBe(202);
      flood.push(response.json<Job>().id);
    }
    const small = await as(newcomer, {
      method: 'POST',
      url: '/v1/jobs',
      payload: { ...SOLVE, matrix: { ...SOLVE.matrix, n: 12 }, partition: { machines: 2 }, algorithms: ['apc'] },
    });
    expect(small.statusCode, small.body).toBe(202);
    const smallId = small.json<Job>().id;

    const started = Date.now();
    worker = await startWorker(service.config, pino({ level: 'silent' }));
    let job: Job;
    for (;;) {
      job = await service.jobService.get(smallId);
      if (job.status === 'succeeded' || job.status === 'failed') break;
      if (Date.now() - started > 120_000) throw new Error(`the newcomer's job is still ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(job.status).toBe('succeeded');
    const startedAt = Date.parse(job.startedAt!);
    const floodJobs = await Promise.all(flood.map((id) => service.jobService.get(id)));
    const firstStart = Math.min(...floodJobs.flatMap((f) => (f.startedAt ? [Date.parse(f.startedAt)] : [])), startedAt);
    console.info(
      `the newcomer's job started ${startedAt - firstStart} ms after the worker's first job ` +
        `(${startedAt - started} ms after the worker was started, its sandboxed processes included)`,
    );

    const connection = new Redis(service.redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(service.config.QUEUE_NAME, { connection, prefix: service.config.KEY_PREFIX });
    try {
      const takenAt = async (id: string) => (await queue.getJob(id))?.processedOn ?? Infinity;
      const newcomerTaken = await takenAt(smallId);
      expect(newcomerTaken).toBeLessThan(Infinity);
      const floodTaken = await Promise.all(flood.map(takenAt));
      // Priority 1 for both keys' first job (FIFO between them), so at most the flooder's first one
      // (and one taken in the same millisecond) left the queue earlier.
      expect(floodTaken.filter((t) => t < newcomerTaken).length).toBeLessThanOrEqual(2);
    } finally {
      await queue.close();
      connection.disconnect();
    }
    // The flood is far from drained.
    expect(floodJobs.filter((f) => f.status === 'queued').length).toBeGreaterThan(FLOOD / 2);
  });
});
