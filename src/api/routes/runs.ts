/** The outputs of one algorithm's run: its trace and its solution. */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { JobService } from '../../jobs/types.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { RunParamsSchema, SolutionSchema, TraceSchema } from '../schemas/job.js';
import { problemResponses } from '../schemas/problem.js';

/** JSON has no NaN or Infinity (a diverged run can produce them). */
function finiteOrNull(values: ArrayLike<number>): (number | null)[] {
  return Array.from(values, (v) => (Number.isFinite(v) ? v : null));
}

export const runRoutes: FastifyPluginCallbackZod<{ jobService: JobService }> = (app, { jobService }, done) => {
  app.get(
    '/jobs/:id/runs/:algorithm/trace',
    {
      schema: {
        tags: ['runs'],
        operationId: 'getRunTrace',
        summary: "Per-iteration trace of one algorithm's run",
        description: [
          'Relative residual (and error, when the true solution is known) per recorded iteration, down-sampled to at most',
          'TRACE_CAP points. 400 for an id longer than 64 characters or an unknown algorithm; 404 when the job has no such run.',
        ].join(' '),
        params: RunParamsSchema,
        response: { 200: TraceSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const trace = await jobService.trace(request.params.id, request.params.algorithm, ownerFilterOf(request));
      return {
        ...trace,
        relativeResidual: finiteOrNull(trace.relativeResidual),
        relativeError: trace.relativeError && finiteOrNull(trace.relativeError),
        consensusDistance: trace.consensusDistance && finiteOrNull(trace.consensusDistance),
      };
    },
  );

  app.get(
    '/jobs/:id/runs/:algorithm/solution',
    {
      schema: {
        tags: ['runs'],
        operationId: 'getRunSolution',
        summary: "The solution of one algorithm's run",
        description: [
          "The taskmaster's estimate x that the run returned, whatever its status (converged or not).",
          '400 for an id longer than 64 characters or an unknown algorithm; 404 when the job has no such run.',
        ].join(' '),
        params: RunParamsSchema,
        response: { 200: SolutionSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const x = await jobService.solution(request.params.id, request.params.algorithm, ownerFilterOf(request));
      return { algorithm: request.params.algorithm, x: finiteOrNull(x) };
    },
  );
  done();
};
