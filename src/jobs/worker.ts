/**
 * A worker process's job runner: a BullMQ Worker whose processor (./processor.ts) runs sandboxed
 * in reused child processes, WORKER_CONCURRENCY at a time, and a second one on the small-job queue,
 * SMALL_JOB_SLOTS at a time (./apiKeys/fairShare.ts, with the cap the first applies per key). Around them:
 *  - a subscription to the cancel channel: a cancel request for a job this process runs aborts
 *    the job's signal in its child (worker.cancelJob);
 *  - the bookkeeping of failures the processor cannot record itself: an attempt that crashed or
 *    hit an infrastructure error sets the document back to 'queued' while BullMQ retries it, and
 *    to 'failed' (a 500 problem) after the last attempt;
 *  - the delivery of the callbacks of jobs and studies (./notify/notifyWorker.ts), so that it runs
 *    wherever jobs run.
 */
import type { StdioOptions } from 'node:child_process';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import { nativeBlas, nativeUnavailableReason } from '../solvers/linalg/backend.js';
import { outcomeOfCheckpoint } from './checkpoints.js';
import { makeProblem } from './problems.js';
import { FairShare } from './apiKeys/fairShare.js';
import { jobQueueNames, type ProcessorReturn, type QueuedJobData } from './queuedJob.js';
import { LimitedWorker, type LimitBreach } from './limitedWorker.js';
import { notifiedResources } from './notify/notifiedResources.js';
import { startNotifyWorker } from './notify/notifyWorker.js';
import { StudyStore } from './studies/studyStore.js';
import { SplitJobTracker } from './splitAnalysis/splitJobTracker.js';
import { decodeCheckpoint } from './store/checkpointCodec.js';
import { JobStore, type Outcome } from './store/jobStore.js';
import {
  bullmqConnectionOptions,
  closeBullmq,
  closeConnection,
  createResilientConnection,
  createSubscriberConnection,
  subscribeWhenReady,
} from './store/redisConnection.js';
import { sandboxedEnvironment, sandboxedProcessor } from './sandboxChild.js';

/**
 * The children write their log lines to this process's stdout and stderr themselves (BullMQ's
 * default pipes them through this process: a read and a write here for every line).
 */
const CHILD_STDIO: StdioOptions = ['ignore', 'inherit', 'inherit', 'ipc'];

/** How far V8 lets a child's old generation grow past what its last full collection kept: 3x (see startWorker). */
const CHILD_HEAP_GROWING_PERCENT = 200;

export interface JobWorker {
  /** The regular slots (WORKER_CONCURRENCY). */
  readonly worker: Worker<QueuedJobData, ProcessorReturn>;
  /** The small-job slots (SMALL_JOB_SLOTS). */
  readonly smallJobs: Worker<QueuedJobData, ProcessorReturn>;
  /**
   * Stop taking jobs and wait up to `timeoutMs` for running ones; after that they are left to other
   * workers (their locks expire once this process exits; they resume from their checkpoints). Ends
   * within `timeoutMs` and a second whatever Redis does, its connections no longer reconnecting.
   */
  close(timeoutMs: number): Promise<void>;
}

export async function startWorker(config: Config, logger: Logger): Promise<JobWorker> {
  if (!config.REDIS_URL) throw new Error('startWorker needs REDIS_URL');
  // Every child would fail every job it takes (after its retries): refuse to start instead.
  if (config.NUMERIC_BACKEND === 'native' && nativeBlas() === null) {
    throw new ConfigError(
      `NUMERIC_BACKEND=native, but the native numerical backend is not available: ${nativeUnavailableReason()}. ` +
        'Build it (npm run build:native) or set NUMERIC_BACKEND=auto or typescript.',
    );
  }
  const redisUrl = config.REDIS_URL;
  const log = logger.child({ component: 'worker' });
  const { file, execArgv } = sandboxedProcessor(new URL('./processor', import.meta.url));

  const commands: Redis = createResilientConnection(redisUrl, 'lss-worker-commands');
  const store = new JobStore(commands, config.KEY_PREFIX, config.QUEUE_NAME, config.JOB_TTL_SECONDS);
  // Time limit and memory ceiling of each attempt (./limitedWorker.ts): the job is recorded failed, then its child killed.
  // The runs its last checkpoint holds are kept with the failure (as with any final failure below).
  const recordLimit = async (job: Job<QueuedJobData>, breach: LimitBreach): Promise<void> => {
    const id = job.data.id;
    const recorded = await store.finish(id, {
      status: 'failed',
      error: makeProblem(breach.kind, breach.detail, { instance: `/v1/jobs/${id}` }),
      ...(await keptRuns(store, id, log)),
    });
    if (recorded) log.warn({ jobId: id, limit: breach.kind }, breach.detail);
  };
  const limits = { timeoutMs: config.JOB_TIMEOUT_MS, memoryBytes: config.JOB_MEMORY_LIMIT_MB * 2 ** 20 };
  // V8's own heap stops at the same ceiling (typed arrays and native memory are watched by limitedWorker). --expose-gc:
  // a job collects garbage where it lets go of large parts at once (the advice's candidate systems and LU of A:
  // ./computeJob.ts, giveMemoryBack). --heap-growing-percent: a child running many small jobs holds ~25 MB of live
  // heap, and V8's own growth (~1.9x there) leaves less room above it than its young generation, so it marked the
  // whole heap every ~35 jobs to reclaim ~2 MB; at 3x it does so ~6x less often (docs/performance.md, "The tiny
  // job: V8's heap growth in the job processes").
  const childExecArgv = [
    ...execArgv,
    `--max-old-space-size=${config.JOB_MEMORY_LIMIT_MB}`,
    `--heap-growing-percent=${CHILD_HEAP_GROWING_PERCENT}`,
    '--expose-gc',
  ];

  const names = jobQueueNames(config);
  const workerOptions = {
    connection: bullmqConnectionOptions(redisUrl, 'lss-worker'),
    prefix: config.KEY_PREFIX,
    lockDuration: config.LOCK_DURATION_MS,
    stalledInterval: config.STALLED_INTERVAL_MS,
    maxStalledCount: 1,
    useWorkerThreads: false,
    workerForkOptions: {
      execArgv: childExecArgv,
      env: sandboxedEnvironment(config),
      stdio: CHILD_STDIO,
    },
  };
  // The fair share reads and reorders the waiting jobs through a queue of its own connection.
  const mainQueue = new Queue<QueuedJobData>(names.main, {
    connection: bullmqConnectionOptions(redisUrl, 'lss-worker-fair-share'),
    prefix: config.KEY_PREFIX,
  });
  mainQueue.on('error', (err: Error) => log.debug({ err: err.message }, 'fair share queue error'));
  const fairShare = new FairShare(mainQueue, config.WORKER_CONCURRENCY, log);
  const worker = new LimitedWorker<QueuedJobData, ProcessorReturn>(
    names.main,
    file,
    { ...workerOptions, concurrency: config.WORKER_CONCURRENCY },
    limits,
    recordLimit,
    fairShare,
  );
  const smallJobs = new LimitedWorker<QueuedJobData, ProcessorReturn>(
    names.small,
    file,
    { ...workerOptions, concurrency: config.SMALL_JOB_SLOTS },
    limits,
    recordLimit,
  );
  const workers = [worker, smallJobs];

  const subscriber = createSubscriberConnection(redisUrl, 'lss-worker-cancel');
  for (const connection of [commands, subscriber])
    connection.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));

  // Parts of a split analysis carry their job's id in their data, not as their BullMQ id (only the main queue has them).
  const splitJobs = new SplitJobTracker(worker, store, commands, log);
  subscriber.on('message', (_channel: string, id: string) => {
    if (workers.some((w) => w.cancelJob(id, 'cancel requested'))) log.info({ jobId: id }, 'cancel delivered to the running job');
    for (const splitJob of splitJobs.runningOf(id)) worker.cancelJob(splitJob, 'cancel requested');
  });
  if (!(await subscribeWhenReady(subscriber, store.keys.cancelChannel, 5000)))
    log.warn('cancel channel subscription pending (Redis not reachable yet)');

  for (const w of workers) {
    w.on('error', (err) => log.error({ err, queue: w.name }, 'worker error'));
    w.on('active', (job: Job<QueuedJobData>) => log.debug({ jobId: job.id, attempt: job.attemptsMade + 1, queue: w.name }, 'job taken'));
    w.on('stalled', (jobId: string) => log.warn({ jobId }, 'job stalled (its worker died or hung); requeued'));
    w.on('failed', (job: Job<QueuedJobData> | undefined, error: Error) => recordFailure(job, error));
  }
  function recordFailure(job: Job<QueuedJobData> | undefined, error: Error): void {
    if (!job?.id) return;
    const id = job.id;
    const jobLog = log.child({ jobId: id });
    const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    // BullMQ's "Unexpected exit code: null signal: SIGKILL": the child was killed from outside (the service's own limits
    // are recorded as such before they kill). Said without the internals, which the worker logs keep.
    const killed = /signal: SIG/.test(error.message);
    const cause = killed
      ? "its process was stopped from outside the service (as the system's out-of-memory killer or an operator stops it)"
      : 'because of an internal error';
    // Cancellations and invalid problems are recorded by the processor; finish() is then a no-op.
    const record = final
      ? keptRuns(store, id, jobLog).then((kept) =>
          store.finish(id, {
            status: 'failed',
            error: makeProblem(
              'internal-error',
              `The job failed after ${job.attemptsMade} attempt(s)${killed ? ': on the last one ' : ' '}${cause}; ` +
                `the worker logs have the cause (job id ${id}).`,
              { instance: `/v1/jobs/${id}` },
            ),
            ...kept,
          }),
        )
      : store.markRetrying(id);
    record
      .then((changed) => {
        if (final && changed) jobLog.error({ reason: error.message, attempts: job.attemptsMade }, 'job failed after its last attempt');
        else if (!final) jobLog.warn({ reason: error.message, attempts: job.attemptsMade }, 'job attempt failed; BullMQ retries it');
      })
      .catch((err: unknown) => jobLog.error({ err }, 'could not record the job failure'));
  }

  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const studies = new StudyStore(commands, config.KEY_PREFIX, config.STUDY_QUEUE_NAME, config.JOB_TTL_SECONDS);
  const notify = await startNotifyWorker({ ...config, REDIS_URL: redisUrl }, notifiedResources(store, studies, config), log);
  // Jobs reach the small-job slots only with API keys; there, their child processes are started
  // ahead, so that a small job starts at once rather than after a process start.
  if (config.AUTH_MODE === 'keys') await smallJobs.prestart(config.SMALL_JOB_SLOTS);
  log.info(
    { queue: names.main, concurrency: config.WORKER_CONCURRENCY, smallJobSlots: config.SMALL_JOB_SLOTS, processor: file },
    'worker ready',
  );

  return {
    worker,
    smallJobs,
    async close(timeoutMs: number) {
      await closeConnection(subscriber);
      // The callbacks stop with the jobs, not after them: after, they outlasted the shutdown's grace.
      const notifyClosed = notify.close(timeoutMs).catch((err: unknown) => log.warn({ err }, 'could not close the callback delivery'));
      const closed = await Promise.all(workers.map((w) => closeBullmq(w, timeoutMs)));
      if (!closed.every(Boolean)) {
        // Their locks expire and another worker runs them again; the process is about to exit.
        log.warn({ timeoutMs }, 'running jobs did not finish in time (or Redis is gone); leaving them to other workers');
      }
      await notifyClosed;
      await closeBullmq(mainQueue);
      await closeConnection(commands);
      log.info('worker closed');
    },
  };
}

/** The runs (and what they used) of a job's last checkpoint, to store with its failure; none when it has none or cannot be read. */
async function keptRuns(store: JobStore, id: string, log: Logger): Promise<Pick<Outcome, 'result' | 'runs'>> {
  try {
    const bytes = await store.checkpoint(id);
    return (bytes && outcomeOfCheckpoint(decodeCheckpoint(bytes))) ?? {};
  } catch (err) {
    log.warn({ err, jobId: id }, 'the checkpoint of a stopped job could not be read; its runs are not kept');
    return {};
  }
}
