/**
 * JobEventHub on a real Redis: a status change that arrives while a subscription is still reading
 * the job is not lost and not sent before the first status event (the hub buffers no events: it
 * reads the job again once the first status is out); later statuses are built from the messages.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { JobNotFoundError } from '../../src/jobs/errors.js';
import { newJobId } from '../../src/jobs/jobId.js';
import { JobEventHub } from '../../src/jobs/service/jobEventHub.js';
import { createSubscriberConnection } from '../../src/jobs/store/redisConnection.js';
import { STATUS_FIELDS } from '../../src/jobs/store/scripts.js';
import type { Job, JobEvent, JobStatus, JobView } from '../../src/jobs/types.js';
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
function statusMessage(job: Job, more: Record<string, string> = {}): string {
  const fields: Record<string, string> = {
    id: job.id,
    type: job.type,
    status: job.status,
    createdAt: job.createdAt,
    n: '2',
    m: '2',
    ...more,
  };
  return JSON.stringify(STATUS_FIELDS.map((name) => fields[name] ?? false));
}

/** The status message of job `id` succeeded, its (long) result left out as the scripts leave it: true in its place. */
async function publishSucceededWithoutResult(id: string): Promise<void> {
  const values = JSON.parse(statusMessage(jobWith(id, 'succeeded'))) as unknown[];
  values[STATUS_FIELDS.indexOf('result')] = true;
  await publisher.publish(CHANNEL, JSON.stringify(values));
}

/** A hub on CHANNEL reading jobs with `readJob`, subscribed (no periodic re-read by default); close it when done. */
async function listeningHub(readJob: (id: string) => Promise<JobView>, resyncMs = 3_600_000): Promise<JobEventHub> {
  const hub = new JobEventHub(createSubscriberConnection(redis.url, 'test-hub'), CHANNEL, readJob, pino({ level: 'silent' }), resyncMs);
  const listening = await hub.listen(5000);
  if (!listening) await hub.close();
  expect(listening).toBe(true);
  return hub;
}

describe('JobEventHub.subscribe', () => {
  it('sends a status change that came during the first read after the first status event, once', async () => {
    const id = newJobId();
    let current: JobStatus = 'queued';
    const reads: JobStatus[] = [];
    let releaseFirstRead: () => void = () => undefined;
    const firstReadDone = new Promise<void>((resolve) => (releaseFirstRead = resolve));
    const readJob = async (jobId: string): Promise<JobView> => {
      const snapshot = jobWith(jobId, current);
      reads.push(snapshot.status);
      if (reads.length === 1) await firstReadDone; // the subscription's own read, held back
      return { job: snapshot };
    };

    // No periodic re-read during the test: only the subscription itself may catch up.
    const resyncMs = 3_600_000;
    const hub = await listeningHub(readJob, resyncMs);
    try {
      const events: JobEvent[] = [];
      const subscribed = hub.subscribe(id, (event) => events.push(event));

      // The worker starts the job while the subscription still reads it.
      current = 'running';
      expect(await publisher.publish(CHANNEL, statusMessage(jobWith(id, 'running')))).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 100)); // the hub has the message
      expect(events).toEqual([]);

      releaseFirstRead();
      const unsubscribe = await subscribed;
      while (events.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      unsubscribe();
      const statuses = events.map((event) => (event.event === 'status' ? event.data.status : event.event));
      expect(statuses).toEqual(['queued', 'running']);
      expect(reads).toEqual(['queued', 'running']);
    } finally {
      await hub.close();
    }
  });

  it('reads the job for its subscribers when the status message left its result out (true in its place)', async () => {
    const id = newJobId();
    const stored = JSON.stringify({ analysisCompleted: true, runs: {} });
    const reads: string[] = [];
    const readJob = (jobId: string): Promise<JobView> => {
      reads.push(jobId);
      const finished = reads.length > 1;
      return Promise.resolve(finished ? { job: jobWith(jobId, 'succeeded'), resultJson: stored } : { job: jobWith(jobId, 'running') });
    };
    const hub = await listeningHub(readJob);
    try {
      const events: JobEvent[] = [];
      const finished: string[] = [];
      hub.onFinished((summary) => finished.push(`${summary.id} ${summary.status}`));
      const unsubscribe = await hub.subscribe(id, (event) => events.push(event));
      await publishSucceededWithoutResult(id);
      while (events.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      unsubscribe();
      expect(reads).toEqual([id, id]);
      expect(events[1]).toEqual({ event: 'status', data: { status: 'succeeded', job: jobWith(id, 'succeeded') }, resultJson: stored });
      // Listeners of finished jobs have its summary from the message alone.
      expect(finished).toEqual([`${id} succeeded`]);
    } finally {
      await hub.close();
    }
  });

  it('sends the final status from the message when a job whose message left its result out is gone before the read', async () => {
    const id = newJobId();
    let reads = 0;
    const readJob = (jobId: string): Promise<JobView> => {
      reads += 1;
      // Deleted right after it finished: only the subscription's own read finds it.
      return reads === 1 ? Promise.resolve({ job: jobWith(jobId, 'running') }) : Promise.reject(new JobNotFoundError(jobId));
    };
    const hub = await listeningHub(readJob);
    try {
      const events: JobEvent[] = [];
      const unsubscribe = await hub.subscribe(id, (event) => events.push(event));
      await publishSucceededWithoutResult(id);
      while (events.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      unsubscribe();
      expect(reads).toBe(2);
      // The job as the message had it, without the result it left out.
      expect(events[1]).toMatchObject({ event: 'status', data: { status: 'succeeded', job: { id, status: 'succeeded' } } });
      expect(events[1].event === 'status' && events[1].data.job.result).toBeUndefined();
    } finally {
      await hub.close();
    }
  });

  it('sends later statuses from the status messages, the whole job, without reading it', async () => {
    const id = newJobId();
    let reads = 0;
    const readJob = (jobId: string): Promise<JobView> => {
      reads += 1;
      return Promise.resolve({ job: jobWith(jobId, 'queued') });
    };
    const hub = await listeningHub(readJob);
    try {
      const events: JobEvent[] = [];
      const unsubscribe = await hub.subscribe(id, (event) => events.push(event));
      const result = { analysisCompleted: false, runs: [] };
      const progress = { phase: 'done', fraction: 1, updatedAt: new Date(1).toISOString() };
      await publisher.publish(
        CHANNEL,
        statusMessage(jobWith(id, 'running'), { startedAt: new Date(1).toISOString(), backend: 'typescript', attempts: '1' }),
      );
      await publisher.publish(
        CHANNEL,
        statusMessage(jobWith(id, 'succeeded'), {
          finishedAt: new Date(2).toISOString(),
          result: JSON.stringify(result),
          progress: JSON.stringify(progress),
          notifyUrl: 'https://example.test/hook',
        }),
      );
      while (events.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      unsubscribe();
      expect(reads).toBe(1);
      const [, running, succeeded] = events.map((event) => (event.event === 'status' ? event.data.job : null));
      expect(running).toMatchObject({ status: 'running', backend: 'typescript', attempts: 1, startedAt: new Date(1).toISOString() });
      expect(succeeded).toMatchObject({
        status: 'succeeded',
        finishedAt: new Date(2).toISOString(),
        progress,
        notify: { url: 'https://example.test/hook' },
        deliveries: [],
      });
      // The result comes as the text stored, beside the job (the stream writes it in as it is).
      expect(succeeded!.result).toBeUndefined();
      expect(events[2]).toMatchObject({ event: 'status', resultJson: JSON.stringify(result) });
    } finally {
      await hub.close();
    }
  });
});
