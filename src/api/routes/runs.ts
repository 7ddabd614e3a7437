/** The outputs of one algorithm's run: its trace and its solution. */
import type { FastifyReply } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobService } from '../../jobs/types.js';
import { negotiate } from '../contentNegotiation.js';
import { SOLUTION_MEDIA_TYPES, TRACE_MEDIA_TYPES, solutionBytes, solutionCsv, solutionMatrixMarket, traceCsv } from '../downloads.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { RunColumnQuerySchema, RunParamsSchema, SolutionSchema, TraceSchema } from '../schemas/job.js';
import { problemResponse, problemResponses } from '../schemas/problem.js';

const BAD_RUN = problemResponse(
  400,
  'The id is longer than 64 characters, the algorithm is not one of the six, or `column` is not an integer >= 0 (`invalid-request`).',
);
const BAD_COLUMN = problemResponse(422, '`column` is past the last right-hand side of the job (`column-out-of-range`).');
const NO_SUCH_RUN = problemResponse(
  404,
  "No such job (`job-not-found`: never created, expired, deleted, or another API key's), or the job has no run of this " +
    'algorithm (`run-not-found`: not requested, not reached yet, or the job is an analysis).',
);

const NOT_ACCEPTABLE = (types: readonly string[]): ReturnType<typeof problemResponse<406>> =>
  problemResponse(406, `\`Accept\` admits none of ${types.join(', ')} (\`not-acceptable\`).`);

const csvText = z.string().describe('CSV (RFC 4180) with a header row.');

/** A download: its media type, a file name, and Vary (the answer depends on Accept). */
function download(reply: FastifyReply, type: string, name: string): FastifyReply {
  return reply.type(type).header('content-disposition', `attachment; filename="${name}"`);
}

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
          'TRACE_CAP points. By `Accept`: `application/json` (the default), or `text/csv` (header',
          '`iteration,relativeResidual,relativeError,consensusDistance`, one row per point, an empty cell where the JSON has',
          'null). 400 for an id longer than 64 characters or an unknown algorithm; 404 when the job has no such run; 406 for an',
          '`Accept` that admits neither.',
        ].join(' '),
        params: RunParamsSchema,
        querystring: RunColumnQuerySchema,
        response: {
          200: {
            description: "The run's trace, as recorded so far.",
            content: { 'application/json': { schema: TraceSchema }, 'text/csv': { schema: csvText } },
          },
          ...BAD_RUN,
          ...NO_SUCH_RUN,
          ...BAD_COLUMN,
          ...NOT_ACCEPTABLE(TRACE_MEDIA_TYPES),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const type = negotiate(request.headers.accept, TRACE_MEDIA_TYPES);
      const { id, algorithm } = request.params;
      const { column } = request.query;
      const trace = await jobService.trace(id, algorithm, ownerFilterOf(request), column);
      reply.header('vary', 'Accept');
      const suffix = column > 0 ? `-column${column}` : '';
      if (type === 'text/csv')
        return download(reply, 'text/csv; charset=utf-8', `${id}-${algorithm}${suffix}-trace.csv`).send(traceCsv(trace));
      return reply.type('application/json; charset=utf-8').send({
        ...trace,
        relativeResidual: finiteOrNull(trace.relativeResidual),
        relativeError: trace.relativeError && finiteOrNull(trace.relativeError),
        consensusDistance: trace.consensusDistance && finiteOrNull(trace.consensusDistance),
      });
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
          "The taskmaster's estimate x that the run returned, whatever its status (converged or not). By `Accept`:",
          '`application/json` (the default; null where an entry is not finite); `text/csv` (header `index,x`, one row per entry,',
          'an empty cell where the JSON has null); `application/x-matrix-market` (an n x 1 `array real general` file, 17',
          'significant digits, nan / inf / -inf where not finite); `application/octet-stream` (n little-endian float64, 8 n bytes,',
          'with Content-Length). 400 for an id longer than 64 characters or an unknown algorithm; 404 when the job has no such',
          'run; 406 for an `Accept` that admits none of these.',
        ].join(' '),
        params: RunParamsSchema,
        querystring: RunColumnQuerySchema,
        response: {
          200: {
            description: "The run's solution x.",
            content: {
              'application/json': { schema: SolutionSchema },
              'text/csv': { schema: csvText },
              'application/x-matrix-market': { schema: z.string().describe('A Matrix Market file: x as an n x 1 array.') },
              'application/octet-stream': {
                schema: z.string().meta({ format: 'binary' }).describe('x as n little-endian IEEE 754 float64 values.'),
              },
            },
          },
          ...BAD_RUN,
          ...NO_SUCH_RUN,
          ...BAD_COLUMN,
          ...NOT_ACCEPTABLE(SOLUTION_MEDIA_TYPES),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const type = negotiate(request.headers.accept, SOLUTION_MEDIA_TYPES);
      const { id, algorithm } = request.params;
      const { column } = request.query;
      const x = await jobService.solution(id, algorithm, ownerFilterOf(request), column);
      reply.header('vary', 'Accept');
      const name = `${id}-${algorithm}${column > 0 ? `-column${column}` : ''}-solution`;
      switch (type) {
        case 'text/csv':
          return download(reply, 'text/csv; charset=utf-8', `${name}.csv`).send(solutionCsv(x));
        case 'application/x-matrix-market':
          return download(reply, 'application/x-matrix-market', `${name}.mtx`).send(
            solutionMatrixMarket(x, `solution x of the ${algorithm} run of job ${id}${column > 0 ? `, right-hand side ${column}` : ''}`),
          );
        case 'application/octet-stream':
          return download(reply, 'application/octet-stream', `${name}.f64`).send(solutionBytes(x));
        default:
          return reply.type('application/json; charset=utf-8').send({ algorithm, x: finiteOrNull(x) });
      }
    },
  );
  done();
};
