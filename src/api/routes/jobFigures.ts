/** Pictures of a job: its partition over A's sparsity pattern (an advise job's: any candidate's). */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AdviceNotReadyError, CandidateNotFoundError } from '../../jobs/errors.js';
import type { Job, JobService } from '../../jobs/types.js';
import { PARTITION_STRATEGIES } from '../../solvers/partitioning/advisor.js';
import { renderPartitionFigure } from '../figures/partitionFigure.js';
import { ownerFilterOf } from '../plugins/auth.js';
import { RequestFieldError } from '../requestFields.js';
import { JobIdParamsSchema, PartitionFigureQuerySchema } from '../schemas/job.js';
import { problemResponse, problemResponses } from '../schemas/problem.js';
import { BAD_ID } from './jobs.js';

/** The partition a request names: what the title calls it, its kappa(S) when known, and its assignment when not the job's own. */
interface ChosenPartition {
  name: string;
  strategy: string;
  kappaS: number | null;
  assignment: Int32Array | null;
}

function choosePartition(job: Job, strategy: string | undefined): ChosenPartition {
  const advice = job.result?.advice;
  if (strategy === undefined || strategy === 'given') {
    const kappaS = advice?.candidates.find((c) => c.strategy === 'given')?.kappaS ?? job.result?.analysis?.conditioning.kappaS ?? null;
    return { name: job.type === 'advise' ? 'Given partition' : "The job's partition", strategy: 'given', kappaS, assignment: null };
  }
  const named = [...PARTITION_STRATEGIES, 'best'];
  const refuse = (strategies: readonly string[]): RequestFieldError =>
    new RequestFieldError(new CandidateNotFoundError(job.id, strategy, strategies), '/strategy', 'query');
  if (job.type !== 'advise') throw refuse(['given']);
  if (!named.includes(strategy)) throw refuse(named);
  if (job.status !== 'succeeded' || !advice) throw new AdviceNotReadyError(job.id, job.status);
  const wanted = strategy === 'best' ? advice.best : strategy;
  const candidate = advice.candidates.find((c) => c.strategy === wanted);
  if (!candidate) throw refuse([...advice.candidates.map((c) => c.strategy), 'best']);
  return {
    name: strategy === 'best' ? `Best partition (${candidate.strategy})` : `Partition ${candidate.strategy}`,
    strategy: candidate.strategy,
    kappaS: candidate.kappaS,
    assignment: Int32Array.from(candidate.assignment),
  };
}

export const jobFigureRoutes: FastifyPluginCallbackZod<{ jobService: JobService }> = (app, { jobService }, done) => {
  app.get(
    '/jobs/:id/figures/partition.svg',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'getPartitionFigure',
        summary: "A picture of the job's partition: A's sparsity pattern, each row in its machine's colour (SVG)",
        description: [
          'Each nonzero of A drawn in the colour of the machine holding its row, downsampled to at most 256 x 256 cells',
          '(a cell in the colour of the machine holding most of its nonzeros, white when it has none), so that the picture',
          'stays small for any n; a strip beside it colours each band of rows by machine. The title names the partition and',
          'its kappa(S). `order=machine` groups the rows by machine and the columns by the machine holding most of their',
          "nonzeros: a partition whose machines share no columns (kappa(S) = 1) shows as diagonal blocks. An advise job's",
          'candidates are drawn with `strategy` (`best`: the advised one). 400 for an id longer than 64 characters or a bad',
          "`order`; 404 for no such job (or its stored matrix deleted); 409 for an advise job's candidate before the job has",
          'succeeded; 422 for a `strategy` the job does not have.',
        ].join(' '),
        params: JobIdParamsSchema,
        querystring: PartitionFigureQuerySchema,
        response: {
          200: { description: 'An SVG image.', content: { 'image/svg+xml': { schema: z.string() } } },
          ...BAD_ID,
          ...problemResponse(
            404,
            "No such job (`job-not-found`): never created, expired, deleted, or another API key's; or the stored matrix it " +
              'names was deleted (`matrix-not-found`).',
          ),
          ...problemResponse(
            409,
            'The advise job has not succeeded (`advice-not-ready`): its candidates exist once it has (its given partition at once).',
          ),
          ...problemResponse(
            422,
            'The job has no partition of this `strategy` (`candidate-not-found`, at /strategy in the query, naming those it has).',
          ),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      const owner = ownerFilterOf(request);
      const job = await jobService.get(request.params.id, owner);
      const chosen = choosePartition(job, request.query.strategy);
      const { matrix, assignment } = await jobService.matrix(job.id, owner);
      const svg = renderPartitionFigure({
        source: matrix,
        assignment: chosen.assignment ?? assignment,
        m: job.m,
        order: request.query.order,
        name: chosen.name,
        strategy: chosen.strategy,
        kappaS: chosen.kappaS,
      });
      return reply.type('image/svg+xml; charset=utf-8').send(svg);
    },
  );
  done();
};
