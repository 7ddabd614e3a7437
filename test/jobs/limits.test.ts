/**
 * Per-job limits (src/jobs/limitedWorker.ts), with a real Redis and the sandboxed worker of
 * `npm start`: a job past JOB_TIMEOUT_MS ends `failed` with a `time-limit` problem, a job whose
 * process grows past JOB_MEMORY_LIMIT_MB ends `failed` with a `memory-limit` problem; in both cases
 * its child process is killed (the slot is freed even if the work would not yield) and the same
 * worker then runs the next job. A solve stopped in its runs keeps those its last checkpoint held.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/types.js';
import { childPids, commandLine, isAlive, residentMemory } from '../support/processes.js';
import { createJob, runJob, startTestService, waitForJob, type TestService } from '../support/service.js';

let service: TestService | null = null;

afterEach(async () => {
  await service?.close();
  service = null;
});

/** The sandboxed children of this process (BullMQ forks its main.js for each). */
function sandboxChildren(): number[] {
  return childPids(process.pid, 'bullmq');
}

const SMALL_ANALYSIS = {
  type: 'analyze',
  matrix: { format: 'generator', generator: 'gaussian', n: 20, seed: 3 },
  partition: { machines: 2 },
};

async function expectNextJobSucceeds(app: TestService['app']): Promise<void> {
  const next = await runJob(app, SMALL_ANALYSIS, 60_000);
  expect(next.status, JSON.stringify(next.error)).toBe('succeeded');
}

describe('JOB_TIMEOUT_MS', () => {
  it('fails a job that runs too long with a time-limit problem, kills its process, and the worker goes on', async () => {
    service = await startTestService({ JOB_TIMEOUT_MS: 10_000, WORKER_CONCURRENCY: 1, JOB_ATTEMPTS: 3 });
    const { response, job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 400, seed: 5 },
      partition: { machines: 4 },
      algorithms: ['dgd'],
      // Minutes of iterations (never converging at 1e-16): the time limit ends it.
      options: { tolerance: 1e-16, maxIterations: 1_000_000, stopOnStagnation: false },
    });
    expect(response.statusCode).toBe(202);
    const running = await waitForJob(service.app, job.id, { until: (j: Job) => j.status === 'running' });
    expect(running.status).toBe('running');
    const children = sandboxChildren();
    expect(children.length).toBe(1);
    // The job's process: V8's heap stops at the job's ceiling, and it can collect where the advice lets go of its
    // candidate systems (computeJob's giveMemoryBack; without --expose-gc it would only trim the C heap).
    const args = commandLine(children[0]);
    expect(args).toContain(`--max-old-space-size=${service.config.JOB_MEMORY_LIMIT_MB}`);
    expect(args).toContain('--expose-gc');
    // Small jobs one after another do not mark the whole heap every few dozen jobs (worker.ts, V8's heap growth).
    expect(args).toContain('--heap-growing-percent=200');

    const failed = await waitForJob(service.app, job.id, { timeoutMs: 60_000 });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('time-limit');
    expect(failed.error?.type).toBe('/problems/time-limit');
    expect(failed.error?.detail).toContain('JOB_TIMEOUT_MS');
    expect(failed.error?.instance).toBe(`/v1/jobs/${job.id}`);
    // Not retried: one attempt, whatever JOB_ATTEMPTS says.
    expect(failed.attempts).toBe(1);
    const deadline = Date.now() + 10_000;
    while (children.some(isAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(children.filter(isAlive)).toEqual([]);

    await expectNextJobSucceeds(service.app);
    const after = await waitForJob(service.app, job.id);
    expect(after.error?.code).toBe('time-limit'); // the late outcome of the killed attempt changed nothing
  });
  it('a solve stopped in its runs keeps the runs its last checkpoint held, without the analysis', async () => {
    service = await startTestService({ JOB_TIMEOUT_MS: 6000, WORKER_CONCURRENCY: 1, CHECKPOINT_INTERVAL_MS: 200 });
    const { job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 11 },
      partition: { machines: 5 },
      // APC converges in a moment; gradient descent is far from 1e-12 when the time limit ends it.
      algorithms: ['apc', 'dgd'],
      options: { tolerance: 1e-12, maxIterations: 1_000_000, stopOnStagnation: false },
    });
    const failed = await waitForJob(service.app, job.id, { timeoutMs: 60_000 });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('time-limit');
    const result = failed.result!;
    expect(result.analysisCompleted).toBe(false);
    expect(result.analysis).toBeUndefined();
    expect(result.spectral!.L).toBeGreaterThan(0);
    // APC finished before the limit; DGD was under way (its snapshot is no finished run).
    expect(Object.keys(result.runs)).toEqual(['apc']);
    expect(result.runs.apc!.status).toBe('converged');
    expect(failed.summary).toEqual({ converged: ['apc'], notConverged: [] });
    const solution = await service.app.inject({ url: `/v1/jobs/${job.id}/runs/apc/solution` });
    expect(solution.statusCode).toBe(200);
    expect(solution.json<{ x: number[] }>().x).toHaveLength(100);
    const trace = await service.app.inject({ url: `/v1/jobs/${job.id}/runs/apc/trace` });
    expect(trace.json<{ totalIterations: number }>().totalIterations).toBe(result.runs.apc!.iterations);
  });
});

describe('JOB_MEMORY_LIMIT_MB', () => {
  // A fresh job process calibrates the time-to-solution model at its first analysis (40 MB blocks, taking turns in one
  // buffer: src/solvers/analysis/calibration.ts), on top of its code: it must leave the tiny job room under the smallest
  // ceiling the setting accepts (256 MiB), on either backend, and its process must hold no more than that afterwards.
  for (const backend of ['typescript', 'native'] as const) {
    it(`a tiny analysis in a fresh job process fits the smallest ceiling (${backend} backend), and its process gives the calibration's memory back`, async () => {
      service = await startTestService({ JOB_MEMORY_LIMIT_MB: 256, WORKER_CONCURRENCY: 1, NUMERIC_BACKEND: backend });
      await expectNextJobSucceeds(service.app);
      const [child] = sandboxChildren();
      // The calibration's blocks (40 MB) are no longer held: the process is well below its peak (~50 MiB here; ~5
      // when the job does not give them back).
      const resident = residentMemory(child)!;
      expect(resident.peakBytes).toBeLessThan(256 * 2 ** 20);
      expect(resident.bytes).toBeLessThan(resident.peakBytes - 30 * 2 ** 20);
      await expectNextJobSucceeds(service.app);
    });
  }

  it('fails a job whose process outgrows the ceiling with a memory-limit problem, and the worker goes on', async () => {
    service = await startTestService({ JOB_MEMORY_LIMIT_MB: 256, WORKER_CONCURRENCY: 1 });
    // Dense n = 3000: 72 MB per n x n matrix, several of them in the analysis.
    const { job } = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', generator: 'gaussian', n: 3000, seed: 8 },
      partition: { machines: 3 },
    });
    const failed = await waitForJob(service.app, job.id, { timeoutMs: 90_000 });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('memory-limit');
    expect(failed.error?.status).toBe(413);
    expect(failed.error?.detail).toMatch(/held \d+ MiB of memory, more than 256 MiB \(JOB_MEMORY_LIMIT_MB\)/);
    expect(failed.attempts).toBe(1);

    await expectNextJobSucceeds(service.app);
  });
});
