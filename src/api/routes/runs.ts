/** The outputs of one algorithm's run: its trace and its solution. */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { JobService } from '../../jobs/types.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { RunParamsSchema, SolutionSchema, TraceSchema } from '../schemas/job.js';
import { problemResponse, problemResponses } from '../schemas/problem.js';
import { jsonResponse } from '../schemas/responses.js';

const BAD_RUN = problemResponse(400, 'The id is longer than 64 characters, or the algorithm is not one of the six (`invalid-request`).');
const NO_SUCH_RUN = problemResponse(
  404,
  "No such job (`job-not-found`: never created, expired, deleted, or another API key's), or the job has no run of this " +
    'algorithm (`run-not-found`: not requested, not reached yet, or the job is an analysis).',
);

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
        response: {
          200: jsonResponse("The run's trace, as recorded so far.", TraceSchema),
          ...BAD_RUN,
          ...NO_SUCH_RUN,
          ...problemResponses(503),
        },
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
        response: {
          200: jsonResponse("The run's solution x (null where an entry is not finite).", SolutionSchema),
          ...BAD_RUN,
          ...NO_SUCH_RUN,
          ...problemResponses(503),
        },
      },
    },
    async (request) => {
      const x = await jobService.solution(request.params.id, request.params.algorithm, ownerFilterOf(request));
      return { algorithm: request.params.algorithm, x: finiteOrNull(x) };
    },
  );
  done();
};
