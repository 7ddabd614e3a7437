/**
 * The time limit of a sandboxed attempt (src/jobs/limitedWorker.ts) counts its computation: once the job's process
 * reports it computed (src/jobs/attemptComputed.ts), writing its outcome may take longer than JOB_TIMEOUT_MS (a Redis
 * stalled past the limit made a job computed in 1 s end failed time-limit, found by a reliability QA pass); a process
 * that has not computed by then is stopped as before. A real Redis and BullMQ's sandbox, with a fixture processor.
 */
import { Queue, QueueEvents, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { LimitedWorker, type LimitBreach } from '../../src/jobs/limitedWorker.js';
import { bullmqConnectionOptions } from '../../src/jobs/store/redisConnection.js';
import { sandboxedProcessor } from '../../src/jobs/sandboxChild.js';
import { startTestRedis } from '../support/service.js';

type Data = { computeMs: number; writeMs: number; report: boolean };

let redis: EmbeddedRedis;
let queue: Queue<Data>;
let events: QueueEvents;
let worker: LimitedWorker<Data, string>;
const breaches: { id: string; breach: LimitBreach }[] = [];
const NAME = 'limited-worker-test';

beforeAll(async () => {
  redis = await startTestRedis();
  const connection = bullmqConnectionOptions(redis.url, 'limited-worker-test');
  queue = new Queue<Data>(NAME, { connection });
  events = new QueueEvents(NAME, { connection });
  await events.waitUntilReady();
  const { file, execArgv } = sandboxedProcessor(new URL('./limitedWorkerFixture', import.meta.url));
  worker = new LimitedWorker<Data, string>(
    NAME,
    file,
    { connection, concurrency: 1, useWorkerThreads: false, workerForkOptions: { execArgv } },
    { timeoutMs: 1500, memoryBytes: 2 ** 31 },
    (job: Job<Data>, breach) => {
      breaches.push({ id: job.id!, breach });
      return Promise.resolve();
    },
  );
  await worker.waitUntilReady();
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await events?.close();
  await queue?.close();
  await redis?.stop();
});

async function outcome(data: Data): Promise<{ id: string; result: string | null; failure: string | null }> {
  const job = await queue.add('attempt', data, { attempts: 1 });
  try {
    return { id: job.id!, result: (await job.waitUntilFinished(events, 30_000)) as string, failure: null };
  } catch (error) {
    return { id: job.id!, result: null, failure: (error as Error).message };
  }
}

describe('JOB_TIMEOUT_MS counts the computation', () => {
  it('an attempt that computed in time and then writes past the limit completes', async () => {
    const { id, result } = await outcome({ computeMs: 200, writeMs: 3000, report: true });
    expect(result).toBe('written');
    expect(breaches.filter((entry) => entry.id === id)).toEqual([]);
  }, 60_000);

  it('one that has not reported its computation done by the limit is stopped with a time-limit', async () => {
    const { id, result, failure } = await outcome({ computeMs: 200, writeMs: 3000, report: false });
    expect(result).toBeNull();
    expect(failure).toMatch(/JOB_TIMEOUT_MS/);
    expect(breaches.filter((entry) => entry.id === id).map((entry) => entry.breach.kind)).toEqual(['time-limit']);
  }, 60_000);
});
