/**
 * The operators' view of the queue: bull-board (@bull-board/fastify) at /admin/queues, over the
 * service's BullMQ queue. Read-only unless QUEUE_BOARD_READ_ONLY=false: the service's own documents
 * (the job hashes) are the source of truth, and retrying or removing a BullMQ job behind them is an
 * operator's deliberate choice, not a default. In keys mode the /admin/* guard (src/api/plugins/auth.ts)
 * asks for an admin key before any of these routes runs.
 *
 * The board needs a BullMQ Queue object of its own (it reads job lists and counts through it); it
 * is created here on a connection of its own and closed with the app.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue } from 'bullmq';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../config.js';
import { bullmqConnectionOptions } from '../../jobs/store/redisConnection.js';

export const QUEUE_BOARD_PATH = '/admin/queues';

/** Longest wait for the board's queue connection to close with the app. */
const CLOSE_TIMEOUT_MS = 2000;

export interface QueueBoardOptions {
  config: Config;
}

export const queueBoard: FastifyPluginAsync<QueueBoardOptions> = async (app, { config }) => {
  if (!config.REDIS_URL) {
    app.log.warn('no REDIS_URL: the queue board is not mounted');
    return;
  }
  const queue = new Queue(config.QUEUE_NAME, {
    connection: bullmqConnectionOptions(config.REDIS_URL, 'lss-queue-board'),
    prefix: config.KEY_PREFIX,
  });
  // Redis down: the board's pages answer with errors; the process must not treat it as unhandled.
  queue.on('error', (err: Error) => app.log.debug({ err: err.message }, 'queue board connection error'));

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(queue, { readOnlyMode: config.QUEUE_BOARD_READ_ONLY, allowRetries: !config.QUEUE_BOARD_READ_ONLY })],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Linear systems: queue' } },
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: QUEUE_BOARD_PATH });

  app.addHook('onClose', async () => {
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref());
    await Promise.race([queue.close().catch(() => undefined), timeout]);
    await queue.disconnect().catch(() => undefined);
  });
};
