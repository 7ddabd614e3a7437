/** Liveness and readiness. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { makeProblem } from '../../jobs/problems.js';
import type { JobService } from '../../jobs/types.js';
import { sendProblem } from '../plugins/problems.js';
import { problemResponses } from '../schemas/problem.js';

export const healthRoutes: FastifyPluginAsyncZod<{ jobService: JobService }> = async (app, { jobService }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'health',
        summary: 'Liveness: the process serves requests',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'ready',
        summary: 'Readiness: Redis answers',
        response: { 200: z.object({ status: z.literal('ready') }), ...problemResponses(503) },
      },
    },
    async (request, reply) => {
      if (await jobService.isReady()) return { status: 'ready' as const };
      return sendProblem(reply, makeProblem('store-unavailable', 'Redis does not answer PING.', { instance: request.url }));
    },
  );
};
