/**
 * One large analysis over many workers (the paper's Algorithm 2), as a BullMQ flow on
 * the service's own queue, run by the sandboxed processor (../processor.ts) like any job:
 *  1. the job's attempt (the coordinator) plans the parts (src/solvers/analysis/splitAnalysis.ts)
 *     and adds a FlowProducer parent (SPLIT_COMBINE_JOB) with one child per part (SPLIT_PART_JOB),
 *     largest first, then returns: the job document stays 'running';
 *  2. any worker takes a part: it reads the job's inputs (a generator is run again, a dense matrix
 *     read from the job's key), builds the machines' bases when the part needs them (cached in the
 *     child process for the job's next parts), computes, and stores its result under the job's keys;
 *  3. when every part is done BullMQ hands the parent to a worker, which combines the results into
 *     the same Analysis one worker computes, finishes the document and deletes the parts' keys.
 * What crosses Redis: the Gram blocks G_ij (n^2 / 2 doubles in all: lambda_max(S) needs all of them,
 * and recomputing them is the analysis' largest cost) and small per-row and per-pair arrays. The
 * bases Q_i (n^2 doubles) are not shipped: rebuilding them from A costs a few % of a part and a child
 * builds them once per job, where reading and decoding n^2 doubles from Redis took as long (measured
 * at n = 4000: 3-6 s to write or read 128 MB through ioredis on this loaded host, 6 s to rebuild).
 *
 * Progress: each part adds its work done to a hash; the job's progress ('split-analysis', fraction
 * of all the parts' estimated work) is saved in the document and sent on the job's own BullMQ entry,
 * where the API's event stream listens. Cancel: parts that have not started skip their work, running
 * ones are aborted by their worker (./splitJobTracker.ts), and the parent records 'cancelled'. A part
 * whose worker dies is taken over by another when its lock expires (BullMQ's stalled jobs); a part
 * failing on a mathematical problem (a singular matrix) fails the job with that problem; a part
 * failing after its last attempt fails the job with an internal error (./splitJobTracker.ts).
 */
import { hostname } from 'node:os';
import { FlowProducer, Queue, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import {
  analysisPartWork,
  combineAnalysisPartsWork,
  planAnalysisParts,
  supportSizesOf,
  type AnalysisPartInput,
  type AnalysisPartResult,
} from '../../solvers/analysis/splitAnalysis.js';
import { runCooperatively, type WorkProgress } from '../../solvers/cooperative.js';
import { buildDistributedSystemWork, type DenseSystem } from '../../solvers/distributed/distributedSystem.js';
import { CancelledError, SolverError } from '../../solvers/errors.js';
import { createProblem } from '../../solvers/input/createProblem.js';
import type { DenseProblem } from '../../solvers/problem.js';
import { partitionFromAssignment } from '../../solvers/problem.js';
import { withThreadBudget } from '../computeJob.js';
import { JobError, JobInputMissingError } from '../errors.js';
import { problemFromTypedError } from '../problems.js';
import type { ProcessorReturn, QueuedJobData } from '../queuedJob.js';
import { int32From } from '../store/binary.js';
import { jobSpecFromFields, JOB_SPEC_FIELDS } from '../store/jobDocument.js';
import type { JobStore } from '../store/jobStore.js';
import { readyJobFrom, type ReadyJob } from '../store/readyJob.js';
import { bullmqConnectionOptions, createResilientConnection } from '../store/redisConnection.js';
import { FINISHED_STATUSES, type JobProgress } from '../types.js';
import { decodePartResult, encodePartResult } from './partCodec.js';
import {
  combineJobId,
  partJobId,
  SPLIT_COMBINE_JOB,
  SPLIT_PART_JOB,
  SplitAnalysisKeys,
  type SplitCombineData,
  type SplitPartData,
} from './splitKeys.js';

/** What the processor hands over: its config, job store and logger, and the attempt's cancel signal. */
export interface SplitContext {
  config: Config & { REDIS_URL: string };
  store: JobStore;
  log: Logger;
  signal: AbortSignal;
}

/** Whether a job's analysis runs split (the config's rule; dense analyze jobs only). */
export function splitAnalysisApplies(config: Config, job: Pick<ReadyJob, 'type' | 'n' | 'm' | 'matrix'>): boolean {
  return (
    job.type === 'analyze' &&
    job.matrix.storage === 'dense' &&
    // A tall matrix (more rows than columns) is analysed whole (../../solvers/analysis/analyze.ts).
    job.matrix.A.rows === job.matrix.A.cols &&
    job.n >= config.SPLIT_ANALYSIS_MIN_N &&
    job.m >= config.SPLIT_ANALYSIS_MIN_MACHINES
  );
}

export function isSplitJob(job: { name: string }): boolean {
  return job.name === SPLIT_PART_JOB || job.name === SPLIT_COMBINE_JOB;
}

/** This child process's connections (created on first use). */
let shared: { redis: Redis; flow: FlowProducer; queue: Queue } | undefined;

function connections(config: SplitContext['config']): { redis: Redis; flow: FlowProducer; queue: Queue } {
  if (!shared) {
    const options = { connection: bullmqConnectionOptions(config.REDIS_URL, 'lss-split-analysis'), prefix: config.KEY_PREFIX };
    shared = {
      redis: createResilientConnection(config.REDIS_URL, 'lss-split-analysis-data'),
      flow: new FlowProducer(options),
      queue: new Queue(config.QUEUE_NAME, options),
    };
  }
  return shared;
}

/** Step 1, in the job's attempt: plan the parts and add the flow. */
export async function startSplitAnalysis(job: ReadyJob, ctx: SplitContext): Promise<ProcessorReturn> {
  if (job.matrix.storage !== 'dense') throw new Error('a split analysis needs a dense matrix');
  const { config } = ctx;
  const plan = planAnalysisParts(job.n, job.partition.sizes, supportSizesOf(job.matrix.A, job.partition), config.SPLIT_ANALYSIS_GROUPS);
  const totalWork = plan.reduce((sum, p) => sum + p.work, 0);
  const opts = {
    attempts: config.JOB_ATTEMPTS,
    backoff: { type: 'exponential', delay: config.JOB_BACKOFF_MS },
    removeOnComplete: { age: config.JOB_TTL_SECONDS },
    removeOnFail: { age: config.JOB_TTL_SECONDS },
  };
  const combine: SplitCombineData = { id: job.id, parts: plan.length };
  await connections(config).flow.add({
    name: SPLIT_COMBINE_JOB,
    queueName: config.QUEUE_NAME,
    data: combine,
    opts: { ...opts, jobId: combineJobId(job.id) },
    children: plan.map(({ part, work }, index) => {
      const data: SplitPartData = { id: job.id, index, parts: plan.length, part, work, totalWork };
      return {
        name: SPLIT_PART_JOB,
        queueName: config.QUEUE_NAME,
        data,
        opts: { ...opts, jobId: partJobId(job.id, index), failParentOnFailure: true },
      };
    }),
  });
  ctx.log.info({ parts: plan.length, n: job.n, m: job.m }, 'analysis split over the workers');
  return { status: 'split' };
}

/** Steps 2 and 3: a part, or the parent that combines them (a BullMQ job named SPLIT_PART_JOB or SPLIT_COMBINE_JOB). */
export async function processSplitJob(job: { name: string; data: QueuedJobData }, ctx: SplitContext): Promise<ProcessorReturn> {
  return job.name === SPLIT_PART_JOB ? processPart(job.data as SplitPartData, ctx) : processCombine(job.data as SplitCombineData, ctx);
}

/**
 * 'running' (the parts go on), 'cancelled' (a cancel was asked), or 'over' (finished or gone). A
 * document back to 'queued' (its coordinating attempt is being retried, and adds the same flow,
 * which BullMQ ignores) still counts as running: its parts must not be skipped.
 */
async function jobState(redis: Redis, store: JobStore, id: string): Promise<'running' | 'cancelled' | 'over'> {
  const [status, cancelRequested] = await redis.hmget(store.keys.doc(id), 'status', 'cancelRequested');
  if (status === null || (FINISHED_STATUSES as readonly (string | null)[]).includes(status)) return 'over';
  return cancelRequested === '1' ? 'cancelled' : 'running';
}

/** A child process keeps the inputs (and bases, once built) of the job whose parts it last ran. */
let cached: { id: string; input: AnalysisPartInput; timer: NodeJS.Timeout } | undefined;
/** How long an idle child keeps them (n = 4000: ~400 MB). */
const CACHE_IDLE_MS = 30_000;

async function partInput(redis: Redis, store: JobStore, config: Config, id: string): Promise<AnalysisPartInput> {
  if (cached?.id === id) {
    cached.timer.refresh();
    return cached.input;
  }
  cached = undefined;
  const { keys } = store;
  const [fields, matrix, rhs, assignment] = await Promise.all([
    redis.hmget(keys.doc(id), ...JOB_SPEC_FIELDS),
    redis.getBuffer(keys.matrix(id)),
    redis.getBuffer(keys.rhs(id)),
    redis.getBuffer(keys.assignment(id)),
  ]);
  const spec = jobSpecFromFields(fields);
  if (!spec) throw new JobInputMissingError(id, 'job document');
  const ready = readyJobFrom(spec, { matrix, rhs, assignment }, { maxN: config.MAX_N, maxNSparse: config.MAX_N_SPARSE });
  if (ready.matrix.storage !== 'dense') throw new Error('a split analysis needs a dense matrix');
  // The same problem as computeJob's, so the same bases.
  const dense: DenseProblem = createProblem({ A: ready.matrix.A, rhs: ready.rhs, partition: ready.partition });
  let system: DenseSystem | undefined;
  const input: AnalysisPartInput = {
    A: dense.A,
    partition: dense.partition,
    system: function* () {
      system ??= yield* buildDistributedSystemWork(dense);
      return system;
    },
  };
  const timer = setTimeout(() => (cached = undefined), CACHE_IDLE_MS);
  timer.unref();
  cached = { id, input, timer };
  return input;
}

async function processPart(data: SplitPartData, ctx: SplitContext): Promise<ProcessorReturn> {
  const { config, store, signal } = ctx;
  const { id, index } = data;
  const { redis, queue } = connections(config);
  const keys = new SplitAnalysisKeys(store.keys);
  const log = ctx.log.child({ part: index, kind: data.part.kind });
  if ((await jobState(redis, store, id)) !== 'running') return { status: 'skipped' };
  await redis.multi().sadd(keys.workers(id), `${hostname()}:${process.ppid}`).expire(keys.workers(id), config.JOB_TTL_SECONDS).exec();

  let result: AnalysisPartResult;
  try {
    const input = await partInput(redis, store, config, id);
    result = await withThreadBudget(() =>
      runCooperatively(analysisPartWork(input, data.part), {
        signal,
        onProgress: partProgressReporter(data, ctx, redis, queue, keys),
        progressIntervalMs: config.PROGRESS_INTERVAL_MS,
        sliceMs: 20,
      }),
    );
  } catch (error) {
    if (error instanceof CancelledError) {
      log.info('part cancelled');
      return { status: 'skipped' };
    }
    if (error instanceof SolverError || error instanceof JobError) {
      // A mathematical problem (or a missing input) ends the job as the one-worker analysis would.
      const problem = problemFromTypedError(error)!;
      problem.instance = `/v1/jobs/${id}`;
      if (await store.finish(id, { status: 'failed', error: problem })) await store.publishCancel(id);
      log.info({ code: problem.code }, 'split analysis failed: invalid problem');
      throw new UnrecoverableError(error.message);
    }
    throw error;
  }
  const key = keys.part(id, index);
  await redis
    .multi()
    .del(key)
    .hset(key, encodePartResult(result))
    .expire(key, config.JOB_TTL_SECONDS)
    .hset(keys.progress(id), String(index), String(data.work))
    .expire(keys.progress(id), config.JOB_TTL_SECONDS)
    .exec();
  log.debug('part done');
  return { status: 'succeeded' };
}

/** The job's progress from this part's: every part's work done over the plan's, at most one report per interval. */
function partProgressReporter(
  data: SplitPartData,
  ctx: SplitContext,
  redis: Redis,
  queue: Queue,
  keys: SplitAnalysisKeys,
): (progress: WorkProgress) => void {
  let last = performance.now();
  let sending = false;
  return (progress) => {
    const now = performance.now();
    if (sending || now - last < ctx.config.PROGRESS_INTERVAL_MS || progress.fraction === undefined) return;
    last = now;
    sending = true;
    const done = data.work * Math.min(1, Math.max(0, progress.fraction));
    void (async () => {
      await redis.hset(keys.progress(data.id), String(data.index), String(done));
      const all = await redis.hvals(keys.progress(data.id));
      const fraction = Math.min(1, all.reduce((sum, v) => sum + Number(v), 0) / data.totalWork);
      const report: JobProgress = { phase: 'split-analysis', fraction, updatedAt: new Date().toISOString() };
      await ctx.store.saveProgress(data.id, report);
      // Also on the job's own BullMQ entry (id = the job's id), as the processor's reports are.
      await queue.updateJobProgress(data.id, report);
    })()
      .catch((err: unknown) => ctx.log.warn({ err }, 'split analysis progress not sent'))
      .finally(() => (sending = false));
  };
}

async function processCombine(data: SplitCombineData, ctx: SplitContext): Promise<ProcessorReturn> {
  const { config, store, signal, log } = ctx;
  const { id, parts } = data;
  const { redis } = connections(config);
  const keys = new SplitAnalysisKeys(store.keys);
  const cleanUp = (): Promise<number> => redis.del(...keys.all(id, parts));
  const state = await jobState(redis, store, id);
  if (state !== 'running') {
    if (state === 'cancelled') await store.finish(id, { status: 'cancelled' });
    await cleanUp();
    log.info({ state }, 'split analysis ended before its combine step');
    return { status: 'skipped' };
  }

  const pipeline = redis.pipeline();
  pipeline.hmget(store.keys.doc(id), ...JOB_SPEC_FIELDS);
  pipeline.getBuffer(store.keys.assignment(id));
  for (let k = 0; k < parts; k++) pipeline.hgetallBuffer(keys.part(id, k));
  pipeline.scard(keys.workers(id));
  const replies = (await pipeline.exec()) ?? [];
  const [fieldsReply, assignmentReply, ...rest] = replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
  const workers = Number(rest.pop());
  const spec = jobSpecFromFields(fieldsReply as (string | null)[]);
  const assignment = assignmentReply as Buffer | null;
  if (!spec || !assignment) throw new JobInputMissingError(id, spec ? 'partition' : 'job document');
  const results = (rest as Record<string, Buffer>[]).map(decodePartResult);
  const missing = results.flatMap((r, k) => (r === null ? [k] : []));
  if (missing.length > 0) throw new Error(`split analysis of job ${id}: parts ${missing.join(', ')} left no result`);

  try {
    const partition = partitionFromAssignment(int32From(assignment), spec.m);
    const analysis = await withThreadBudget(() =>
      runCooperatively(combineAnalysisPartsWork(spec.n, partition, results as AnalysisPartResult[], spec.options.tolerance), {
        signal,
        sliceMs: 20,
      }),
    );
    const done: JobProgress = { phase: 'done', fraction: 1, updatedAt: new Date().toISOString() };
    await store.finish(id, {
      status: 'succeeded',
      result: { analysisCompleted: true, analysis, runs: {}, split: { parts, workers } },
      progress: done,
    });
    log.info({ parts, workers }, 'split analysis combined');
  } catch (error) {
    if (error instanceof CancelledError) {
      await store.finish(id, { status: 'cancelled' });
    } else if (error instanceof SolverError) {
      const problemDetails = problemFromTypedError(error)!;
      problemDetails.instance = `/v1/jobs/${id}`;
      await store.finish(id, { status: 'failed', error: problemDetails });
    } else {
      throw error;
    }
  }
  await cleanUp();
  return { status: 'succeeded' };
}
