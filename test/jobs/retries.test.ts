/**
 * Infrastructure failures are retried: a sandboxed child killed under a running job (as by the
 * OOM killer) fails the attempt; the document goes back to 'queued' while BullMQ retries with
 * backoff, and ends 'failed' with a 500 problem after the last attempt (JOB_ATTEMPTS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { childPids } from '../support/processes.js';
import { createJob, getJob, startTestService, waitForJob, type TestService } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ JOB_ATTEMPTS: 2, JOB_BACKOFF_MS: 200, WORKER_CONCURRENCY: 1 });
});

afterAll(async () => {
  await service?.close();
});

/** The BullMQ sandbox children of this process (forked from bullmq's child main file). */
function sandboxChildren(): number[] {
  return childPids(process.pid, 'bullmq');
}

const solving = (attempt: number) => (job: Job) => job.status === 'running' && job.attempts === attempt && job.progress?.phase === 'solve';

describe('a job whose worker child dies', () => {
  it('is retried, and fails with a 500 problem after the last attempt', async () => {
    const { job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 5 },
      partition: { machines: 4 },
      algorithms: ['dgd'],
      options: { tolerance: 1e-15, maxIterations: 1_000_000, stopOnStagnation: false },
    });

    await waitForJob(service.app, job.id, { until: solving(1) });
    for (const pid of sandboxChildren()) process.kill(pid, 'SIGKILL');
    const retrying = await waitForJob(service.app, job.id, { until: (j) => j.attempts === 2 || j.status !== 'running' });
    expect(['queued', 'running']).toContain(retrying.status);

    await waitForJob(service.app, job.id, { until: solving(2) });
    for (const pid of sandboxChildren()) process.kill(pid, 'SIGKILL');
    const failed = await waitForJob(service.app, job.id);
    expect(failed.status).toBe('failed');
    expect(failed.attempts).toBe(2);
    expect(failed.error).toMatchObject({ status: 500, code: 'internal-error', type: '/problems/internal-error' });
    expect(failed.error!.detail).toMatch(/2 attempt/);
    expect(failed.error!.detail).not.toMatch(/SIGKILL|exit code/); // no internals
    // But what happened: its process was stopped from outside (it read "an internal error").
    expect(failed.error!.detail).toMatch(/on the last one its process was stopped from outside the service/);

    // The worker replaced its child and goes on.
    const next = await createJob(service.app, {
      type: 'analyze',
      matrix: {
        format: 'dense',
        data: [
          [1, 0],
          [0, 2],
        ],
      },
      partition: { machines: 2 },
    });
    expect((await waitForJob(service.app, next.job.id)).status).toBe('succeeded');
    expect((await getJob(service.app, job.id)).status).toBe('failed');
  });
});
