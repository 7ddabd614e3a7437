/**
 * The API side's BullMQ queues, kept fail-fast: the jobs' queue and the one of the workers'
 * small-job slots (../apiKeys/fairShare.ts). They share one fail-fast connection with nothing else
 * (BullMQ defines its ~50 scripts on it, and ioredis copies every defined script onto each
 * pipeline or MULTI made on that connection, so the job store has its own).
 *
 * BullMQ runs no command on a Queue before the Queue's connection has been ready once and its
 * Redis version checked: until then each call awaits that initialization without bound, whatever
 * the connection's own options. With Redis down when the API started, `getJobCounts` (GET /metrics)
 * hung until Redis came back while the store's calls failed at once. So calls made while the
 * queue's connection is not ready throw StoreUnavailableError at once; once it is, the
 * connection's fail-fast options apply to every command.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { StoreUnavailableError } from '../errors.js';
import { closeBullmq, withTimeout } from '../store/redisConnection.js';
import { jobQueueNames, type QueuedJobData } from '../queuedJob.js';
import type { JobType } from '../types.js';

/** The BullMQ states GET /metrics reports. */
const COUNTED_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'] as const;

/** Where a job is queued: its fairness priority and owner (AUTH_MODE=keys), and whether it goes to the small-job slots. */
export interface Placement {
  priority?: number;
  owner?: string;
  small?: boolean;
}

export class JobQueue {
  private readonly queue: Queue<QueuedJobData>;
  private readonly smallJobs: Queue<QueuedJobData>;
  /** BullMQ's initialization is done: its calls no longer wait for the connection. */
  private initialized = false;

  constructor(
    config: Config,
    private readonly connection: Redis,
    log: Logger,
  ) {
    const names = jobQueueNames(config);
    const options = {
      connection,
      prefix: config.KEY_PREFIX,
      defaultJobOptions: {
        attempts: config.JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: config.JOB_BACKOFF_MS },
        removeOnComplete: { age: config.JOB_TTL_SECONDS },
        removeOnFail: { age: config.JOB_TTL_SECONDS },
      },
    };
    this.queue = new Queue<QueuedJobData>(names.main, options);
    this.smallJobs = new Queue<QueuedJobData>(names.small, options);
    for (const queue of [this.queue, this.smallJobs]) queue.on('error', (err: Error) => log.debug({ err: err.message }, 'queue error'));
    this.bothReady().then(
      () => (this.initialized = true),
      (err: unknown) => log.error({ err }, 'the BullMQ queue could not initialize; jobs cannot be queued'),
    );
  }

  /** Calls reach Redis now, without waiting for a connection. */
  get usable(): boolean {
    return this.initialized && this.connection.status === 'ready';
  }

  /** Resolves true once the queue is usable, or false after `timeoutMs` (it becomes usable when Redis answers). */
  async waitUntilUsable(timeoutMs: number): Promise<boolean> {
    try {
      await withTimeout(this.bothReady(), timeoutMs);
      this.initialized = true;
    } catch {
      // Not yet: calls answer StoreUnavailableError until it is.
    }
    return this.usable;
  }

  /**
   * Queue job `id` (named by its type, for people reading the queue); the job document holds
   * everything else. `priority` (1 first; see ../apiKeys/tenantUsage.ts) takes turns between API keys;
   * a small job goes to the workers' small-job slots, in arrival order.
   */
  async add(id: string, type: JobType, placement: Placement = {}): Promise<void> {
    const { priority, owner, small } = placement;
    const data: QueuedJobData = owner === undefined ? { id } : { id, owner };
    if (small) await this.ready(this.smallJobs).add(type, data, { jobId: id });
    else await this.ready(this.queue).add(type, data, { jobId: id, ...(priority === undefined ? {} : { priority }) });
  }

  /** 1 when removed, 0 when BullMQ could not (a worker holds its lock) or has no such job. */
  async remove(id: string): Promise<number> {
    const removed = await this.ready(this.queue).remove(id);
    return removed === 1 ? 1 : this.ready(this.smallJobs).remove(id);
  }

  /** Jobs by BullMQ state, over both queues. */
  async counts(): Promise<Record<string, number>> {
    const [main, small] = await Promise.all([this.queue, this.smallJobs].map((queue) => this.ready(queue).getJobCounts(...COUNTED_STATES)));
    return Object.fromEntries(Object.entries(main).map(([state, count]) => [state, count + (small[state] ?? 0)]));
  }

  async close(): Promise<void> {
    await Promise.all([this.queue, this.smallJobs].map((queue) => closeBullmq(queue)));
  }

  private async bothReady(): Promise<void> {
    await Promise.all([this.queue.waitUntilReady(), this.smallJobs.waitUntilReady()]);
  }

  private ready(queue: Queue<QueuedJobData>): Queue<QueuedJobData> {
    if (!this.usable) {
      throw new StoreUnavailableError(`the queue's Redis connection is ${this.initialized ? this.connection.status : 'not ready yet'}`);
    }
    return queue;
  }
}
