/**
 * A worker process killed (SIGKILL) while a job of three right-hand sides runs its second
 * algorithm (APC, after D-HBM), on dense and on CSR storage: another worker takes the job again
 * (stalled job recovery) and resumes it from its checkpoint. D-HBM's finished block run (its three
 * columns' solutions and traces) is not run again, APC's block run goes on from the checkpoint's
 * iteration, and every column's summary, solution and trace equal those of the same job run without
 * interruption. Short CHECKPOINT_INTERVAL_MS, LOCK_DURATION_MS and STALLED_INTERVAL_MS keep this to
 * seconds (as ./checkpointResume.test.ts for one right-hand side).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { decodeCheckpoint, type JobCheckpoint } from '../../src/jobs/store/checkpointCodec.js';
import { JobKeys } from '../../src/jobs/store/keys.js';
import type { Job } from '../../src/jobs/types.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { generateMatrix } from '../../src/solvers/input/generators.js';
import { isBlockRunSnapshot, type BlockRunSnapshot } from '../../src/solvers/runner/snapshot.js';
import { childPids, isAlive } from '../support/processes.js';
import { withoutMeasurements } from '../support/sameAnalysis.js';
import { createJob, getJob, startTestRedis, startTestService, waitForJob, type TestService } from '../support/service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SETTINGS = { LOCK_DURATION_MS: 2000, STALLED_INTERVAL_MS: 1000, WORKER_CONCURRENCY: 1, CHECKPOINT_INTERVAL_MS: 300 };

let redis: EmbeddedRedis;
let service: TestService;
let connection: Redis;
const workerProcesses: ChildProcess[] = [];
let rescuer: JobWorker | null = null;
/** This file's own TMPDIR: its workers' own registry of running jobs, so that each job runs alone on every core (./checkpointResume.test.ts). */
let privateTmp = '';
let tmpBefore: string | undefined;

beforeAll(async () => {
  privateTmp = await mkdtemp(join(tmpdir(), 'lss-rhs-checkpoint-tmp-'));
  tmpBefore = process.env.TMPDIR;
  process.env.TMPDIR = privateTmp;
  redis = await startTestRedis();
  connection = new Redis(redis.url);
  service = await startTestService(SETTINGS, { redis, worker: false });
});

afterAll(async () => {
  for (const worker of workerProcesses) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
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
  const worker = spawn(process.execPath, ['--import', 'tsx', 'src/jobs/workerMain.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  workerProcesses.push(worker);
  return worker;
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

const n = 100;
const K = 3;
const A = generateMatrix({ generator: 'gaussian', n, mean: 0, seed: 23 });
const rows = Array.from({ length: n }, (_, i) => Array.from(A.data.subarray(i * n, (i + 1) * n)));
const entries = rows.flatMap((row, i) => row.map((value, j) => [i, j, value]));
const rhs = Array.from({ length: K }, (_, j) => Array.from({ length: n }, (_, i) => Math.sin((j + 1) * (i + 1))));
/** Seconds of each block run, to the iteration cap (the tolerance is below the rounding floor). */
const MAX_ITERATIONS = 40_000;
const jobOf = (matrix: unknown) => ({
  type: 'solve',
  matrix,
  partition: { machines: 4 },
  rhs,
  algorithms: ['dhbm', 'apc'],
  options: { tolerance: 1e-300, maxIterations: MAX_ITERATIONS, stopOnStagnation: false },
});

async function checkpointOf(id: string): Promise<JobCheckpoint | null> {
  const bytes = await connection.getBuffer(new JobKeys(service.config.KEY_PREFIX, service.config.QUEUE_NAME).checkpoint(id));
  return bytes === null ? null : decodeCheckpoint(bytes);
}

/** The result without wall times, and every column's solution and trace, through the API. */
async function outputsOf(job: Job): Promise<unknown> {
  const runs = Object.fromEntries(
    Object.entries(job.result!.runs).map(([id, run]) => [
      id,
      { ...run, wallTimeMs: 0, columns: run.columns!.map((column) => ({ ...column, wallTimeMs: 0 })) },
    ]),
  );
  const outputs: Record<string, unknown> = {};
  for (const algorithm of job.algorithms) {
    for (let column = 0; column < K; column++) {
      for (const part of ['solution', 'trace']) {
        const response = await service.app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/runs/${algorithm}/${part}?column=${column}` });
        expect(response.statusCode).toBe(200);
        outputs[`${algorithm} ${column} ${part}`] = response.json();
      }
    }
  }
  return { analysis: withoutMeasurements(job.result!.analysis!), runs, outputs };
}

describe.each([
  { storage: 'dense', matrix: { format: 'dense', data: rows } },
  { storage: 'CSR', matrix: { format: 'coo', rows: n, cols: n, entries } },
])('a worker killed in the middle of a job of three right-hand sides ($storage)', ({ matrix }) => {
  it(
    "resumes the block run under way without running the finished one again, to the uninterrupted job's columns",
    { timeout: 300_000 },
    async () => {
      const workerProcess = spawnWorkerProcess();
      const { job } = await createJob(service.app, jobOf(matrix));
      // A checkpoint taken during APC's block run, the second: D-HBM's is among the finished ones.
      await until(
        async () => {
          const checkpoint = await checkpointOf(job.id);
          return checkpoint?.current?.algorithm === 'apc' && checkpoint.current.iteration > 1000 ? checkpoint : null;
        },
        120_000,
        'a checkpoint during the APC run',
      );
      const sandboxChildren = childPids(workerProcess.pid!);
      workerProcess.kill('SIGKILL');
      await until(
        () => Promise.resolve(sandboxChildren.every((pid) => !isAlive(pid)) ? true : null),
        10_000,
        'the sandboxed child to exit',
      );
      // Nothing writes it any more: this is what the retry starts from.
      const saved = (await checkpointOf(job.id))!;
      expect(saved.runs.map((run) => run.algorithm)).toEqual(['dhbm']);
      expect(saved.runs[0].otherColumns).toHaveLength(K - 1);
      expect(saved.runs[0].summary.columns).toHaveLength(K);
      expect(isBlockRunSnapshot(saved.current!)).toBe(true);
      const current = saved.current as BlockRunSnapshot;
      expect(current.columns.map((column) => ('running' in column ? column.running.iteration : -1))).toEqual(
        Array.from({ length: K }, () => current.iteration),
      );

      rescuer = await startWorker({ ...service.config }, pino({ level: 'silent' }));
      const resumed = await until(
        async () => {
          const now = await getJob(service.app, job.id);
          return now.attempts === 2 && now.progress?.phase === 'solve' ? now : null;
        },
        60_000,
        'the first progress report of the second attempt',
      );
      // APC again, from the checkpoint's iteration on, not from 0; D-HBM is not run again.
      expect(resumed.progress).toMatchObject({ algorithm: 'apc' });
      expect(resumed.progress!.iteration!).toBeGreaterThan(current.iteration);

      const done = await waitForJob(service.app, job.id, { timeoutMs: 120_000 });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.attempts).toBe(2);
      for (const algorithm of ['dhbm', 'apc'] as const) {
        expect(done.result!.runs[algorithm]!.columns!.map((column) => column.iterations)).toEqual([
          MAX_ITERATIONS,
          MAX_ITERATIONS,
          MAX_ITERATIONS,
        ]);
      }
      expect(await checkpointOf(job.id)).toBeNull();

      // The same job, never interrupted: the same columns, bit for bit.
      const { job: reference } = await createJob(service.app, jobOf(matrix));
      const uninterrupted = await waitForJob(service.app, reference.id, { timeoutMs: 120_000 });
      expect(uninterrupted.status).toBe('succeeded');
      expect(uninterrupted.attempts).toBe(1);
      expect(await outputsOf(done)).toEqual(await outputsOf(uninterrupted));
      await rescuer.close(5000);
      rescuer = null;
    },
  );
});
