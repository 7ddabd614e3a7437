/**
 * The worker process's side of a split analysis (./splitAnalysisFlow.ts): which of its BullMQ jobs
 * are parts (or the combining parent) of which job, so that a cancel request for the job reaches
 * them (their BullMQ ids are not the job's id), and the bookkeeping of a part that failed after its
 * last attempt: the job then ends 'failed' (a 500 problem) and its other parts are cancelled.
 */
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { makeProblem } from '../problems.js';
import type { JobStore } from '../store/jobStore.js';
import { isSplitJob } from './splitAnalysisFlow.js';
import { SplitAnalysisKeys, type SplitJobData } from './splitKeys.js';

export class SplitJobTracker {
  /** Job id -> BullMQ ids of its split jobs this worker runs now. */
  private readonly running = new Map<string, Set<string>>();

  constructor(worker: Worker, store: JobStore, redis: Redis, log: Logger) {
    worker.on('active', (job: Job<SplitJobData>) => {
      if (!isSplitJob(job) || !job.id) return;
      const ids = this.running.get(job.data.id) ?? new Set<string>();
      ids.add(job.id);
      this.running.set(job.data.id, ids);
    });
    const forget = (job: Job<SplitJobData> | undefined): void => {
      if (!job || !isSplitJob(job) || !job.id) return;
      const ids = this.running.get(job.data.id);
      ids?.delete(job.id);
      if (ids?.size === 0) this.running.delete(job.data.id);
    };
    worker.on('completed', (job: Job<SplitJobData>) => forget(job));
    worker.on('failed', (job: Job<SplitJobData> | undefined, error: Error) => {
      forget(job);
      if (!job || !isSplitJob(job)) return;
      const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
      if (!final) return;
      const id = job.data.id;
      // Invalid problems are recorded by the part itself; finish() is then a no-op.
      store
        .finish(id, {
          status: 'failed',
          error: makeProblem(
            'internal-error',
            `Part ${job.id} of the split analysis failed after ${job.attemptsMade} attempt(s) because of an internal error; ` +
              `the worker logs have the cause (job id ${id}).`,
            { instance: `/v1/jobs/${id}` },
          ),
        })
        .then(async (changed) => {
          if (!changed) return;
          log.error({ jobId: id, part: job.id, reason: error.message }, 'split analysis failed after the last attempt of a part');
          await store.publishCancel(id);
          await redis.del(...new SplitAnalysisKeys(store.keys).all(id, job.data.parts));
        })
        .catch((err: unknown) => log.error({ err, jobId: id }, 'could not record the split analysis failure'));
    });
  }

  /** BullMQ ids of the split jobs of job `id` running in this worker. */
  runningOf(id: string): string[] {
    return [...(this.running.get(id) ?? [])];
  }
}
