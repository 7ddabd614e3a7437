/**
 * Event streams and cancellation, over a real socket. One worker slot (WORKER_CONCURRENCY=1), so
 * a job that succeeds after a cancel proves the cancelled job freed the worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { JobSchema } from '../../src/api/schemas/job.js';
import { JobKeys } from '../../src/jobs/store/keys.js';
import type { Job, JobProgress } from '../../src/jobs/types.js';
import { openEventStream, type SseEvent } from '../support/sse.js';
import { createJob, getJob, runJob, startTestService, waitForJob, type TestService } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ WORKER_CONCURRENCY: 1, PROGRESS_INTERVAL_MS: 100 }, { listen: true });
});

afterAll(async () => {
  await service?.close();
});

/** Gradient descent on a Gaussian matrix converges very slowly: with a huge iteration limit it runs until cancelled. */
const longSolve = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 11 },
  partition: { machines: 5 },
  algorithms: ['apc', 'dgd'],
  options: { tolerance: 1e-14, maxIterations: 1_000_000, stopOnStagnation: false },
};

const smallJob = {
  type: 'analyze',
  matrix: {
    format: 'dense',
    data: [
      [3, 1],
      [1, 2],
    ],
  },
  partition: { machines: 2 },
};

const isStatus = (status: string) => (event: SseEvent) => event.event === 'status' && (event.data as { status: string }).status === status;

async function cancel(id: string): Promise<Job> {
  const response = await service.app.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel` });
  expect(response.statusCode).toBe(200);
  return response.json<Job>();
}

describe('GET /v1/jobs/{id}/events', () => {
  it('streams the current status, progress while running, and the final status, then closes', async () => {
    const { job } = await createJob(service.app, {
      ...longSolve,
      algorithms: ['dgd'],
      // Long enough (>= 0.3 s on the native row kernels) for several 100 ms progress ticks.
      options: { tolerance: 1e-14, maxIterations: 60_000, stopOnStagnation: false },
    });
    const stream = await openEventStream(`${service.baseUrl}/v1/jobs/${job.id}/events`);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);

    const final = await stream.waitFor(isStatus('succeeded'), 60_000);
    await stream.ended;
    const first = stream.events[0];
    expect(first.event).toBe('status');
    expect(['queued', 'running']).toContain((first.data as { status: string }).status);
    expect((final.data as { job: Job }).job.result!.runs.dgd!.iterations).toBe(60_000);
    // Built from the status message (no read): the job as GET sends it.
    expect((final.data as { job: Job }).job).toEqual(await getJob(service.app, job.id));

    const progress = stream.events.filter((event) => event.event === 'progress').map((event) => event.data as JobProgress);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    const solving = progress.filter((p) => p.phase === 'solve');
    expect(solving.length).toBeGreaterThanOrEqual(1);
    expect(solving[0]).toMatchObject({ algorithm: 'dgd' });
    expect(typeof solving[0].iteration).toBe('number');
    expect(typeof solving[0].updatedAt).toBe('string');
    expect(stream.events.at(-1)).toBe(final);
  });

  it('sends one status event and closes for a finished job', async () => {
    const job = await runJob(service.app, smallJob);
    const stream = await openEventStream(`${service.baseUrl}/v1/jobs/${job.id}/events`);
    await stream.ended;
    expect(stream.events).toHaveLength(1);
    expect(stream.events[0]).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    // The job as GET sends it, its result (stored as text, spliced in) included, in the documented shape.
    const streamed = (stream.events[0].data as { job: Job }).job;
    expect(streamed).toEqual(await getJob(service.app, job.id));
    expect(JobSchema.parse(streamed)).toEqual(streamed);
    expect(streamed.result!.analysis!.n).toBe(2);
  });

  it('ends open streams when the app closes (graceful shutdown does not hang)', async () => {
    const { buildApp } = await import('../../src/api/app.js');
    const other = await buildApp({ config: service.config, jobService: service.jobService });
    const url = await other.listen({ host: '127.0.0.1', port: 0 });
    const { job } = await createJob(service.app, longSolve);
    const stream = await openEventStream(`${url}/v1/jobs/${job.id}/events`);
    await stream.waitFor((event) => event.event === 'status');
    await other.close();
    await stream.ended;
    await cancel(job.id);
    expect((await waitForJob(service.app, job.id)).status).toBe('cancelled');
  });

  it('answers 404 for an unknown job', async () => {
    const response = await fetch(`${service.baseUrl}/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/events`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

describe('cancellation', () => {
  it('stops a running solve within a time slice, keeps the runs done so far without the analysis, and frees the worker', async () => {
    const { job } = await createJob(service.app, longSolve);
    const stream = await openEventStream(`${service.baseUrl}/v1/jobs/${job.id}/events`);
    await stream.waitFor((event) => event.event === 'progress' && (event.data as JobProgress).algorithm === 'dgd', 60_000);

    const deleteRunning = await service.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}` });
    expect(deleteRunning.statusCode).toBe(409);
    expect(deleteRunning.json<{ code: string }>().code).toBe('job-not-finished');

    const answer = await cancel(job.id);
    expect(['running', 'cancelled']).toContain(answer.status);
    await stream.waitFor(isStatus('cancelled'), 30_000);
    await stream.ended;

    // Read back over the socket, as a client does.
    const read = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${service.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      return (await response.json()) as T;
    };
    const cancelled = await read<Job>(`/v1/jobs/${job.id}`);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.error).toBeUndefined();
    // The runs come before the rest of the analysis: cancelled during them, the job says its analysis
    // was not completed and reports the spectral data the runs used.
    const result = cancelled.result!;
    expect(result.analysisCompleted).toBe(false);
    expect(result.analysis).toBeUndefined();
    expect(result.spectral!.L).toBeGreaterThan(result.spectral!.mu);
    expect(result.spectral!.lambdaMaxS).toBeGreaterThanOrEqual(result.spectral!.lambdaMinS);
    expect(result.runs.apc!.status).toBe('converged');
    const dgd = result.runs.dgd!;
    expect(dgd.status).toBe('cancelled');
    expect(dgd.iterations).toBeLessThan(1_000_000);
    expect(dgd.theoreticalRate).toBeGreaterThan(0);
    expect(cancelled.summary).toEqual({
      converged: ['apc'],
      notConverged: [{ algorithm: 'dgd', status: 'cancelled', stopReason: dgd.stopReason }],
    });
    const trace = await read<{ totalIterations: number }>(`/v1/jobs/${job.id}/runs/dgd/trace`);
    expect(trace.totalIterations).toBe(dgd.iterations);
    for (const algorithm of ['apc', 'dgd']) {
      const solution = await read<{ x: number[] }>(`/v1/jobs/${job.id}/runs/${algorithm}/solution`);
      expect(solution.x).toHaveLength(100);
    }

    // Cancelling again returns the job unchanged; a cancelled job can be deleted.
    expect((await cancel(job.id)).status).toBe('cancelled');

    // The single worker slot is free at once for the next job.
    const next = await runJob(service.app, smallJob, 30_000);
    expect(next.status).toBe('succeeded');

    expect((await service.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}` })).statusCode).toBe(204);
  });

  it('stops a running job whose cancel message never reached the worker, at its next progress report', async () => {
    const { job } = await createJob(service.app, longSolve);
    await waitForJob(service.app, job.id, { until: (current) => current.status === 'running' });
    // What POST /v1/jobs/:id/cancel stores for a running job, without the message on the cancel channel
    // (Redis pub/sub delivers at most once: a worker whose subscription is reconnecting misses it).
    const keys = new JobKeys(service.config.KEY_PREFIX, service.config.QUEUE_NAME);
    const redis = new Redis(service.redis.url);
    try {
      expect(await redis.hget(keys.doc(job.id), 'status')).toBe('running');
      await redis.hset(keys.doc(job.id), 'cancelRequested', '1');
    } finally {
      redis.disconnect();
    }
    const ended = await waitForJob(service.app, job.id, { timeoutMs: 30_000 });
    expect(ended.status).toBe('cancelled');
    expect((await runJob(service.app, smallJob, 30_000)).status).toBe('succeeded');
  });

  it('cancels a queued job at once', async () => {
    const { job: running } = await createJob(service.app, longSolve);
    await waitForJob(service.app, running.id, { until: (job) => job.status === 'running' });
    const { job: queued } = await createJob(service.app, smallJob);

    const deleteQueued = await service.app.inject({ method: 'DELETE', url: `/v1/jobs/${queued.id}` });
    expect(deleteQueued.statusCode).toBe(409);

    const answer = await cancel(queued.id);
    expect(answer.status).toBe('cancelled');
    expect(answer.finishedAt).not.toBeNull();
    expect(answer.startedAt).toBeNull();

    await cancel(running.id);
    expect((await waitForJob(service.app, running.id)).status).toBe('cancelled');
    // The queued job never ran.
    const after = await getJob(service.app, queued.id);
    expect(after.status).toBe('cancelled');
    expect(after.attempts).toBe(0);
    expect((await runJob(service.app, smallJob, 30_000)).status).toBe('succeeded');
  });
});
