/**
 * One analysis split over two separate worker processes (src/jobs/splitAnalysis/), through the
 * HTTP API and a real Redis: the result equals the one-worker analysis (every number to 1e-14
 * relative, theta_H and its pair identical; here bit for bit, on the TypeScript backend) on the
 * dense fixtures and with m = 200 machines; a cancel in the middle of the split ends the job
 * 'cancelled' and leaves none of its parts' data; a worker killed in the middle loses nothing: its
 * part is taken over by the other worker once its lock expires, and the job succeeds with the same
 * values.
 */
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/solvers/analysis/analyze.js';
import type { Analysis } from '../../src/solvers/analysis/types.js';
import { buildDistributedSystem } from '../../src/solvers/distributed/distributedSystem.js';
import { createProblem } from '../../src/solvers/input/createProblem.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { useBackend } from '../../src/solvers/linalg/backend.js';
import type { DenseMatrix } from '../../src/solvers/matrix.js';
import { partitionFromAssignment, type Partition } from '../../src/solvers/problem.js';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import type { Job } from '../../src/jobs/types.js';
import { fixtureMatrix, loadFixtures } from '../support/fixtures.js';
import { childPids, isAlive, spawnWorkerProcess } from '../support/processes.js';
import { expectSameAnalysis } from '../support/sameAnalysis.js';
import { createJob, getJob, runJob, startTestRedis, startTestService, waitForJob, type TestService } from '../support/service.js';

/** Every analysis here splits (dense, n >= 1, m >= 2), in two groups of each kind: six parts. */
const SETTINGS = {
  SPLIT_ANALYSIS_MIN_N: 1,
  SPLIT_ANALYSIS_MIN_MACHINES: 2,
  SPLIT_ANALYSIS_GROUPS: 2,
  WORKER_CONCURRENCY: 1,
  LOCK_DURATION_MS: 2000,
  STALLED_INTERVAL_MS: 1000,
};
const PARTS = 6;

let redis: EmbeddedRedis;
let service: TestService;
let data: Redis;
const workers: ChildProcess[] = [];

function spawnWorker(): ChildProcess {
  const child = spawnWorkerProcess(redis.url, { JOB_BACKOFF_MS: 100, NUMERIC_BACKEND: 'typescript', ...SETTINGS });
  workers.push(child);
  return child;
}

beforeAll(async () => {
  // The TypeScript backend on both sides: its analysis does not depend on the thread count, where
  // OpenBLAS's LU does (in the last digits of kappa(A^T A) and kappa(S), ~eps kappa), and each part
  // runs on its share of the host's cores (src/jobs/computeJob.ts, threadBudget), as a one-worker job does.
  useBackend('typescript');
  redis = await startTestRedis();
  service = await startTestService(SETTINGS, { redis, worker: false });
  data = new Redis(redis.url);
  spawnWorker();
  spawnWorker();
}, 60_000);

afterAll(async () => {
  for (const child of workers) if (child.exitCode === null) child.kill('SIGKILL');
  data?.disconnect();
  await service?.close();
  await redis?.stop();
});

const rowsOf = (A: DenseMatrix): number[][] =>
  Array.from({ length: A.rows }, (_, i) => Array.from(A.data.subarray(i * A.cols, (i + 1) * A.cols)));

/** The one-worker analysis of the same job, in this process, as the API sends it (JSON). */
function reference(A: DenseMatrix, partition: Partition | { machines: number }, tolerance: number): Analysis {
  const analysis = analyze(buildDistributedSystem(createProblem({ A, partition })), { tolerance });
  return JSON.parse(JSON.stringify(analysis)) as Analysis;
}

async function splitKeysOf(id: string): Promise<string[]> {
  return data.keys(`*:job:${id}:split:*`);
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function expectSplit(job: Job, parts: number): void {
  expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
  expect(job.result!.split!.parts).toBe(parts);
  expect(job.result!.split!.workers).toBeGreaterThanOrEqual(1);
  expect(job.result!.split!.workers).toBeLessThanOrEqual(2);
}

describe('an analysis split over two worker processes', () => {
  // Dense fixtures up to n = 1000 (sherman5, n = 3312, is checked part by part in test/solvers/analysis/splitAnalysis.test.ts).
  for (const f of loadFixtures().filter((x) => x.expected.n <= 1000)) {
    it(`equals the one-worker analysis on ${f.name}`, { timeout: 180_000 }, async () => {
      const A = fixtureMatrix(f);
      const job = await runJob(
        service.app,
        { type: 'analyze', matrix: { format: 'dense', data: rowsOf(A) }, partition: { assignment: f.partition.assignment } },
        150_000,
      );
      expectSplit(job, job.result!.split!.parts);
      const partition = partitionFromAssignment(Int32Array.from(f.partition.assignment), f.expected.m);
      expectSameAnalysis(job.result!.analysis!, reference(A, partition, job.options.tolerance));
      await until(async () => (await splitKeysOf(job.id)).length === 0, 10_000, 'the parts data to be deleted');
    });
  }

  it('equals the one-worker analysis with m = 200 machines, computed by both workers', { timeout: 300_000 }, async () => {
    const spec = { generator: 'gaussian', n: 400, mean: 0, std: 1, seed: 12 } as const;
    const job = await runJob(
      service.app,
      { type: 'analyze', matrix: { format: 'generator', ...spec }, partition: { machines: 200 } },
      280_000,
    );
    expectSplit(job, PARTS);
    expect(job.result!.split!.workers).toBe(2);
    const A = generateMatrix(spec, { maxN: 4000 });
    expectSameAnalysis(job.result!.analysis!, reference(A, { machines: 200 }, job.options.tolerance));
  });

  /** A split long enough (seconds per part) to be interrupted. */
  const LONG = { generator: 'gaussian', n: 900, mean: 1, std: 1, seed: 5 } as const;
  const LONG_PARTITION = { machines: 150 };

  async function startLongSplit(): Promise<string> {
    const { response, job } = await createJob(service.app, {
      type: 'analyze',
      matrix: { format: 'generator', ...LONG },
      partition: LONG_PARTITION,
    });
    expect(response.statusCode).toBe(202);
    await waitForJob(service.app, job.id, {
      timeoutMs: 120_000,
      until: (j) => j.progress?.phase === 'split-analysis' || (j.status !== 'queued' && j.status !== 'running'),
    });
    return job.id;
  }

  it('is cancelled in the middle of the split: the job ends cancelled and its parts leave nothing', { timeout: 300_000 }, async () => {
    const id = await startLongSplit();
    const running = await getJob(service.app, id);
    expect(running.status).toBe('running');
    const response = await service.app.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel` });
    expect(response.statusCode).toBe(200);
    const done = await waitForJob(service.app, id, { timeoutMs: 120_000 });
    expect(done.status).toBe('cancelled');
    expect(done.result).toBeUndefined();
    await until(async () => (await splitKeysOf(id)).length === 0, 120_000, 'the parts data to be deleted');
    // Deleted like any finished job.
    expect((await service.app.inject({ method: 'DELETE', url: `/v1/jobs/${id}` })).statusCode).toBe(204);
    expect((await service.app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).statusCode).toBe(404);
  });

  it('survives a worker killed in the middle: the other worker takes its part over, same values', { timeout: 400_000 }, async () => {
    const id = await startLongSplit();
    // Both workers are computing parts now (six parts, one at a time each).
    const victim = workers.find((w) => w.exitCode === null && childPids(w.pid!).length > 0)!;
    expect(victim).toBeDefined();
    const children = childPids(victim.pid!);
    victim.kill('SIGKILL');
    // The child notices its parent's death between steps of its work; a synchronous step (the cost model's
    // calibration, a factorization) can take seconds on a loaded 2-core CI machine.
    await until(() => children.every((pid) => !isAlive(pid)), 30_000, 'the sandboxed child to exit');

    const done = await waitForJob(service.app, id, { timeoutMs: 360_000 });
    expectSplit(done, PARTS);
    const A = generateMatrix(LONG, { maxN: 4000 });
    expectSameAnalysis(done.result!.analysis!, reference(A, LONG_PARTITION, done.options.tolerance));
  });
});
