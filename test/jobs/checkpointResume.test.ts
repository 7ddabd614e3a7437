/**
 * A worker process killed (SIGKILL) while a job's second run (APC, after D-HBM) is under way: its
 * sandboxed child exits with it, the job's lock expires, and another worker takes the job again
 * (stalled job recovery) and resumes it from its checkpoint: D-HBM's finished run is not run again,
 * APC goes on from the checkpoint's iteration (not 0), and the job ends with exactly the result,
 * solutions and traces of the same job run without interruption. The checkpoint is gone once the
 * job has finished. Short CHECKPOINT_INTERVAL_MS, LOCK_DURATION_MS and STALLED_INTERVAL_MS keep this
 * to seconds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutMeasurements } from '../support/sameAnalysis.js';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { decodeCheckpoint, type JobCheckpoint } from '../../src/jobs/store/checkpointCodec.js';
import { JobKeys } from '../../src/jobs/store/keys.js';
import type { Job } from '../../src/jobs/types.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { childPids, isAlive } from '../support/processes.js';
import { createJob, getJob, startTestRedis, startTestService, waitForJob, type TestService } from '../support/service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SETTINGS = { LOCK_DURATION_MS: 2000, STALLED_INTERVAL_MS: 1000, WORKER_CONCURRENCY: 1, CHECKPOINT_INTERVAL_MS: 300 };

let redis: EmbeddedRedis;
let service: TestService;
let connection: Redis;
let workerProcess: ChildProcess | null = null;
let rescuer: JobWorker | null = null;

/**
 * A TMPDIR of this file's own for its workers, hence their own registry of running jobs
 * (src/jobs/runningJobs.ts): each job runs alone on every core whatever else runs on this host. The
 * analysis' last bits depend on the thread count (OpenBLAS), so the uninterrupted reference must
 * have the same threads as the interrupted job's first attempt.
 */
let privateTmp = '';
let tmpBefore: string | undefined;

beforeAll(async () => {
  privateTmp = await mkdtemp(join(tmpdir(), 'lss-checkpoint-tmp-'));
  tmpBefore = process.env.TMPDIR;
  process.env.TMPDIR = privateTmp;
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  service = await startTestService(SETTINGS, { redis, worker: false });
});

afterAll(async () => {
  if (workerProcess && workerProcess.exitCode === null) workerProcess.kill('SIGKILL');
  await rescuer?.close(5000);
  await service?.close();
  connection?.disconnect();
  await redis?.stop();
  if (tmpBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpBefore;
  if (privateTmp) await rm(privateTmp, { recursive: true, force: true });
});

function spawnWorkerProcess(): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redis.url, LOG_LEVEL: 'warn' };
  for (const [name, value] of Object.entries(SETTINGS)) env[name] = String(value);
  return spawn(process.execPath, ['--import', 'tsx', 'src/jobs/workerMain.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function until<T>(probe: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Seconds of each run (150,000 APC iterations of this system take about a second on one core: too short to kill it midway). */
const MAX_ITERATIONS = 1_000_000;
const JOB = {
  type: 'solve',
  matrix: { format: 'generator', generator: 'gaussian', n: 100, seed: 23 },
  partition: { machines: 4 },
  algorithms: ['dhbm', 'apc'],
  // Seconds of iterations each, to the iteration cap (the tolerance is below the rounding floor).
  options: { tolerance: 1e-300, maxIterations: MAX_ITERATIONS, stopOnStagnation: false },
};

async function checkpointOf(id: string): Promise<JobCheckpoint | null> {
  const bytes = await connection.getBuffer(new JobKeys(service.config.KEY_PREFIX, service.config.QUEUE_NAME).checkpoint(id));
  return bytes === null ? null : decodeCheckpoint(bytes);
}

/** The result without wall times, the solutions and the traces of a finished job, through the API. */
async function outputsOf(job: Job): Promise<unknown> {
  const runs = Object.fromEntries(Object.entries(job.result!.runs).map(([id, run]) => [id, { ...run, wallTimeMs: 0 }]));
  const outputs: Record<string, unknown> = {};
  for (const algorithm of job.algorithms) {
    for (const part of ['solution', 'trace']) {
      const response = await service.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/runs/${algorithm}/${part}` });
      expect(response.statusCode).toBe(200);
      outputs[`${algorithm} ${part}`] = response.json();
    }
  }
  return { analysis: withoutMeasurements(job.result!.analysis!), runs, outputs };
}

describe('a worker killed in the middle of a job', () => {
  it("loses no more than a checkpoint interval: the retry resumes the run under way and ends with the uninterrupted job's result", async () => {
    workerProcess = spawnWorkerProcess();
    const { job } = await createJob(service.app, JOB);
    // Wait for a checkpoint taken during APC, the second run: D-HBM's is among the finished ones.
    await until(
      async () => {
        const checkpoint = await checkpointOf(job.id);
        return checkpoint?.current?.algorithm === 'apc' && checkpoint.current.iteration > 1000 ? checkpoint : null;
      },
      120_000,
      'a checkpoint during the APC run',
    );
    // Where the run is, and how fast it goes (iterations per ms): APC's progress reports over half a
    // second, each report's iteration and time taken together, in the order they were made.
    const reports = new Map<number, number>();
    let before = await getJob(service.app, job.id);
    for (const end = Date.now() + 500; Date.now() < end || reports.size < 2;) {
      const current = await getJob(service.app, job.id);
      expect(current.status).toBe('running');
      const progress = current.progress;
      if (progress?.algorithm === 'apc' && progress.iteration !== undefined) {
        reports.set(Date.parse(progress.updatedAt), progress.iteration);
        if (Date.parse(progress.updatedAt) >= Date.parse(before.progress?.updatedAt ?? '')) before = current;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(before.progress).toMatchObject({ phase: 'solve', algorithm: 'apc' });
    const times = [...reports.keys()].sort((a, b) => a - b);
    const [first, last] = [times[0], times[times.length - 1]];
    const perMs = (reports.get(last)! - reports.get(first)!) / (last - first);
    expect(perMs).toBeGreaterThan(0);

    const sandboxChildren = childPids(workerProcess.pid!);
    workerProcess.kill('SIGKILL');
    await until(() => Promise.resolve(sandboxChildren.every((pid) => !isAlive(pid)) ? true : null), 10_000, 'the sandboxed child to exit');
    // Nothing writes it any more: this is what the retry starts from.
    const saved = (await checkpointOf(job.id))!;
    expect(saved.runs.map((run) => run.algorithm)).toEqual(['dhbm']);
    // The runs come before the rest of the analysis: the checkpoint holds the spectral data they use.
    expect(saved.analysis).toBeNull();
    expect(saved.spectral).not.toBeNull();
    // Within one interval (and a progress interval, as the report was read) of where the run was.
    const oneInterval = perMs * (SETTINGS.CHECKPOINT_INTERVAL_MS + 250);
    expect(saved.current!.iteration).toBeGreaterThanOrEqual(before.progress!.iteration! - oneInterval);

    rescuer = await startWorker({ ...service.config }, pino({ level: 'silent' }));
    const resumed = await until(
      async () => {
        const current = await getJob(service.app, job.id);
        return current.attempts === 2 && current.progress?.phase === 'solve' ? current : null;
      },
      60_000,
      'the first progress report of the second attempt',
    );
    // APC again, from the checkpoint's iteration on, not from 0; D-HBM is not run again.
    expect(resumed.progress).toMatchObject({ algorithm: 'apc' });
    expect(resumed.progress!.iteration!).toBeGreaterThan(saved.current!.iteration);
    expect(resumed.progress!.iteration!).toBeGreaterThanOrEqual(before.progress!.iteration! - oneInterval);

    const done = await waitForJob(service.app, job.id, { timeoutMs: 120_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.attempts).toBe(2);
    expect(done.result!.runs.dhbm!.iterations).toBe(MAX_ITERATIONS);
    expect(done.result!.runs.apc!.iterations).toBe(MAX_ITERATIONS);
    expect(await checkpointOf(job.id)).toBeNull();

    // The same job, never interrupted: the same result, bit for bit.
    const { job: reference } = await createJob(service.app, JOB);
    const uninterrupted = await waitForJob(service.app, reference.id, { timeoutMs: 120_000 });
    expect(uninterrupted.status).toBe('succeeded');
    expect(uninterrupted.attempts).toBe(1);
    expect(await outputsOf(done)).toEqual(await outputsOf(uninterrupted));
  });
});
