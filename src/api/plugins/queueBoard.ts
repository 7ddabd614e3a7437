/**
 * The operators' view of the queues: bull-board (@bull-board/fastify) at /admin/queues, over the
 * service's BullMQ queues. Read-only unless QUEUE_BOARD_READ_ONLY=false: the service's own documents
 * (the job hashes) are the source of truth, and retrying or removing a BullMQ job behind them is an
 * operator's deliberate choice, not a default. In keys mode the /admin/* guard (src/api/plugins/auth.ts)
 * asks for an admin key before any of these routes runs.
 *
 * The board needs BullMQ Queue objects of its own (it reads job lists and counts through them): the
 * jobs' two queues (../../jobs/queuedJob.ts) and the studies' two, created here and closed with the app.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue } from 'bullmq';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../config.js';
import { jobQueueNames } from '../../jobs/queuedJob.js';
import { studyQueueNames } from '../../jobs/studies/studyQueues.js';
import { bullmqConnectionOptions, closeBullmq } from '../../jobs/store/redisConnection.js';

export const QUEUE_BOARD_PATH = '/admin/queues';

export interface QueueBoardOptions {
  config: Config;
}

export const queueBoard: FastifyPluginAsync<QueueBoardOptions> = async (app, { config }) => {
  const redisUrl = config.REDIS_URL;
  if (!redisUrl) {
    app.log.warn('no REDIS_URL: the queue board is not mounted');
    return;
  }
  // The jobs' two queues (every job, the small-job slots') and the studies' two (parents and their chunks).
  const { parents, chunks } = studyQueueNames(config);
  const { main, small } = jobQueueNames(config);
  const queues = [main, small, parents, chunks].map((name) => {
    const queue = new Queue(name, {
      connection: bullmqConnectionOptions(redisUrl, 'lss-queue-board'),
      prefix: config.KEY_PREFIX,
    });
    // Redis down: the board's pages answer with errors; the process must not treat it as unhandled.
    queue.on('error', (err: Error) => app.log.debug({ err: err.message, queue: name }, 'queue board connection error'));
    return queue;
  });

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: queues.map(
      (queue) => new BullMQAdapter(queue, { readOnlyMode: config.QUEUE_BOARD_READ_ONLY, allowRetries: !config.QUEUE_BOARD_READ_ONLY }),
    ),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Linear systems: queues' } },
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: QUEUE_BOARD_PATH });

  app.addHook('onClose', async () => {
    // A queue whose connection never became ready (Redis down when the app was built) can wait forever
    // in close() and in disconnect(): neither may hold the server's close (closeBullmq bounds it).
    await Promise.all(queues.map((queue) => closeBullmq(queue)));
  });
};
