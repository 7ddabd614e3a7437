/**
 * What the tests of a worker process killed mid-job share (test/jobs/checkpointResume.test.ts,
 * test/jobs/severalRhsResume.test.ts): a private TMPDIR, Redis and the service without a worker of its
 * own (beforeAll / afterAll registered by killedWorkerSetup); worker processes with the file's settings;
 * the job's checkpoint as Redis holds it, and one taken during a given run; SIGKILL and the sandboxed child's exit; a rescuing worker and
 * the first progress report of the job's second attempt.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { EmbeddedRedis } from '../../src/jobs/embeddedRedis.js';
import { decodeCheckpoint, type JobCheckpoint } from '../../src/jobs/store/checkpointCodec.js';
import { JobKeys } from '../../src/jobs/store/keys.js';
import type { Job } from '../../src/jobs/types.js';
import { startWorker, type JobWorker } from '../../src/jobs/worker.js';
import { childPids, isAlive, spawnWorkerProcess } from './processes.js';
import { getJob, startTestRedis, startTestService, type TestService } from './service.js';

/** Polls `probe` every 20 ms until it gives a value other than null. */
async function until<T>(probe: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface KilledWorkerSetup {
  readonly service: TestService;
  /** A worker process (src/jobs/workerMain.ts) on this Redis with the settings. */
  spawnWorker(): ChildProcess;
  checkpointOf(id: string): Promise<JobCheckpoint | null>;
  /** Until the job has a checkpoint taken during `algorithm`'s run, past its iteration 1000. */
  checkpointDuring(id: string, algorithm: string): Promise<JobCheckpoint>;
  /** SIGKILL to the worker process, then until its sandboxed child has exited with it. */
  kill(worker: ChildProcess): Promise<void>;
  /** An in-process worker that takes the job again once its lock has expired, and the job at its second attempt's first progress report. */
  rescue(jobId: string): Promise<Job>;
  /** Closes the rescuing worker (before another job that a worker process should take). */
  stopRescuer(): Promise<void>;
}

/**
 * Registers the beforeAll / afterAll of a killed-worker test. `settings` go to the service and the worker
 * processes. A TMPDIR of the file's own gives its workers their own registry of running jobs
 * (src/jobs/runningJobs.ts): each job runs alone on every core whatever else runs on this host. The
 * analysis' last bits depend on the thread count (OpenBLAS), so the uninterrupted reference must have
 * the same threads as the interrupted job's first attempt.
 */
export function killedWorkerSetup(settings: Record<string, number>, tmpPrefix: string): KilledWorkerSetup {
  let redis: EmbeddedRedis;
  let service: TestService;
  let connection: Redis;
  const workers: ChildProcess[] = [];
  let rescuer: JobWorker | null = null;
  let privateTmp = '';
  let tmpBefore: string | undefined;

  beforeAll(async () => {
    privateTmp = await mkdtemp(join(tmpdir(), tmpPrefix));
    tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    redis = await startTestRedis();
    connection = new Redis(redis.url);
    service = await startTestService(settings, { redis, worker: false });
  });

  afterAll(async () => {
    for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    await rescuer?.close(5000);
    await service?.close();
    connection?.disconnect();
    await redis?.stop();
    if (tmpBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpBefore;
    if (privateTmp) await rm(privateTmp, { recursive: true, force: true });
  });

  const checkpointOf = async (id: string): Promise<JobCheckpoint | null> => {
    const bytes = await connection.getBuffer(new JobKeys(service.config.KEY_PREFIX, service.config.QUEUE_NAME).checkpoint(id));
    return bytes === null ? null : decodeCheckpoint(bytes);
  };

  return {
    get service() {
      return service;
    },
    spawnWorker() {
      const worker = spawnWorkerProcess(redis.url, settings);
      workers.push(worker);
      return worker;
    },
    checkpointOf,
    checkpointDuring(id, algorithm) {
      return until(
        async () => {
          const checkpoint = await checkpointOf(id);
          return checkpoint?.current?.algorithm === algorithm && checkpoint.current.iteration > 1000 ? checkpoint : null;
        },
        120_000,
        `a checkpoint during the ${algorithm} run`,
      );
    },
    async kill(worker) {
      const sandboxChildren = childPids(worker.pid!);
      worker.kill('SIGKILL');
      await until(
        () => Promise.resolve(sandboxChildren.every((pid) => !isAlive(pid)) ? true : null),
        10_000,
        'the sandboxed child to exit',
      );
    },
    async rescue(jobId) {
      rescuer = await startWorker({ ...service.config }, pino({ level: 'silent' }));
      return until(
        async () => {
          const current = await getJob(service.app, jobId);
          return current.attempts === 2 && current.progress?.phase === 'solve' ? current : null;
        },
        60_000,
        'the first progress report of the second attempt',
      );
    },
    async stopRescuer() {
      await rescuer?.close(5000);
      rescuer = null;
    },
  };
}
