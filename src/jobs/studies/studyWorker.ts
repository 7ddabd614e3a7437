/**
 * A worker process's study runners (next to the jobs' worker, ../worker.ts):
 *  - the chunk worker: sandboxed children (./chunkProcessor.ts), STUDY_WORKER_CONCURRENCY at a time;
 *    a chunk whose worker dies is taken over by another worker when its lock expires, and runs again
 *    from its first sample (its outcome is stored in one write, so nothing is counted twice);
 *  - the parent worker, in this process: once a study's children are done it reads their stored
 *    outcomes, aggregates them (src/solvers/studies/aggregate.ts: milliseconds) and ends the study
 *    `succeeded` with its result. A parent failing on its last attempt ends the study `failed`.
 * A study deleted while a chunk of it still ran keeps BullMQ jobs its DELETE could not remove (a child
 * locked by its worker blocks the parent's removal): the end of each of its jobs removes them.
 */
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { aggregateStudy } from '../../solvers/studies/aggregate.js';
import { makeProblem } from '../problems.js';
import { bullmqConnectionOptions, closeBullmq, closeConnection, createResilientConnection } from '../store/redisConnection.js';
import { sandboxedEnvironment, sandboxedProcessor } from '../sandboxChild.js';
import { collectSamples } from './chunkOutcome.js';
import type { ChunkReturn } from './chunkProcessor.js';
import { planOfRecord } from './studyPlan.js';
import { studyQueueNames, type StudyChunkData, type StudyParentData } from './studyQueues.js';
import { StudyStore } from './studyStore.js';

export interface StudyWorker {
  /**
   * Stop taking chunks and wait up to `timeoutMs` for running ones (left to other workers after
   * that); ends within `timeoutMs` and a second whatever Redis does, no connection reconnecting.
   */
  close(timeoutMs: number): Promise<void>;
}

/** Retries of the removal of a deleted study's jobs while one of them is locked, REMOVE_RETRY_MS apart (~5 s in all). */
const REMOVE_RETRIES = 20;
const REMOVE_RETRY_MS = 250;

export async function startStudyWorker(config: Config, logger: Logger): Promise<StudyWorker> {
  if (!config.REDIS_URL) throw new Error('startStudyWorker needs REDIS_URL');
  const log = logger.child({ component: 'study-worker' });
  const names = studyQueueNames(config);
  const { file, execArgv } = sandboxedProcessor(new URL('./chunkProcessor', import.meta.url));
  const commands = createResilientConnection(config.REDIS_URL, 'lss-study-worker');
  commands.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  const store = new StudyStore(commands, config.KEY_PREFIX, config.STUDY_QUEUE_NAME, config.JOB_TTL_SECONDS);
  // The parents' queue on the commands connection, only to remove the jobs of deleted studies.
  const parentQueue = new Queue<StudyParentData>(names.parents, { prefix: config.KEY_PREFIX, connection: commands });
  let closing = false;
  /**
   * Remove the jobs of a study no longer stored. It fails while another of its jobs is locked (a chunk still running, or
   * the parent itself, which its last chunk's end makes runnable): then it tries again shortly, REMOVE_RETRIES times, as
   * well as at that job's end (a CI run once found a deleted study's parent and chunk left after all its chunks ended).
   */
  const removeJobsOfDeleted = (id: string, attempt = 0): void =>
    void (async () => {
      if ((await store.status(id)) !== null) return;
      await (await parentQueue.getJob(id))?.remove({ removeChildren: true });
    })().catch((err: unknown) => {
      log.debug({ err, studyId: id, attempt }, 'jobs of a deleted study not removed yet');
      if (!closing && attempt < REMOVE_RETRIES) setTimeout(() => removeJobsOfDeleted(id, attempt + 1), REMOVE_RETRY_MS).unref();
    });
  const common = {
    prefix: config.KEY_PREFIX,
    lockDuration: config.LOCK_DURATION_MS,
    stalledInterval: config.STALLED_INTERVAL_MS,
    maxStalledCount: 1,
  };

  const chunks = new Worker<StudyChunkData, ChunkReturn>(names.chunks, file, {
    ...common,
    connection: bullmqConnectionOptions(config.REDIS_URL, 'lss-study-chunks'),
    concurrency: config.STUDY_WORKER_CONCURRENCY,
    useWorkerThreads: false,
    workerForkOptions: { execArgv, env: sandboxedEnvironment(config) },
  });
  chunks.on('error', (err) => log.error({ err }, 'chunk worker error'));
  chunks.on('failed', (job: Job<StudyChunkData> | undefined, error: Error) => {
    log.warn(
      { studyId: job?.data.id, chunk: job?.data.chunk, attempts: job?.attemptsMade, reason: error.message },
      'study chunk attempt failed',
    );
    if (job) removeJobsOfDeleted(job.data.id);
  });
  chunks.on('completed', (job: Job<StudyChunkData>) => removeJobsOfDeleted(job.data.id));

  const parents = new Worker<StudyParentData>(
    names.parents,
    async (job: Job<StudyParentData>) => {
      const { id } = job.data;
      const stored = await store.get(id);
      if (!stored || (stored.status !== 'queued' && stored.status !== 'running')) return;
      const plan = planOfRecord(stored.record, config);
      const samples = collectSamples(plan, await store.chunkOutcomes(id));
      const result = aggregateStudy(plan.definition, plan.points, samples, plan.reference);
      if (await store.finish(id, 'succeeded', 'result', JSON.stringify(result))) log.info({ studyId: id }, 'study succeeded');
    },
    { ...common, connection: bullmqConnectionOptions(config.REDIS_URL, 'lss-study-parents'), concurrency: 1 },
  );
  parents.on('error', (err) => log.error({ err }, 'study parent worker error'));
  parents.on('completed', (job: Job<StudyParentData>) => removeJobsOfDeleted(job.data.id));
  parents.on('failed', (job: Job<StudyParentData> | undefined, error: Error) => {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const problem = makeProblem(
      'internal-error',
      `The study's aggregation failed after ${job.attemptsMade} attempt(s); the worker logs have the cause.`,
      {
        instance: `/v1/studies/${job.data.id}`,
      },
    );
    store
      .finish(job.data.id, 'failed', 'error', JSON.stringify(problem))
      .catch((err: unknown) => log.error({ err, studyId: job.data.id, reason: error.message }, 'could not record the study failure'));
  });

  await Promise.all([chunks.waitUntilReady(), parents.waitUntilReady()]);
  log.info({ queues: names, concurrency: config.STUDY_WORKER_CONCURRENCY }, 'study worker ready');
  return {
    async close(timeoutMs: number) {
      closing = true;
      const closed = await Promise.all([closeBullmq(chunks, timeoutMs), closeBullmq(parents, timeoutMs)]);
      await closeBullmq(parentQueue);
      if (!closed.every(Boolean))
        log.warn({ timeoutMs }, 'running study chunks did not finish in time (or Redis is gone); leaving them to other workers');
      await closeConnection(commands);
      log.info('study worker closed');
    },
  };
}
