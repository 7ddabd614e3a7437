/**
 * A worker process killed (SIGKILL) in the middle of a solve does not lose the job: its sandboxed
 * child exits with it, the job's lock expires, and another worker runs the job again to the end
 * (attempts 2). Short LOCK_DURATION_MS / STALLED_INTERVAL_MS keep this to seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { childPids, isAlive, spawnWorkerProcess } from '../support/processes.js';
import { createJob, getJob, startTestRedis, startTestService, waitForJob, type TestService } from '../support/service.js';

const CRASH_SETTINGS = { LOCK_DURATION_MS: 2000, STALLED_INTERVAL_MS: 1000, WORKER_CONCURRENCY: 1 };

let redis: EmbeddedRedis;
let service: TestService;
let workerProcess: ChildProcess | null = null;
let rescuer: JobWorker | null = null;

beforeAll(async () => {
  redis = await startTestRedis();
  service = await startTestService(CRASH_SETTINGS, { redis, worker: false });
});

afterAll(async () => {
  if (workerProcess && workerProcess.exitCode === null) workerProcess.kill('SIGKILL');
  await rescuer?.close(5000);
  await service?.close();
  await redis?.stop();
});

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a worker killed mid-solve', () => {
  it('loses no job: another worker completes it after the lock expires', async () => {
    workerProcess = spawnWorkerProcess(redis.url, CRASH_SETTINGS);
    const { job } = await createJob(service.app, {
      type: 'solve',
      matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 21 },
      partition: { machines: 4 },
      algorithms: ['dgd'],
      // Long enough (~2 s on the native row kernels) to be killed mid-solve.
      options: { tolerance: 1e-15, maxIterations: 400_000, stopOnStagnation: false },
    });
    const running = await waitForJob(service.app, job.id, {
      timeoutMs: 60_000,
      until: (j) => j.progress?.phase === 'solve' || (j.status !== 'queued' && j.status !== 'running'),
    });
    expect(running.status).toBe('running');
    expect(running.attempts).toBe(1);

    const sandboxChildren = childPids(workerProcess.pid!);
    expect(sandboxChildren.length).toBeGreaterThan(0);
    workerProcess.kill('SIGKILL');
    // The sandboxed child leaves when its IPC channel closes, instead of computing on as an orphan.
    await until(() => sandboxChildren.every((pid) => !isAlive(pid)), 10_000, 'the sandboxed child to exit');

    const stalled = await getJob(service.app, job.id);
    expect(stalled.status).toBe('running'); // not lost, not failed: waiting for its lock to expire
    rescuer = await startWorker(service.config, pino({ level: 'silent' }));

    const done = await waitForJob(service.app, job.id, { timeoutMs: 90_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.attempts).toBe(2);
    expect(done.result!.runs.dgd!.iterations).toBe(400_000);
  });
});
