/** GET /problems/{code}: what a problem `type` URI stands for. */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { makeProblem, PROBLEM_TYPES, problemTypeUri } from '../../jobs/problems.js';
import { sendProblem } from '../plugins/problems.js';
import { problemResponse, ProblemTypeSchema } from '../schemas/problem.js';
import { jsonResponse } from '../schemas/responses.js';

export const problemTypeRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '/problems/:code',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getProblemType',
        summary: 'Description of a problem type (the `type` of a problem is `/problems/{code}`)',
        description: 'What a problem `type` URI stands for: its code, HTTP status, title and a description. 404 for an unknown code.',
        params: z.object({ code: z.string() }),
        response: {
          200: jsonResponse('The problem type: its code, HTTP status, title and description.', ProblemTypeSchema),
          ...problemResponse(404, 'No problem type with this code (`not-found`).'),
        },
      },
    },
    async (request, reply) => {
      const type = PROBLEM_TYPES.get(request.params.code);
      if (!type) return sendProblem(reply, makeProblem('not-found', `No problem type '${request.params.code}'.`));
      return { type: problemTypeUri(type.code), ...type };
    },
  );
  done();
};
