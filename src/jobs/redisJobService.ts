/**
 * JobService over Redis and BullMQ, for the API process.
 *
 * - Job documents, inputs and outputs: ./store/jobStore.ts (the document is the source of truth).
 * - Queue: a BullMQ Queue sharing the service's fail-fast command connection, so that with Redis
 *   down every call fails at once with StoreUnavailableError (the API answers 503).
 * - Events for subscribers (SSE): status changes come from the status channel, which every
 *   document writer publishes to right after writing (so reading the document then shows the new
 *   state); progress comes from BullMQ's QueueEvents ('progress'), started on first use.
 */
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AlgorithmId } from '../solvers/algorithms/registry.js';
import { InvalidCursorError, JobError, JobNotFinishedError, JobNotFoundError, RunNotFoundError, StoreUnavailableError } from './errors.js';
import { JOB_ID_PATTERN, newJobId } from './jobId.js';
import type { QueuedJobData } from './queuedJob.js';
import { fieldsFromStatusMessage, jobFromDocument, type StoredInput } from './store/jobDocument.js';
import { STATUS_FIELDS } from './store/scripts.js';
import { JobStore, type RunContext } from './store/jobStore.js';
import {
  createFailFastConnection,
  createSubscriberConnection,
  isConnectionError,
  subscribeWhenReady,
  bullmqConnectionOptions,
  waitUntilConnected,
} from './store/redisConnection.js';
import {
  FINISHED_STATUSES,
  type Job,
  type JobEvent,
  type JobPage,
  type JobProgress,
  type JobService,
  type JobSpec,
  type JobStatus,
  type JobSummary,
  type TraceView,
} from './types.js';

/** Most index entries one list request reads (status filters over long histories return short pages, with a cursor). */
const LIST_SCAN_BUDGET = 5000;
/** Subscribers' statuses are re-read this often, in case a status message was lost (reconnects). */
const STATUS_RESYNC_MS = 5000;
/** Bound on waits for Redis that must not hang a request. */
const READY_TIMEOUT_MS = 2000;

interface Subscription {
  listener: (event: JobEvent) => void;
  lastStatus: JobStatus | null;
  ready: boolean;
  pending: JobEvent[];
}

export class RedisJobService implements JobService {
  private readonly store: JobStore;
  private readonly queue: Queue<QueuedJobData>;
  private queueEvents: QueueEvents | null = null;
  private readonly subscriptions = new Map<string, Set<Subscription>>();
  private readonly finishedListeners = new Set<(job: Job) => void>();
  private readonly resyncTimer: NodeJS.Timeout;
  private closed = false;

  private constructor(
    private readonly config: Config & { REDIS_URL: string },
    private readonly log: Logger,
    private readonly commands: Redis,
    private readonly queueConnection: Redis,
    private readonly statusSubscriber: Redis,
  ) {
    this.store = new JobStore(commands, config.KEY_PREFIX, config.QUEUE_NAME, config.JOB_TTL_SECONDS);
    this.queue = new Queue<QueuedJobData>(config.QUEUE_NAME, {
      connection: queueConnection,
      prefix: config.KEY_PREFIX,
      defaultJobOptions: {
        attempts: config.JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: config.JOB_BACKOFF_MS },
        removeOnComplete: { age: config.JOB_TTL_SECONDS },
        removeOnFail: { age: config.JOB_TTL_SECONDS },
      },
    });
    this.queue.on('error', (err: Error) => this.log.debug({ err: err.message }, 'queue error'));
    statusSubscriber.on('message', (_channel: string, message: string) => this.onStatusMessage(message));
    this.resyncTimer = setInterval(() => this.resyncSubscribers(), STATUS_RESYNC_MS);
    this.resyncTimer.unref();
  }

  /** Connect (waiting a little for Redis, but starting anyway: readiness is reported by isReady). */
  static async start(config: Config, logger: Logger): Promise<RedisJobService> {
    if (!config.REDIS_URL) throw new Error('RedisJobService needs REDIS_URL');
    const log = logger.child({ component: 'jobs' });
    // The store's own connection: BullMQ defines its ~50 scripts on the Queue's connection, and
    // ioredis copies every defined script onto each pipeline/MULTI created on that connection.
    const commands = createFailFastConnection(config.REDIS_URL, 'lss-api');
    const queueConnection = createFailFastConnection(config.REDIS_URL, 'lss-api-queue');
    const subscriber = createSubscriberConnection(config.REDIS_URL, 'lss-api-status');
    logConnectionErrors(commands, log, 'commands');
    logConnectionErrors(queueConnection, log, 'queue');
    logConnectionErrors(subscriber, log, 'status subscriber');
    const service = new RedisJobService({ ...config, REDIS_URL: config.REDIS_URL }, log, commands, queueConnection, subscriber);
    if (!(await waitUntilConnected(commands, 5000)) || !(await waitUntilConnected(queueConnection, 1000)))
      log.warn({ redis: config.REDIS_URL }, 'Redis not reachable yet; the API answers 503 until it is');
    // Status messages published before this subscription is active would be missed.
    if (!(await subscribeWhenReady(subscriber, service.store.keys.statusChannel, 5000))) log.warn('status channel subscription pending');
    return service;
  }

  async create(spec: JobSpec): Promise<Job> {
    return this.guard(async () => {
      const now = Date.now();
      const id = newJobId(now);
      const createdAt = new Date(now).toISOString();
      const input: StoredInput =
        spec.matrix.kind === 'generator' ? { format: 'generator', spec: spec.matrix.spec } : { format: spec.matrix.format };
      const data: QueuedJobData = {
        id,
        type: spec.type,
        n: spec.n,
        m: spec.m,
        algorithms: spec.algorithms,
        options: spec.options,
        input,
        hasRhs: spec.rhs !== null,
      };
      await this.store.create(
        { ...data, createdAt },
        { matrix: spec.matrix.kind === 'dense' ? spec.matrix.A.data : null, rhs: spec.rhs, assignment: spec.assignment },
      );
      try {
        await this.queue.add(spec.type, data, { jobId: id });
      } catch (error) {
        await this.store.discard(id).catch(() => undefined);
        throw error;
      }
      return {
        id,
        type: spec.type,
        status: 'queued',
        progress: null,
        createdAt,
        startedAt: null,
        finishedAt: null,
        n: spec.n,
        m: spec.m,
        algorithms: spec.algorithms,
        options: spec.options,
        attempts: 0,
      };
    });
  }

  async get(id: string): Promise<Job> {
    return this.guard(async () => {
      const fields = JOB_ID_PATTERN.test(id) ? await this.store.document(id) : null;
      if (!fields) throw new JobNotFoundError(id);
      return jobFromDocument(fields);
    });
  }

  async list(query: { status?: JobStatus; limit: number; cursor?: string }): Promise<JobPage> {
    const { status, limit } = query;
    const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
    return this.guard(async () => {
      const batchSize = status ? Math.max(100, 4 * limit) : limit + 1;
      const matches: JobSummary[] = [];
      const expired: string[] = [];
      let lastSeen = before;
      let exhausted = false;
      let scanned = 0;
      while (matches.length <= limit && !exhausted && scanned < LIST_SCAN_BUDGET) {
        const ids = await this.store.indexPage(lastSeen, batchSize);
        exhausted = ids.length < batchSize;
        const summaries = await this.store.summaries(ids);
        for (let k = 0; k < ids.length && matches.length <= limit; k++) {
          lastSeen = ids[k];
          scanned++;
          const summary = summaries[k];
          if (summary === null) expired.push(ids[k]);
          else if (status === undefined || summary.status === status) matches.push(summary);
        }
      }
      await this.store.dropFromIndex(expired);
      if (matches.length > limit) return { items: matches.slice(0, limit), nextCursor: encodeCursor(matches[limit - 1].id) };
      if (exhausted || lastSeen === null) return { items: matches, nextCursor: null };
      // Scan budget spent: a short page, and a cursor to continue from where the scan stopped.
      return { items: matches, nextCursor: encodeCursor(lastSeen) };
    });
  }

  async cancel(id: string): Promise<Job> {
    return this.guard(async () => {
      if (!JOB_ID_PATTERN.test(id)) throw new JobNotFoundError(id);
      const answer = await this.store.cancel(id);
      if (answer === 'missing') throw new JobNotFoundError(id);
      if (answer === 'cancelled-now') {
        // Fails (0) only when a worker has just taken the job: its processor then finds it cancelled.
        await this.queue
          .remove(id)
          .catch((err: unknown) => this.log.warn({ err, jobId: id }, 'could not remove the cancelled job from the queue'));
      } else if (answer === 'running') {
        await this.store.publishCancel(id);
      }
      return this.get(id);
    });
  }

  async remove(id: string): Promise<void> {
    return this.guard(async () => {
      if (!JOB_ID_PATTERN.test(id)) throw new JobNotFoundError(id);
      const answer = await this.store.delete(id);
      if (answer === 'missing') throw new JobNotFoundError(id);
      if (answer !== 'deleted') throw new JobNotFinishedError(id, answer);
      await this.queue.remove(id).catch((err: unknown) => this.log.warn({ err, jobId: id }, 'could not remove the job from BullMQ'));
    });
  }

  async trace(id: string, algorithm: AlgorithmId): Promise<TraceView> {
    return this.guard(async () => {
      if (!JOB_ID_PATTERN.test(id)) throw new JobNotFoundError(id);
      const trace = await this.store.trace(id, algorithm);
      if (!trace) throw explainMissingRun(id, algorithm, await this.store.runContext(id));
      return {
        algorithm,
        iteration: Array.from(trace.iteration),
        relativeResidual: Array.from(trace.relativeResidual),
        relativeError: trace.relativeError ? Array.from(trace.relativeError) : null,
        consensusDistance: trace.consensusDistance ? Array.from(trace.consensusDistance) : null,
        totalIterations: trace.totalIterations,
        cap: trace.cap,
        downsampled: trace.downsampled,
      };
    });
  }

  async solution(id: string, algorithm: AlgorithmId): Promise<Float64Array> {
    return this.guard(async () => {
      if (!JOB_ID_PATTERN.test(id)) throw new JobNotFoundError(id);
      const x = await this.store.solution(id, algorithm);
      if (!x) throw explainMissingRun(id, algorithm, await this.store.runContext(id));
      return x;
    });
  }

  async subscribe(id: string, listener: (event: JobEvent) => void): Promise<() => void> {
    const subscription: Subscription = { listener, lastStatus: null, ready: false, pending: [] };
    let set = this.subscriptions.get(id);
    if (!set) this.subscriptions.set(id, (set = new Set()));
    set.add(subscription);
    const unsubscribe = (): void => {
      const current = this.subscriptions.get(id);
      current?.delete(subscription);
      if (current?.size === 0) this.subscriptions.delete(id);
    };
    try {
      // Registered before reading, so that no change between the read and now is missed.
      const job = await this.get(id);
      await this.startQueueEvents();
      subscription.lastStatus = job.status;
      listener({ event: 'status', data: { status: job.status, job } });
      subscription.ready = true;
      for (const event of subscription.pending.splice(0)) this.deliver(subscription, event);
      return unsubscribe;
    } catch (error) {
      unsubscribe();
      throw error;
    }
  }

  async isReady(): Promise<boolean> {
    try {
      return (await withTimeout(this.commands.ping(), READY_TIMEOUT_MS)) === 'PONG';
    } catch {
      return false;
    }
  }

  async queueCounts(): Promise<Record<string, number>> {
    return this.guard(() => this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'));
  }

  onFinished(listener: (job: Job) => void): () => void {
    this.finishedListeners.add(listener);
    return () => this.finishedListeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.resyncTimer);
    this.subscriptions.clear();
    this.finishedListeners.clear();
    await this.queueEvents?.close().catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    for (const connection of [this.statusSubscriber, this.queueConnection, this.commands])
      await connection.quit().catch(() => connection.disconnect());
  }

  // --- events -------------------------------------------------------------------------------

  private deliver(subscription: Subscription, event: JobEvent): void {
    if (!subscription.ready) {
      subscription.pending.push(event);
      return;
    }
    if (event.event === 'status') {
      if (event.data.status === subscription.lastStatus) return;
      subscription.lastStatus = event.data.status;
    }
    try {
      subscription.listener(event);
    } catch (err) {
      this.log.warn({ err }, 'job event listener threw');
    }
  }

  private onStatusMessage(message: string): void {
    const fields = fieldsFromStatusMessage(message, STATUS_FIELDS);
    if (!fields) return;
    const id = fields.id;
    const status = fields.status as JobStatus;
    // For metrics: the message has every field but the result, so no read is needed.
    if (FINISHED_STATUSES.includes(status) && this.finishedListeners.size > 0) {
      const job = jobFromDocument(fields);
      for (const listener of this.finishedListeners) listener(job);
    }
    if (!this.subscriptions.get(id)?.size) return;
    this.get(id)
      .then((job) => {
        for (const subscription of this.subscriptions.get(id) ?? [])
          this.deliver(subscription, { event: 'status', data: { status: job.status, job } });
      })
      .catch((err: unknown) => {
        if (!(err instanceof JobNotFoundError)) this.log.debug({ err, jobId: id }, 'could not read job after status change');
      });
  }

  private onProgress(jobId: string, data: unknown): void {
    const subscribers = this.subscriptions.get(jobId);
    if (!subscribers) return;
    for (const subscription of subscribers) this.deliver(subscription, { event: 'progress', data: data as JobProgress });
  }

  private resyncSubscribers(): void {
    for (const [id, subscribers] of this.subscriptions) {
      if (subscribers.size === 0) continue;
      this.get(id)
        .then((job) => {
          for (const subscription of this.subscriptions.get(id) ?? [])
            this.deliver(subscription, { event: 'status', data: { status: job.status, job } });
        })
        .catch(() => undefined);
    }
  }

  private async startQueueEvents(): Promise<void> {
    if (!this.queueEvents) {
      const events = new QueueEvents(this.config.QUEUE_NAME, {
        connection: bullmqConnectionOptions(this.config.REDIS_URL, 'lss-api-events'),
        prefix: this.config.KEY_PREFIX,
      });
      events.on('progress', ({ jobId, data }) => this.onProgress(jobId, data));
      events.on('error', (err: Error) => this.log.debug({ err: err.message }, 'queue events error'));
      this.queueEvents = events;
    }
    await withTimeout(this.queueEvents.waitUntilReady(), READY_TIMEOUT_MS).catch(() => undefined);
  }

  /** Typed errors pass; Redis connection failures become StoreUnavailableError. */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof JobError) throw error;
      if (isConnectionError(error)) throw new StoreUnavailableError((error as Error).message);
      throw error;
    }
  }
}

function explainMissingRun(id: string, algorithm: AlgorithmId, context: RunContext): JobError {
  if (!context.exists) return new JobNotFoundError(id);
  if (context.type === 'analyze') return new RunNotFoundError(id, algorithm, 'analyze jobs run no algorithms (submit a solve job)');
  if (!context.algorithms.includes(algorithm)) {
    return new RunNotFoundError(id, algorithm, `it was not requested (the job runs ${context.algorithms.join(', ') || 'no algorithms'})`);
  }
  if (context.status === 'queued' || context.status === 'running')
    return new RunNotFoundError(id, algorithm, `the job is ${context.status}; runs are stored when it ends`);
  if (context.status === 'cancelled') return new RunNotFoundError(id, algorithm, 'the job was cancelled before this run started');
  if (context.status === 'failed') return new RunNotFoundError(id, algorithm, 'the job failed before this run');
  return new RunNotFoundError(id, algorithm, 'its stored output has expired');
}

const CURSOR_PREFIX = 'j1:';

function encodeCursor(id: string): string {
  return Buffer.from(CURSOR_PREFIX + id, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.slice(CURSOR_PREFIX.length);
  if (!text.startsWith(CURSOR_PREFIX) || !JOB_ID_PATTERN.test(id)) throw new InvalidCursorError(cursor);
  return id;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Command timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One warning when a connection starts failing, then at most one every 30 s. */
function logConnectionErrors(redis: Redis, log: Logger, name: string): void {
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    const now = Date.now();
    if (now - lastLogged < 30_000) return;
    lastLogged = now;
    log.warn({ connection: name, err: err.message }, 'redis connection error');
  });
  redis.on('ready', () => {
    if (lastLogged !== 0) log.info({ connection: name }, 'redis connection restored');
    lastLogged = 0;
  });
}
