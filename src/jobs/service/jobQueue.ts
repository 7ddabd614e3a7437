/**
 * The API side's BullMQ Queue, kept fail-fast. It shares one fail-fast connection with nothing
 * else (BullMQ defines its ~50 scripts on it, and ioredis copies every defined script onto each
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
import type { QueuedJobData } from '../queuedJob.js';
import type { JobType } from '../types.js';

/** The BullMQ states GET /metrics reports. */
const COUNTED_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'] as const;

export class JobQueue {
  private readonly queue: Queue<QueuedJobData>;
  /** BullMQ's initialization is done: its calls no longer wait for the connection. */
  private initialized = false;

  constructor(
    config: Config,
    private readonly connection: Redis,
    log: Logger,
  ) {
    this.queue = new Queue<QueuedJobData>(config.QUEUE_NAME, {
      connection,
      prefix: config.KEY_PREFIX,
      defaultJobOptions: {
        attempts: config.JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: config.JOB_BACKOFF_MS },
        removeOnComplete: { age: config.JOB_TTL_SECONDS },
        removeOnFail: { age: config.JOB_TTL_SECONDS },
      },
    });
    this.queue.on('error', (err: Error) => log.debug({ err: err.message }, 'queue error'));
    this.queue.waitUntilReady().then(
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
      await withTimeout(this.queue.waitUntilReady(), timeoutMs);
      this.initialized = true;
    } catch {
      // Not yet: calls answer StoreUnavailableError until it is.
    }
    return this.usable;
  }

  /**
   * Queue job `id` (named by its type, for people reading the queue); the job document holds
   * everything else. `priority` (1 first; see ../keys/tenantUsage.ts) takes turns between API keys.
   */
  async add(id: string, type: JobType, priority?: number): Promise<void> {
    await this.ready().add(type, { id }, { jobId: id, ...(priority === undefined ? {} : { priority }) });
  }

  /** 1 when removed, 0 when BullMQ could not (a worker holds its lock) or has no such job. */
  async remove(id: string): Promise<number> {
    return this.ready().remove(id);
  }

  /** Jobs by BullMQ state. */
  async counts(): Promise<Record<string, number>> {
    return this.ready().getJobCounts(...COUNTED_STATES);
  }

  async close(): Promise<void> {
    await closeBullmq(this.queue);
  }

  private ready(): Queue<QueuedJobData> {
    if (!this.usable) {
      throw new StoreUnavailableError(`the queue's Redis connection is ${this.initialized ? this.connection.status : 'not ready yet'}`);
    }
    return this.queue;
  }
}
