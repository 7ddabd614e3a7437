/**
 * Fairness between API keys (src/jobs/apiKeys/fairShare.ts), with a real
 * Redis and the default worker (2 regular slots, 1 small-job slot):
 *  - one key floods the worker with long solves (n = 300, six algorithms, 200,000
 *    iterations) and holds both regular slots; another key's small analyze job starts within 5 s;
 *  - one key alone gets both regular slots;
 *  - while another key's job waits, a key holds at most one of the two regular slots (its job
 *    taken by the other slot goes back behind the other key's, no attempt counted);
 *  - the priorities still order what waits: a second key's job (predicted long) starts among the
 *    first while a key has 200 solve jobs queued.
 * Start order is read from BullMQ's processedOn (when a job moves to active) where the document's
 * startedAt (written by the slot's sandboxed child) would depend on how fast each child starts.
 */
import { Queue } from 'bullmq';
import type { InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import type { CreatedApiKey } from '../../src/jobs/apiKeys/apiKey.js';
import { jobQueueNames } from '../../src/jobs/queuedJob.js';
import type { Job } from '../../src/jobs/types.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { startTestRedis, startTestService, type TestService } from '../support/service.js';

let redis: EmbeddedRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});

afterAll(async () => {
  await redis?.stop();
});

/** A service in keys mode on the shared Redis, under its own key prefix. */
function keyedService(prefix: string, worker: boolean, overrides: Partial<Config> = {}): Promise<TestService> {
  return startTestService({ AUTH_MODE: 'keys', RATE_LIMIT_PER_SECOND: 100_000, KEY_PREFIX: prefix, ...overrides }, { worker, redis });
}

function as(service: TestService, key: CreatedApiKey, options: InjectOptions) {
  return service.app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${key.key}` } });
}

async function submit(service: TestService, key: CreatedApiKey, payload: object): Promise<string> {
  const response = await as(service, key, { method: 'POST', url: '/v1/jobs', payload });
  expect(response.statusCode, response.body).toBe(202);
  return response.json<Job>().id;
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const jobsOf = (service: TestService, ids: string[]) => Promise.all(ids.map((id) => service.jobService.get(id)));
const running = (jobs: Job[]) => jobs.filter((job) => job.status === 'running');

/** Cancel (queued or running) every job of `ids`, then wait until none runs. */
async function cancelAll(service: TestService, ids: string[]): Promise<void> {
  for (const id of ids) await service.jobService.cancel(id).catch(() => undefined);
  await until(
    'the cancelled jobs to stop',
    () => jobsOf(service, ids),
    (jobs) => running(jobs).length === 0,
  );
}

/**
 * Long solves that once kept another key's tiny job waiting 62 s: n = 300, six algorithms, 200,000
 * iterations (about a minute each on two cores).
 */
const LONG_SOLVE = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 300, mean: 1, std: 1, seed: 1 },
  partition: { machines: 10 },
  algorithms: ['apc', 'dhbm', 'dgd', 'dnag', 'cimmino', 'mlm'],
  options: { maxIterations: 200_000, tolerance: 1e-300, stopOnStagnation: false },
};

const longSolve = (seed: number) => ({ ...LONG_SOLVE, matrix: { ...LONG_SOLVE.matrix, seed } });

/** A tiny analyze job: predicted small (src/jobs/apiKeys/smallJobs.ts). */
const TINY_ANALYZE = {
  type: 'analyze',
  matrix: { format: 'generator', generator: 'gaussian', n: 12, mean: 1, std: 1, seed: 3 },
  partition: { machines: 2 },
};

describe('a flood of long jobs', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await keyedService('flood', true);
  });

  afterAll(async () => {
    await service?.close();
  });

  it("starts another key's small job within 5 s while one key's 60 long solves hold both regular slots", async () => {
    const flooder = await service.jobService.keys.create({ name: 'flooder' });
    const newcomer = await service.jobService.keys.create({ name: 'newcomer' });
    const flood: string[] = [];
    for (let k = 0; k < 60; k++) flood.push(await submit(service, flooder, longSolve(k + 1)));
    try {
      // Alone, the flooder gets both regular slots.
      await until(
        "two of the flooder's jobs running",
        () => jobsOf(service, flood),
        (jobs) => running(jobs).length === 2,
      );

      const smallId = await submit(service, newcomer, TINY_ANALYZE);
      const small = await until(
        "the newcomer's job to finish",
        () => service.jobService.get(smallId),
        (job) => job.status === 'succeeded' || job.status === 'failed',
      );
      expect(small.status).toBe('succeeded');
      const latency = Date.parse(small.startedAt!) - Date.parse(small.createdAt);
      console.info(`the newcomer's small job started ${latency} ms after it was created, with the flood holding both regular slots`);
      expect(latency).toBeLessThan(5000);
      // The flood was running all along: its first two jobs still are.
      const floodNow = await jobsOf(service, flood);
      expect(running(floodNow).length).toBe(2);
      expect(floodNow.filter((job) => job.status === 'queued').length).toBe(58);
    } finally {
      await cancelAll(service, flood);
    }
  });
});

describe('one key alone', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await keyedService('alone', true);
  });

  afterAll(async () => {
    await service?.close();
  });

  it('gets both regular slots', async () => {
    const alone = await service.jobService.keys.create({ name: 'alone' });
    const ids: string[] = [];
    for (let k = 0; k < 4; k++) ids.push(await submit(service, alone, longSolve(k + 1)));
    try {
      const jobs = await until(
        'two of its jobs running at once',
        () => jobsOf(service, ids),
        (current) => running(current).length === 2,
      );
      expect(running(jobs).map((job) => job.id)).toEqual(ids.slice(0, 2));
    } finally {
      await cancelAll(service, ids);
    }
  });
});

/** BullMQ's processedOn of a job (when a worker last took it), from whichever of the jobs' queues holds it. */
async function takenAt(service: TestService, ids: string[]): Promise<Map<string, number>> {
  const connection = new Redis(service.redis.url, { maxRetriesPerRequest: null });
  const names = jobQueueNames(service.config);
  const queues = [names.main, names.small].map((name) => new Queue(name, { connection, prefix: service.config.KEY_PREFIX }));
  try {
    const taken = new Map<string, number>();
    for (const id of ids) {
      for (const queue of queues) {
        const processedOn = (await queue.getJob(id))?.processedOn;
        if (processedOn !== undefined) taken.set(id, processedOn);
      }
    }
    return taken;
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    connection.disconnect();
  }
}

describe('the cap while another key waits', () => {
  let service: TestService;
  let worker: JobWorker | null = null;

  beforeAll(async () => {
    service = await keyedService('cap', false);
  });

  afterAll(async () => {
    await worker?.close(5000);
    await service?.close();
  });

  it('lets a key hold one of the two regular slots while another key waits, whatever the priorities', async () => {
    const early = await service.jobService.keys.create({ name: 'early' });
    const late = await service.jobService.keys.create({ name: 'late' });
    // About 2 s each, predicted long (not for the small-job slots).
    const solve = (seed: number) => ({
      ...longSolve(seed),
      options: { maxIterations: 10_000, tolerance: 1e-300, stopOnStagnation: false },
    });
    // The early key's jobs get priorities 1..6; its first four end (cancelled) before any worker
    // runs, leaving two queued with priorities 5 and 6...
    const earlyIds: string[] = [];
    for (let k = 0; k < 6; k++) earlyIds.push(await submit(service, early, solve(k + 1)));
    for (const id of earlyIds.slice(0, 4)) expect((await service.jobService.cancel(id)).job.status).toBe('cancelled');
    // ...so the late key's three (priorities 1..3) come first in the queue's order.
    const lateIds: string[] = [];
    for (let k = 0; k < 3; k++) lateIds.push(await submit(service, late, solve(k + 11)));
    const ids = [...earlyIds.slice(4), ...lateIds];

    worker = await startWorker(service.config, pino({ level: 'silent' }));
    const jobs = await until(
      'every job to finish',
      () => jobsOf(service, ids),
      (current) => current.every((job) => job.status === 'succeeded' || job.status === 'failed'),
      120_000,
    );
    expect(jobs.map((job) => job.status)).toEqual(ids.map(() => 'succeeded'));
    // Put back without counting an attempt: each ran once.
    expect(jobs.map((job) => job.attempts)).toEqual(ids.map(() => 1));

    const taken = await takenAt(service, ids);
    const order = [...ids].sort((a, b) => taken.get(a)! - taken.get(b)!);
    const owner = (id: string) => (earlyIds.includes(id) ? 'early' : 'late');
    // By priority alone the late key would have taken both slots (1, 2) while the early key's jobs waited.
    expect(order.slice(0, 2).map(owner).sort()).toEqual(['early', 'late']);
    // Each key's jobs in their own order.
    expect(order.filter((id) => owner(id) === 'late')).toEqual(lateIds);
    expect(order.filter((id) => owner(id) === 'early')).toEqual(earlyIds.slice(4));
  }, 150_000);
});

describe('priorities order what waits', () => {
  let service: TestService;
  let worker: JobWorker | null = null;

  beforeAll(async () => {
    service = await keyedService('turns', false);
  });

  afterAll(async () => {
    await worker?.close(5000);
    await service?.close();
  });

  const SOLVE = {
    type: 'solve',
    matrix: { format: 'generator', generator: 'gaussian', n: 40, mean: 1, std: 1, seed: 5 },
    partition: { machines: 4 },
    algorithms: ['apc', 'dhbm'],
  };

  it("starts a second key's job among the first on a 2-slot worker while another key has 200 solve jobs queued", async () => {
    const flooder = await service.jobService.keys.create({ name: 'flooder' });
    const newcomer = await service.jobService.keys.create({ name: 'newcomer' });
    const flood: string[] = [];
    for (let k = 0; k < 200; k++) flood.push(await submit(service, flooder, { ...SOLVE, matrix: { ...SOLVE.matrix, seed: k + 1 } }));
    // Predicted long (a million iterations at most), so queued by priority with the flood; it converges in far fewer.
    const newcomerId = await submit(service, newcomer, { ...SOLVE, algorithms: ['apc'], options: { maxIterations: 1_000_000 } });

    const started = Date.now();
    worker = await startWorker(service.config, pino({ level: 'silent' }));
    const job = await until(
      "the newcomer's job to finish",
      () => service.jobService.get(newcomerId),
      (current) => current.status === 'succeeded' || current.status === 'failed',
      120_000,
    );
    expect(job.status).toBe('succeeded');
    console.info(`the newcomer's job started ${Date.parse(job.startedAt!) - started} ms after the worker was started`);

    const taken = await takenAt(service, [newcomerId, ...flood]);
    const newcomerTaken = taken.get(newcomerId)!;
    expect(newcomerTaken).toBeDefined();
    // Priority 1 for both keys' first job (FIFO between them), so at most the flooder's first one
    // (and one taken in the same millisecond) left the queue earlier; the flooder's first job, small,
    // went to the small-job slot (its key had nothing else pending), which has a queue of its own.
    expect(flood.slice(1).filter((id) => (taken.get(id) ?? Infinity) < newcomerTaken).length).toBeLessThanOrEqual(2);
    // The flood is far from drained.
    const floodJobs = await jobsOf(service, flood);
    expect(floodJobs.filter((f) => f.status === 'queued').length).toBeGreaterThan(100);
  }, 150_000);
});
