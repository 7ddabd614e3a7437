/**
 * The sandboxed BullMQ processor: BullMQ runs this module in child processes of a worker (reused
 * from job to job) and calls the default export for each job, whose BullMQ data is only the job
 * id. It orchestrates: JobStore.begin (marks the attempt started and returns the job ready to
 * compute, from the job document and its stored inputs), computeJob (through runCooperatively: the
 * child's event loop stays free to receive Cancel and send progress), JobStore.finish. Every
 * CHECKPOINT_INTERVAL_MS the attempt stores a checkpoint, which a retried attempt resumes from
 * (./checkpoints.ts).
 *
 * Outcomes: succeeded (returns); cancelled, or failed on a mathematical problem (document written,
 * then UnrecoverableError so BullMQ does not retry); anything else is rethrown as is, and BullMQ
 * retries it with backoff (the worker process records the final failure, see ./worker.ts).
 */
import { reportComputed } from './attemptComputed.js';
import { UnrecoverableError, type SandboxedJob } from 'bullmq';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { WorkProgress } from '../solvers/cooperative.js';
import { SolverError } from '../solvers/errors.js';
import { useBackend } from '../solvers/linalg/backend.js';
import { CheckpointWriter } from './checkpoints.js';
import { LatestWriter } from './latestWriter.js';
import { computeJob } from './computeJob.js';
import { JobError } from './errors.js';
import { createLogger } from './logger.js';
import { problemFromTypedError } from './problems.js';
import { isSplitJob, processSplitJob, splitAnalysisApplies, startSplitAnalysis } from './splitAnalysis/splitAnalysisFlow.js';
import { matrixDigest } from './matrixDigest.js';
import type { ProcessorReturn, QueuedJobData } from './queuedJob.js';
import { CheckpointUnreadableError, decodeCheckpoint, type JobCheckpoint } from './store/checkpointCodec.js';
import { JobStore, type RunRecord } from './store/jobStore.js';
import { createResilientConnection } from './store/redisConnection.js';
import type { JobProgress } from './types.js';
import { WORKER_CONFIG_ENV } from './workerConfig.js';

// A forked child outlives a SIGKILLed worker unless it leaves when the IPC channel closes: ./sandboxGuard.ts, preloaded.

function workerConfig(): Config & { REDIS_URL: string } {
  const config = JSON.parse(process.env[WORKER_CONFIG_ENV] ?? 'null') as Config | null;
  if (!config?.REDIS_URL)
    throw new Error(`${WORKER_CONFIG_ENV} is not set: this module runs only as a BullMQ sandboxed processor started by src/jobs/worker.ts`);
  return { ...config, REDIS_URL: config.REDIS_URL };
}

const config = workerConfig();
const logger = createLogger(config, { role: 'processor' });
// The numerical backend, chosen once per child process (startWorker has checked that a forced native one loads).
const numericBackend = useBackend(config.NUMERIC_BACKEND);
// Threads (the solver's, and OpenBLAS's on the native backend): computeJob gives each job its share
// of the host's cores among the jobs running at that moment (threadBudget in ./computeJob.ts).
let store: JobStore | undefined;

/** One connection per child process, reused by every job the child runs. */
function jobStore(): JobStore {
  store ??= new JobStore(
    createResilientConnection(config.REDIS_URL, 'lss-processor'),
    config.KEY_PREFIX,
    config.QUEUE_NAME,
    config.JOB_TTL_SECONDS,
  );
  return store;
}

export default async function processJob(
  job: SandboxedJob<QueuedJobData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<ProcessorReturn> {
  const { id } = job.data;
  const log = logger.child({ jobId: id, attempt: job.attemptsMade + 1 });
  const store = jobStore();
  const abort = signal ?? new AbortController().signal;
  let run: DeferredRunRecord | undefined;
  // The parts of a split analysis and the parent that combines them (./splitAnalysis/splitAnalysisFlow.ts).
  if (isSplitJob(job)) return processSplitJob(job, { config, store, log: log.child({ splitJob: job.id }), signal: abort });

  try {
    const limits = { maxN: config.MAX_N, maxNSparse: config.MAX_N_SPARSE };
    const start = await store.begin(id, new Date().toISOString(), limits, numericBackend);
    if (start.state === 'missing') {
      log.warn('job document missing (expired or deleted); nothing to do');
      return { status: 'skipped' };
    }
    if (start.state === 'cancel-requested' || start.state === 'cancelled') {
      if (start.state === 'cancel-requested') await store.finish(id, { status: 'cancelled' });
      log.info('job cancelled before it started');
      throw new UnrecoverableError('Job cancelled before it started');
    }
    if (start.state !== 'running') {
      log.warn({ state: start.state }, 'job already finished; nothing to do');
      return { status: 'skipped' };
    }

    const ready = start.job;
    // begin recorded the backend; a generated or stored matrix's digest is computed here.
    if (ready.digestPending) {
      run = deferredRunRecord(store, id, { storage: ready.matrix.storage, backend: numericBackend, digest: matrixDigest(ready.matrix.A) });
    }
    if (splitAnalysisApplies(config, ready)) {
      await run?.flush();
      return await startSplitAnalysis(ready, { config, store, log, signal: abort });
    }
    const began = performance.now();
    // At debug: the line that ends the attempt (succeeded, cancelled, failed) carries the same fields, one line per job at info.
    const described = { type: ready.type, n: ready.n, m: ready.m, algorithms: ready.algorithms, backend: numericBackend };
    log.debug(described, 'job started');
    // Stopped by the worker's cancel message, or by the job's own look at its document when it reports
    // progress: Redis pub/sub delivers at most once, and a message published while the worker's
    // subscription reconnects is lost.
    const stop = new AbortController();
    if (abort.aborted) stop.abort(abort.reason);
    else abort.addEventListener('abort', () => stop.abort(abort.reason), { once: true });
    const checkpoints = new CheckpointWriter((bytes) => store.saveCheckpoint(id, bytes), log);
    const outcome = await computeJob(ready, {
      signal: stop.signal,
      onProgress: progressReporter(job, store, id, config.PROGRESS_INTERVAL_MS, log, () => stop.abort('cancel requested')),
      traceCap: config.TRACE_CAP,
      checkpoints: {
        resumeFrom: earlierCheckpoint(start.checkpoint, log),
        intervalMs: config.CHECKPOINT_INTERVAL_MS,
        save: (checkpoint) => checkpoints.save(checkpoint),
        discarded: (reason) => log.warn({ reason }, 'the checkpoint does not fit this run; it starts over'),
      },
    });
    // What remains is writing the outcome: the worker's time limit no longer counts it as the job's.
    reportComputed();
    // A checkpoint written after finish() would be refused (the job no longer runs); this only keeps the order plain.
    await checkpoints.flush();
    const elapsedMs = Math.round(performance.now() - began);
    if (outcome.status === 'cancelled') {
      await store.finish(id, { status: 'cancelled', result: outcome.result, runs: outcome.runs, run: await run?.take() });
      log.info({ ...described, elapsedMs, runs: outcome.runs.length }, 'job cancelled');
      throw new UnrecoverableError('Job cancelled');
    }
    const done: JobProgress = { phase: 'done', fraction: 1, updatedAt: new Date().toISOString() };
    const recorded = await store.finish(id, {
      status: 'succeeded',
      result: outcome.result,
      runs: outcome.runs,
      progress: done,
      run: await run?.take(),
    });
    // Another end written first (a limit the worker recorded while this write waited on a stalled Redis, a deletion): that one stands.
    if (recorded) log.info({ ...described, elapsedMs }, 'job succeeded');
    else log.warn({ ...described, elapsedMs }, 'job computed, but it had already ended otherwise (its document kept that end)');
    return { status: 'succeeded' };
  } catch (error) {
    // Typed errors come only from a running attempt (begin throws them after marking it running).
    if (error instanceof SolverError || error instanceof JobError) {
      const problem = problemFromTypedError(error)!;
      problem.instance = `/v1/jobs/${id}`;
      // A record whose own write failed is left out: the failure is recorded all the same.
      await store.finish(id, { status: 'failed', error: problem, run: await run?.take().catch(() => undefined) });
      log.info({ code: problem.code, detail: problem.detail }, 'job failed: invalid problem');
      throw new UnrecoverableError(error.message);
    }
    if (!(error instanceof UnrecoverableError)) log.error({ err: error }, 'job attempt failed');
    await run?.flush().catch((err: unknown) => log.warn({ err }, 'the run record was not stored'));
    throw error;
  }
}

/** How long a run's record (the matrix's digest) waits to go with the job's end instead: a tiny job then makes one round trip less. */
const RUN_RECORD_DELAY_MS = 100;

interface DeferredRunRecord {
  /** Stored now unless already sent; rejects when the write failed. */
  flush(): Promise<void>;
  /**
   * The record for finish's MULTI when not sent yet (the timer cleared); else undefined once its
   * write succeeded (a failed one rejects: the attempt fails before finish).
   */
  take(): Promise<RunRecord | undefined>;
}

/** A run's record, written RUN_RECORD_DELAY_MS into the run (the computation yields to timers), or with its end when that comes first. */
function deferredRunRecord(store: JobStore, id: string, record: RunRecord): DeferredRunRecord {
  let sent: Promise<void> | undefined;
  const send = (): Promise<void> => {
    clearTimeout(timer);
    sent ??= store.recordRun(id, record);
    return sent;
  };
  const timer = setTimeout(() => void send().catch(() => undefined), RUN_RECORD_DELAY_MS);
  return {
    flush: send,
    async take() {
      if (sent) return sent.then(() => undefined);
      clearTimeout(timer);
      return record;
    },
  };
}

/** What an earlier attempt of the job saved (../checkpoints.ts), or null: none, or one this version cannot read (logged). */
function earlierCheckpoint(bytes: Buffer | null, log: Logger): JobCheckpoint | null {
  if (bytes === null) return null;
  try {
    const checkpoint = decodeCheckpoint(bytes);
    const { current } = checkpoint;
    log.info(
      {
        bytes: bytes.length,
        analysis: checkpoint.analysis !== null,
        runsDone: checkpoint.runs.length,
        run: current?.algorithm,
        iteration: current?.iteration,
      },
      'resuming from the checkpoint of an earlier attempt',
    );
    return checkpoint;
  } catch (error) {
    if (!(error instanceof CheckpointUnreadableError)) throw error;
    log.warn({ reason: error.message, bytes: bytes.length }, 'the stored checkpoint is unreadable; the job starts over');
    return null;
  }
}

/**
 * At most one report per interval, the first one an interval after the start: short jobs send
 * none, long ones one every PROGRESS_INTERVAL_MS (plus at most one time slice). Each stored report
 * also reads the job's cancel request: `cancelRequested` is called when there is one.
 */
function progressReporter(
  job: SandboxedJob<QueuedJobData>,
  store: JobStore,
  id: string,
  intervalMs: number,
  log: Logger,
  cancelRequested: () => void,
): (progress: WorkProgress) => void {
  let last = performance.now();
  // One save at a time, the newest report next (concurrent writes could land out of order).
  const saves = new LatestWriter<JobProgress>(
    async (report) => {
      if (await store.saveProgress(id, report)) cancelRequested();
    },
    (err) => log.warn({ err }, 'progress not stored'),
  );
  return (progress) => {
    const now = performance.now();
    if (now - last < intervalMs) return;
    last = now;
    const report: JobProgress = { ...progress, updatedAt: new Date().toISOString() };
    job.updateProgress(report).catch((err: unknown) => log.warn({ err }, 'progress event not sent'));
    saves.save(report);
  };
}
