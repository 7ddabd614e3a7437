/**
 * What /readyz and /metrics ask of Redis: whether it answers (and the queue can be used), and the
 * queue depth by state. Both answer at once when Redis is unreachable.
 */
import type { Redis } from 'ioredis';
import { storeCall, withTimeout } from '../store/redisConnection.js';
import type { JobQueue } from './jobQueue.js';

/** Bound on the readiness PING of a connection that is up but does not answer. */
const READY_TIMEOUT_MS = 2000;

export class ServiceHealth {
  constructor(
    private readonly commands: Redis,
    private readonly queue: JobQueue,
  ) {}

  /** Redis answers PING on the store's connection, and the queue's connection is ready. */
  async isReady(): Promise<boolean> {
    try {
      return this.queue.usable && (await withTimeout(this.commands.ping(), READY_TIMEOUT_MS)) === 'PONG';
    } catch {
      return false;
    }
  }

  /** Throws StoreUnavailableError when Redis is unreachable. */
  queueCounts(): Promise<Record<string, number>> {
    return storeCall(() => this.queue.counts());
  }
}
