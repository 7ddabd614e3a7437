/**
 * The callbacks' delivery, next to every job worker (../worker.ts starts it, so it runs wherever jobs
 * run):
 *  - the outbox drainer: jobs and studies that asked for a callback are pushed to an outbox by the
 *    script that ends them (../store/scripts.ts, ../studies/studyStore.ts); this moves each entry into
 *    the BullMQ queue `<QUEUE_NAME>-notify` as a job whose id is the resource's (`job-<id>`,
 *    `study-<id>`), so that it is queued once however often it is pushed or moved;
 *  - the delivery worker: one attempt per BullMQ attempt (./deliver.ts), recorded in the resource's
 *    `deliveries`; a failed one is retried after WEBHOOK_BACKOFF_MS, doubling up to
 *    WEBHOOK_MAX_BACKOFF_MS, until WEBHOOK_RETRY_SECONDS after the first; a refused address is not
 *    retried. A resource deleted or expired meanwhile ends its delivery.
 */
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { bullmqConnectionOptions, closeBullmq, createResilientConnection } from '../store/redisConnection.js';
import type { WebhookDelivery, WebhookTarget } from '../types.js';
import { deliver } from './deliver.js';
import { notifyInflightKey, notifyOutboxKey, notifyQueueName, type NotifiedKind } from './notifyKeys.js';

/** Attempts listed on a resource (the oldest are dropped past this). */
const KEEP_DELIVERIES = 100;
/** A BullMQ ceiling never reached: the retry window (WEBHOOK_RETRY_SECONDS) ends the retries. */
const MAX_ATTEMPTS = 100_000;
/** How long one wait on the outbox blocks (the drainer notices a close within this). */
const OUTBOX_WAIT_SECONDS = 1;

export interface NotifyData {
  kind: NotifiedKind;
  id: string;
}

/** What the deliveries read and write of jobs and studies. */
export interface NotifiedResources {
  /** The callback and the body to deliver; null when the resource is gone or asked for none. */
  webhookOf(kind: NotifiedKind, id: string): Promise<{ target: WebhookTarget; body: string } | null>;
  recordDelivery(kind: NotifiedKind, id: string, delivery: WebhookDelivery, keep: number): Promise<void>;
}

export interface NotifyWorker {
  /** Stops taking attempts at once; one under way gets `timeoutMs` to end (else it is attempted again after a restart). */
  close(timeoutMs?: number): Promise<void>;
}

/** A failed attempt to retry after `delayMs` (the backoff strategy reads it). */
class RetryDelivery extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'RetryDelivery';
  }
}

/** The delay after failed attempt `attempt` (1-based). */
export function retryDelayMs(config: Pick<Config, 'WEBHOOK_BACKOFF_MS' | 'WEBHOOK_MAX_BACKOFF_MS'>, attempt: number): number {
  return Math.min(config.WEBHOOK_MAX_BACKOFF_MS, config.WEBHOOK_BACKOFF_MS * 2 ** Math.min(attempt - 1, 40));
}

export async function startNotifyWorker(
  config: Config & { REDIS_URL: string },
  resources: NotifiedResources,
  logger: Logger,
): Promise<NotifyWorker> {
  const log = logger.child({ component: 'notify' });
  const name = notifyQueueName(config);
  const retention = { age: Math.max(config.WEBHOOK_RETRY_SECONDS, config.JOB_TTL_SECONDS) };
  const queue = new Queue<NotifyData>(name, {
    connection: bullmqConnectionOptions(config.REDIS_URL, 'lss-notify-queue'),
    prefix: config.KEY_PREFIX,
  });
  queue.on('error', (err: Error) => log.debug({ err: err.message }, 'notify queue error'));

  const worker = new Worker<NotifyData>(
    name,
    async (job: Job<NotifyData>) => {
      const { kind, id } = job.data;
      const found = await resources.webhookOf(kind, id);
      if (!found) {
        log.info({ kind, id, attempt: job.attemptsMade + 1 }, `callback dropped: the ${kind} was deleted or has expired`);
        return 'gone';
      }
      const attempt = job.attemptsMade + 1;
      const outcome = await deliver(
        { url: found.target.url, secret: found.target.secret, messageId: `msg_${kind}_${id}`, body: found.body },
        { allowedHosts: config.WEBHOOK_ALLOWED_HOSTS, timeoutMs: config.WEBHOOK_TIMEOUT_MS },
      );
      const now = Date.now();
      const at = new Date(now).toISOString();
      if (outcome.delivered) {
        await resources.recordDelivery(
          kind,
          id,
          { attempt, at, statusCode: outcome.statusCode, error: null, nextRetryAt: null },
          KEEP_DELIVERIES,
        );
        log.info({ kind, id, attempt, statusCode: outcome.statusCode }, 'callback delivered');
        return 'delivered';
      }
      const delayMs = retryDelayMs(config, attempt);
      // The window counts from the first attempt, queued when the resource ended.
      const giveUp = outcome.refused || now + delayMs > job.timestamp + config.WEBHOOK_RETRY_SECONDS * 1000;
      const nextRetryAt = giveUp ? null : new Date(now + delayMs).toISOString();
      await resources.recordDelivery(
        kind,
        id,
        { attempt, at, statusCode: outcome.statusCode, error: outcome.error, nextRetryAt },
        KEEP_DELIVERIES,
      );
      const fields = { kind, id, attempt, statusCode: outcome.statusCode, reason: outcome.error, nextRetryAt };
      if (!giveUp) log.warn(fields, 'callback not delivered; retried at nextRetryAt');
      else if (outcome.refused) log.error(fields, 'callback refused by the address policy; not retried');
      else log.error({ ...fields, retrySeconds: config.WEBHOOK_RETRY_SECONDS }, 'callback given up: WEBHOOK_RETRY_SECONDS is over');
      if (giveUp) throw new UnrecoverableError(outcome.error);
      throw new RetryDelivery(outcome.error, delayMs);
    },
    {
      connection: bullmqConnectionOptions(config.REDIS_URL, 'lss-notify-worker'),
      prefix: config.KEY_PREFIX,
      concurrency: config.WEBHOOK_CONCURRENCY,
      // An attempt cut short by a stop (its process killed, or a shutdown's grace over) stalls, and is attempted again
      // once its lock expires, however often that happens: BullMQ's default (1) failed it for good at the second, unsaid.
      maxStalledCount: MAX_ATTEMPTS,
      lockDuration: config.LOCK_DURATION_MS,
      stalledInterval: config.STALLED_INTERVAL_MS,
      settings: {
        backoffStrategy: (_attempts: number, _type?: string, error?: Error) => (error instanceof RetryDelivery ? error.delayMs : 0),
      },
    },
  );
  worker.on('error', (err) => log.error({ err }, 'notify worker error'));

  // The outbox: blocking waits on a connection of their own.
  const outbox = notifyOutboxKey(config.KEY_PREFIX);
  const inflight = notifyInflightKey(config.KEY_PREFIX);
  const blocking: Redis = createResilientConnection(config.REDIS_URL, 'lss-notify-outbox');
  blocking.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  let closed = false;
  const drained = (async () => {
    // Entries a stopped drainer was moving (another running drainer's are queued once anyway: the ids are the resources').
    while (!closed && (await blocking.lmove(inflight, outbox, 'LEFT', 'RIGHT').catch(() => null)) !== null);
    while (!closed) {
      try {
        const member = await blocking.blmove(outbox, inflight, 'LEFT', 'RIGHT', OUTBOX_WAIT_SECONDS);
        if (member === null) continue;
        const colon = member.indexOf(':');
        const data: NotifyData = { kind: member.slice(0, colon) as NotifiedKind, id: member.slice(colon + 1) };
        await queue.add('notify', data, {
          jobId: `${data.kind}-${data.id}`,
          attempts: MAX_ATTEMPTS,
          backoff: { type: 'webhook' },
          removeOnComplete: retention,
          removeOnFail: retention,
        });
        await blocking.lrem(inflight, 1, member);
      } catch (err) {
        if (closed) break;
        log.warn({ err }, 'could not move a callback from the outbox to its queue; trying again');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  })();

  await worker.waitUntilReady();
  log.info({ queue: name, allowedHosts: config.WEBHOOK_ALLOWED_HOSTS }, 'callback delivery ready');
  return {
    async close(timeoutMs?: number) {
      // Each step bounded, whatever Redis does (the shutdown's budget, ../store/redisConnection.ts).
      closed = true;
      await closeBullmq(worker, timeoutMs);
      blocking.disconnect();
      await drained;
      await closeBullmq(queue);
    },
  };
}
