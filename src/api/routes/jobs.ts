/** /v1/jobs: create, list, read, cancel, delete. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { JobService } from '../../jobs/types.js';
import { toJobSpec } from '../jobSpec.js';
import { JobIdParamsSchema, JobPageSchema, JobSchema, ListJobsQuerySchema } from '../schemas/job.js';
import { CreateJobRequestSchema } from '../schemas/jobRequest.js';
import { problemResponses } from '../schemas/problem.js';

export interface JobRoutesOptions {
  jobService: JobService;
  config: Config;
}

export const jobRoutes: FastifyPluginAsyncZod<JobRoutesOptions> = async (app, { jobService, config }) => {
  app.post(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'createJob',
        summary: 'Submit an analysis or a solve',
        description:
          'Validates the problem (400 for schema violations, 422 for invalid problems, 413 when too large), stores it and queues the job. Always answers 202 with the job and its Location.',
        body: CreateJobRequestSchema,
        response: {
          202: JobSchema.describe('The job, queued.'),
          ...problemResponses(400, 413, 415, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const spec = toJobSpec(request.body, config);
      const job = await jobService.create(spec);
      request.log.info({ jobId: job.id, type: job.type, n: job.n, m: job.m }, 'job created');
      return reply.code(202).header('location', `/v1/jobs/${job.id}`).send(job);
    },
  );

  app.get(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'listJobs',
        summary: 'List jobs, newest first',
        description: 'Pages of job summaries; pass `nextCursor` as `cursor` for the next page. Optional status filter.',
        querystring: ListJobsQuerySchema,
        response: { 200: JobPageSchema, ...problemResponses(400, 503) },
      },
    },
    async (request) => jobService.list(request.query),
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'getJob',
        summary: 'A job: status, progress, result or error',
        params: JobIdParamsSchema,
        response: { 200: JobSchema, ...problemResponses(404, 503) },
      },
    },
    async (request) => jobService.get(request.params.id),
  );

  app.post(
    '/jobs/:id/cancel',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'cancelJob',
        summary: 'Cancel a job',
        description:
          'A queued job is cancelled at once; a running one stops within one time slice of its solver (runs finished so far are kept). A finished job is returned unchanged.',
        params: JobIdParamsSchema,
        response: { 200: JobSchema, ...problemResponses(404, 503) },
      },
    },
    async (request) => jobService.cancel(request.params.id),
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        operationId: 'deleteJob',
        summary: 'Delete a finished job and everything stored for it',
        params: JobIdParamsSchema,
        response: { 204: z.undefined().describe('Deleted.'), ...problemResponses(404, 409, 503) },
      },
    },
    async (request, reply) => {
      await jobService.remove(request.params.id);
      return reply.code(204).send();
    },
  );
};
