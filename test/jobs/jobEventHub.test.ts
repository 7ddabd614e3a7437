/**
 * JobEventHub on a real Redis: a status change that arrives while a subscription is still reading
 * the job is not lost and not sent before the first status event (the hub buffers no events: it
 * reads the job again once the first status is out).
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { newJobId } from '../../src/jobs/jobId.js';
import { JobEventHub } from '../../src/jobs/service/jobEventHub.js';
import { createSubscriberConnection } from '../../src/jobs/store/redisConnection.js';
import { STATUS_FIELDS } from '../../src/jobs/store/scripts.js';
import type { Job, JobEvent, JobStatus } from '../../src/jobs/types.js';
import { startTestRedis } from '../support/service.js';

let redis: EmbeddedRedis;
let publisher: Redis;

beforeAll(async () => {
  redis = await startTestRedis();
  publisher = new Redis(redis.url);
});

afterAll(async () => {
  publisher?.disconnect();
  await redis?.stop();
});

const CHANNEL = 'test:status';

function jobWith(id: string, status: JobStatus): Job {
  const options = { tolerance: 1e-8, maxIterations: 10, parameters: {} };
  return {
    id,
    type: 'analyze',
    status,
    progress: null,
    createdAt: new Date(0).toISOString(),
    startedAt: null,
    finishedAt: null,
    n: 2,
    m: 2,
    algorithms: [],
    storage: 'dense',
    backend: null,
    options,
    attempts: 0,
    matrix: { format: 'dense', n: 2, nnz: null, sha256: null },
    partition: null,
    labels: {},
  };
}

/** A status-channel message, as the scripts publish it (the STATUS_FIELDS values, false when unset). */
function statusMessage(job: Job): string {
  const fields: Record<string, string> = { id: job.id, type: job.type, status: job.status, createdAt: job.createdAt, n: '2', m: '2' };
  return JSON.stringify(STATUS_FIELDS.map((name) => fields[name] ?? false));
}

describe('JobEventHub.subscribe', () => {
  it('sends a status change that came during the first read after the first status event, once', async () => {
    const id = newJobId();
    let current: JobStatus = 'queued';
    const reads: JobStatus[] = [];
    let releaseFirstRead: () => void = () => undefined;
    const firstReadDone = new Promise<void>((resolve) => (releaseFirstRead = resolve));
    let secondRead: () => void = () => undefined;
    const secondReadStarted = new Promise<void>((resolve) => (secondRead = resolve));
    const readJob = async (jobId: string): Promise<Job> => {
      const snapshot = jobWith(jobId, current);
      reads.push(snapshot.status);
      if (reads.length === 1) await firstReadDone; // the subscription's own read, held back
      if (reads.length === 2) secondRead();
      return snapshot;
    };

    // No periodic re-read during the test: only the subscription itself may catch up.
    const resyncMs = 3_600_000;
    const hub = new JobEventHub(createSubscriberConnection(redis.url, 'test-hub'), CHANNEL, readJob, pino({ level: 'silent' }), resyncMs);
    try {
      expect(await hub.listen(5000)).toBe(true);
      const events: JobEvent[] = [];
      const subscribed = hub.subscribe(id, (event) => events.push(event));

      // The worker starts the job while the subscription still reads it.
      current = 'running';
      await publisher.publish(CHANNEL, statusMessage(jobWith(id, 'running')));
      await secondReadStarted;
      expect(events).toEqual([]);

      releaseFirstRead();
      const unsubscribe = await subscribed;
      while (events.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      unsubscribe();
      const statuses = events.map((event) => (event.event === 'status' ? event.data.status : event.event));
      expect(statuses).toEqual(['queued', 'running']);
    } finally {
      await hub.close();
    }
  });
});
