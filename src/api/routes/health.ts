/** Liveness and readiness. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { makeProblem } from '../../jobs/problems.js';
import type { JobService } from '../../jobs/types.js';
import { sendProblem } from '../plugins/problems.js';
import { problemResponse } from '../schemas/problem.js';
import { jsonResponse } from '../schemas/responses.js';

export const healthRoutes: FastifyPluginAsyncZod<{ jobService: JobService }> = (app, { jobService }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'health',
        summary: 'Liveness: the process serves requests',
        description: 'Answers 200 whenever the process serves HTTP, whether or not Redis is reachable (see /readyz).',
        response: { 200: jsonResponse('The process serves requests.', z.object({ status: z.literal('ok') })) },
      },
    },
    () => Promise.resolve({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'ready',
        summary: 'Readiness: Redis answers',
        description: '200 when Redis answers PING, 503 (`store-unavailable`) when it does not: route traffic elsewhere meanwhile.',
        response: {
          200: jsonResponse('Redis answers: the service can take requests.', z.object({ status: z.literal('ready') })),
          ...problemResponse(503, 'Redis does not answer PING (`store-unavailable`): route traffic elsewhere meanwhile.'),
        },
      },
    },
    async (request, reply) => {
      if (await jobService.isReady()) return { status: 'ready' as const };
      return sendProblem(reply, makeProblem('store-unavailable', 'Redis does not answer PING.', { instance: request.url }));
    },
  );
  return Promise.resolve();
};
